"""What an endpoint collects of its traffic: every request and its answer, masked, off the
request path.

A scoring process hands each request it answered (or failed) to a `Collection`, which returns at
once: a feeder thread passes it, as a JSON line, to a writer process (`python -m
serving.collect`, niced), which masks the request and the answer together (a masker the caller
names, `screening.outputs:traffic_masker`: the screen's recognizers, so a value the screen would
redact never reaches a record) and writes it to its sinks. Masking is pure-Python regex work, ~1
to 3 ms a text: in a thread of the scoring process it would hold the GIL the event loop and the
batcher need (measured: concurrent requests on the local endpoint went from 27 to 12 per second),
so it runs in a process of its own that the OS schedules after the scoring one. The writer never
imports torch or transformers (presidio's optional transformers engine would): it loads in ~1.5 s
of CPU and ~180 MB. Nothing is written unmasked: with no masker, or one that fails to load,
nothing is collected (`failed` says why). When the writer falls behind, the queue
(`max_pending` records) is full and further records are dropped and counted, never waited for.

Sinks (`--sink` of the writer):
- `jsonl:<folder>:<max_bytes>:<keep>` (`JsonlSink`): the local endpoint's records, one JSON
  object a line, in `{endpoint folder}/collected/requests.jsonl` (mode 0600), rotated at
  `max_bytes` into `requests.1.jsonl` ... `requests.{keep}.jsonl`, so the folder never holds more
  than `(keep + 1) * max_bytes`. `tunegate endpoint traffic` reads them (`read_records`,
  `summarise`).
- `mdc` (`AzureMLSink`): Azure ML's data collector (`azureml-ai-monitoring`'s `Collector`),
  the deployment's `model_inputs` and `model_outputs` collections (`data_collector` of the
  deployment), rows correlated by request; the collector sends them to the deployment's sidecar.
  Its lines have no field of tunegate's own, so how a request was routed rides in the
  correlation id (`correlation_id`, read back by `routed_of`): the bare id for a user's request,
  `named-<id>` for one that named its deployment; the rows stay the request's and answers' own,
  which Azure ML's model monitoring reads.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import importlib.util
import json
import logging
import os
import queue
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from serving.metrics import percentile

log = logging.getLogger(__name__)
ROOT = Path(__file__).resolve().parents[1]  # where `serving` is importable from
COLLECTED = "collected"  # in an endpoint's folder
RECORDS = "requests.jsonl"
INPUTS, OUTPUTS = "model_inputs", "model_outputs"  # Azure ML's collection names
WRITER_NICE = 10
AZUREML_SINK = "mdc"  # the `--sink` of Azure ML's model data collector (AzureMLSink)
VERSION_ENV = "TUNEGATE_VERSION"  # an Azure ML deployment's version label (`name:version`)

ROUTED = ("traffic", "named", "mirror")  # how a request reached its deployment (Exchange.routed)

Masker = Callable[[Any], Any]  # a JSON value -> the same value with personal data masked


@dataclass
class Exchange:
    """One scoring request and what answered it, as collected (masked before it is written)."""

    deployment: str | None
    version: str | None
    status: int  # the HTTP status the client got
    latency_ms: float
    inputs: list[Any]  # the request's records ([] when the body could not be read)
    outputs: list[Any] | None  # the answers, one per record; None when it failed
    error: str | None = None  # why it failed (the message the client got)
    time: str = field(default_factory=lambda: datetime.now(UTC).isoformat(timespec="milliseconds"))
    id: str = field(default_factory=lambda: uuid.uuid4().hex)
    # how it reached the deployment: "traffic" (the endpoint's weights chose it: a user's
    # request), "named" (the request named the deployment in its header: a smoke test, a probe),
    # "mirror" (a copy of a live request; its answer went to no one)
    routed: str = "traffic"


class Sink(Protocol):
    def write(self, exchange: Exchange) -> None: ...
    def close(self) -> None: ...


def jsonl_sink(folder: Path, max_bytes: int, keep: int) -> str:
    """The `--sink` of a `JsonlSink`."""
    return f"jsonl:{folder}:{max_bytes}:{keep}"


class Collection:
    """The scoring process's side: `submit` queues an exchange and returns; a feeder thread
    hands it to the writer process, started here with the masker named `masker`
    ("module:function", the function making the masking function) and `sinks`."""

    def __init__(self, masker: str, sinks: list[str], max_pending: int = 1000) -> None:
        self.dropped = 0  # records not collected: the queue was full, or the writer gone
        self._queue: queue.Queue[Exchange | None] = queue.Queue(max_pending)
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
        }
        command = [sys.executable, "-m", "serving.collect", "--masker", masker]
        for sink in sinks:
            command += ["--sink", sink]
        self._writer = subprocess.Popen(command, stdin=subprocess.PIPE, env=env)
        self._feeder = threading.Thread(target=self._feed, name="collect-feeder", daemon=True)
        self._feeder.start()

    @property
    def failed(self) -> str | None:
        """Why nothing is collected any more (the writer exited), or None."""
        code = self._writer.poll()
        return None if code in (None, 0) else f"the collection writer exited with code {code}"

    def submit(self, exchange: Exchange) -> bool:
        """Queue `exchange`; False (and counted in `dropped`) when the queue is full."""
        try:
            self._queue.put_nowait(exchange)
        except queue.Full:
            self.dropped += 1
            return False
        return True

    def close(self, timeout: float = 30.0) -> None:
        """Hand over what is queued, then let the writer finish it and exit."""
        self._queue.put(None)
        self._feeder.join(timeout)
        try:
            self._writer.wait(timeout)
        except subprocess.TimeoutExpired:
            self._writer.kill()
            self._writer.wait()

    def _feed(self) -> None:
        stdin = self._writer.stdin
        assert stdin is not None
        while (exchange := self._queue.get()) is not None:
            try:
                stdin.write(json.dumps(asdict(exchange), ensure_ascii=False).encode() + b"\n")
                stdin.flush()
            except (BrokenPipeError, OSError):
                self.dropped += 1  # the writer is gone (its log says why)
        with contextlib.suppress(BrokenPipeError, OSError):
            stdin.close()


def _load_masker(name: str) -> Masker:
    module, _, function = name.partition(":")
    return getattr(importlib.import_module(module), function)()


def mask_exchange(mask: Masker, exchange: Exchange) -> Exchange:
    """`exchange` with its request, answers and error masked together (a value found in one is
    masked in all)."""
    masked = mask({"inputs": exchange.inputs, "outputs": exchange.outputs, "error": exchange.error})
    return Exchange(
        exchange.deployment,
        exchange.version,
        exchange.status,
        round(exchange.latency_ms, 3),
        masked["inputs"],
        masked["outputs"],
        masked["error"],
        exchange.time,
        exchange.id,
        exchange.routed,
    )


def _sink(spec: str) -> Sink:
    kind, _, rest = spec.partition(":")
    if kind == AZUREML_SINK:
        return AzureMLSink()
    if kind == "jsonl":
        folder, max_bytes, keep = rest.rsplit(":", 2)
        return JsonlSink(Path(folder), int(max_bytes), int(keep))
    raise ValueError(f"unknown sink {spec!r}: jsonl:<folder>:<max_bytes>:<keep> or {AZUREML_SINK}")


def writer(argv: list[str] | None = None) -> int:
    """The writer process: exchanges as JSON lines on stdin, masked, written to the sinks."""
    parser = argparse.ArgumentParser(prog="python -m serving.collect")
    parser.add_argument("--masker", required=True, help="module:function making the masker")
    parser.add_argument("--sink", action="append", default=[], help="where records go")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s collect %(levelname)s %(message)s")
    os.nice(WRITER_NICE)  # the scoring process first
    for heavy in ("torch", "transformers"):  # presidio imports them when present; unused here
        sys.modules.setdefault(heavy, None)  # type: ignore[arg-type]
    try:
        mask = _load_masker(args.masker)
    except Exception as exc:  # noqa: BLE001 (any failure: collect nothing, say why)
        log.error(
            "nothing is collected: the masker %s did not load (%s: %s)",
            args.masker,
            type(exc).__name__,
            exc,
        )
        return 3
    sinks = [_sink(s) for s in args.sink]
    for line in sys.stdin.buffer:
        try:
            exchange = mask_exchange(mask, Exchange(**json.loads(line)))
        except Exception:  # a record that cannot be read or masked is not written
            log.warning("a collected record could not be masked; not written", exc_info=True)
            continue
        for sink in sinks:
            try:
                sink.write(exchange)
            except Exception:  # a sink's failure never stops the others
                log.warning("collecting to %s failed", type(sink).__name__, exc_info=True)
    for sink in sinks:
        sink.close()
    return 0


class JsonlSink:
    """Masked exchanges as JSON lines in `folder`, rotated at `max_bytes`, `keep` old files."""

    def __init__(self, folder: Path, max_bytes: int = 8 * 1024 * 1024, keep: int = 3) -> None:
        self.folder, self.max_bytes, self.keep = folder, max_bytes, keep
        self.path = folder / RECORDS

    def write(self, exchange: Exchange) -> None:
        line = (json.dumps(asdict(exchange), ensure_ascii=False) + "\n").encode()
        self.folder.mkdir(parents=True, exist_ok=True)
        size = self.path.stat().st_size if self.path.exists() else 0
        if size and size + len(line) > self.max_bytes:
            self._rotate()
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        with os.fdopen(fd, "ab") as f:
            f.write(line)

    def _rotate(self) -> None:
        oldest = self.folder / f"requests.{self.keep}.jsonl"
        oldest.unlink(missing_ok=True)
        for i in range(self.keep - 1, 0, -1):
            older = self.folder / f"requests.{i}.jsonl"
            if older.exists():
                older.rename(self.folder / f"requests.{i + 1}.jsonl")
        if self.keep:
            self.path.rename(self.folder / "requests.1.jsonl")
        else:
            self.path.unlink()

    def close(self) -> None:
        """Nothing held open: every write opens and closes the file."""


class AzureMLSink:
    """Azure ML's data collector: each exchange's records in `model_inputs`, its answers in
    `model_outputs` (one row per record), under one correlation id (the exchange's id) and time
    (when it was answered), labelled with the deployment's version (`VERSION_ENV`, the
    collector's `modelversion`); tasks/monitor_azure.py reads them back. `available()` says
    whether it can run."""

    def __init__(self) -> None:
        from azureml.ai.monitoring import Collector
        from azureml.ai.monitoring.init import init

        # before the first Collector, which would start the SDK with the version "default"
        init(model_version=os.environ.get(VERSION_ENV) or None)

        reported: set[str] = set()

        def report(exc: Exception) -> None:  # once per kind: it is called for every record
            if str(exc) not in reported:
                reported.add(str(exc))
                log.warning("Azure ML data collector: %s", exc)

        self.inputs = Collector(name=INPUTS, on_error=report)
        self.outputs = Collector(name=OUTPUTS, on_error=report)

    @staticmethod
    def available() -> bool:
        try:
            return importlib.util.find_spec("azureml.ai.monitoring") is not None
        except ModuleNotFoundError:
            return False

    def write(self, exchange: Exchange) -> None:
        import pandas as pd
        from azureml.ai.monitoring.context import BasicCorrelationContext

        at = int(datetime.fromisoformat(exchange.time).timestamp())
        context = BasicCorrelationContext(id=correlation_id(exchange), timestamp=at)
        self.inputs.collect(pd.DataFrame(_rows(exchange.inputs)), context)
        if exchange.outputs is not None:
            self.outputs.collect(pd.DataFrame(_rows(exchange.outputs)), context)

    def close(self) -> None:
        """Send what the collector has queued, then stop its worker."""
        from azureml.ai.monitoring.init import teardown

        teardown(wait_for_flush=True)


def correlation_id(exchange: Exchange) -> str:
    """The id an exchange is collected under on Azure ML: its own for a user's request, with
    how it was routed in front otherwise (`named-<id>`), as `routed_of` reads it back."""
    return exchange.id if exchange.routed == "traffic" else f"{exchange.routed}-{exchange.id}"


def routed_of(correlation: str) -> str:
    """How the request collected under `correlation` was routed (`correlation_id`)."""
    prefix, dash, _ = correlation.partition("-")
    return prefix if dash and prefix in ROUTED else "traffic"


def _rows(values: list[Any]) -> list[dict[str, Any]]:
    return [v if isinstance(v, dict) else {"value": v} for v in values]


# reading what was collected


def collected_files(folder: Path) -> list[Path]:
    """The record files of an endpoint's `collected/` folder, oldest first."""
    rotated = sorted(folder.glob("requests.*.jsonl"), key=lambda p: -int(p.name.split(".")[1]))
    return [*rotated, *([folder / RECORDS] if (folder / RECORDS).exists() else [])]


def read_records(folder: Path) -> Iterator[dict[str, Any]]:
    """Every collected record of `folder`, oldest first (a torn last line is skipped)."""
    for path in collected_files(folder):
        with path.open(encoding="utf-8") as f:
            for line in f:
                try:
                    yield json.loads(line)
                except json.JSONDecodeError:
                    continue


@dataclass
class TrafficSummary:
    """What one deployment (and version) answered, from its collected records."""

    deployment: str
    version: str | None
    requests: int = 0
    client_errors: int = 0  # 4xx: the request was refused
    errors: int = 0  # 5xx: the model failed or did not answer in time
    latency_ms: dict[str, float | None] = field(default_factory=dict)  # p50, p95, p99 of 2xx
    first: str | None = None
    last: str | None = None
    examples: list[dict[str, Any]] = field(default_factory=list)  # the latest, masked


def summarise(records: Iterator[dict[str, Any]], examples: int = 3) -> list[TrafficSummary]:
    """Per (deployment, version): requests, refusals, errors, latency percentiles of the
    answered ones, the time span, and the `examples` latest records (already masked)."""
    groups: dict[tuple[str, str | None], TrafficSummary] = {}
    latencies: dict[tuple[str, str | None], list[float]] = {}
    for r in records:
        key = (r.get("deployment") or "(none)", r.get("version"))
        s = groups.setdefault(key, TrafficSummary(*key))
        s.requests += 1
        status = int(r.get("status", 0))
        s.client_errors += 400 <= status < 500
        s.errors += status >= 500
        if status < 400 and r.get("latency_ms") is not None:  # Azure ML's: not collected
            latencies.setdefault(key, []).append(float(r["latency_ms"]))
        s.first = s.first or r.get("time")
        s.last = r.get("time")
        s.examples = [*s.examples, r][-examples:] if examples else []
    for key, s in groups.items():
        values = sorted(latencies.get(key, []))
        s.latency_ms = {f"p{q}": percentile(values, q) for q in (50, 95, 99)}
    return [groups[k] for k in sorted(groups, key=lambda k: (k[0], k[1] or ""))]


def ms_since(started: float) -> float:
    return (time.perf_counter() - started) * 1000


if __name__ == "__main__":
    sys.exit(writer())


def answer_text(answer: Any, response_key: str) -> str | None:
    """The text of one collected answer (its `response_key` field), None when it has none."""
    if answer is None:
        return None
    if isinstance(answer, dict):
        value = answer.get(response_key)
        return value if isinstance(value, str) else None
    return answer if isinstance(answer, str) else None


def answer_scores(outputs: Any) -> list[float]:
    """The numeric `score`s of a collected record's answers (none for a failed request)."""
    if not isinstance(outputs, list):
        return []
    return [
        float(o["score"])
        for o in outputs
        if isinstance(o, dict) and isinstance(o.get("score"), int | float)
    ]
