"""What an endpoint collects of its traffic: every request and its answer, masked, off the
request path.

A scoring process hands each request it answered (or failed) to a `Collection`, which returns at
once: a background thread masks the request and the answer together (a function the caller
gives, `screening.outputs.traffic_masker`: the screen's recognizers, so a value the screen would
redact never reaches a record) and writes it to its sinks. Nothing is written unmasked: with no
masker, or one that fails to load, nothing is collected. When the thread falls behind, the queue
(`max_pending` records) is full and further records are dropped and counted, never waited for.

Sinks:
- `JsonlSink`: the local endpoint's records, one JSON object a line, in
  `{endpoint folder}/collected/requests.jsonl` (mode 0600), rotated at `max_bytes` into
  `requests.1.jsonl` ... `requests.{keep}.jsonl`, so the folder never holds more than
  `(keep + 1) * max_bytes`. `tunegate endpoint traffic` reads them (`read_records`, `summarise`).
- `AzureMLSink`: Azure ML's data collector (`azureml-ai-monitoring`'s `Collector`), the
  deployment's `model_inputs` and `model_outputs` collections (`data_collector` of the
  deployment), rows correlated by request. Used by the scoring script when the package imports
  and the deployment enables collection; the collector sends to the deployment's own sidecar.
"""

from __future__ import annotations

import json
import logging
import os
import queue
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from serving.metrics import percentile

log = logging.getLogger(__name__)
COLLECTED = "collected"  # in an endpoint's folder
RECORDS = "requests.jsonl"
INPUTS, OUTPUTS = "model_inputs", "model_outputs"  # Azure ML's collection names

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


class Sink(Protocol):
    def write(self, exchange: Exchange) -> None: ...
    def close(self) -> None: ...


class Collection:
    """A background writer: `submit` queues an exchange; the thread masks it and writes it to
    every sink. The masker is made by `masker_factory` on the thread, at its first record (loading
    the recognizers takes seconds, which neither the endpoint's start nor a request waits for)."""

    def __init__(
        self, masker_factory: Callable[[], Masker], sinks: Sequence[Sink], max_pending: int = 1000
    ) -> None:
        self._factory = masker_factory
        self._mask: Masker | None = None
        self.sinks = list(sinks)
        self.dropped = 0  # records not collected: the queue was full
        self.failed: str | None = None  # why nothing is collected (the masker did not load)
        self._queue: queue.Queue[Exchange | None] = queue.Queue(max_pending)
        self._thread = threading.Thread(target=self._work, name="collect", daemon=True)
        self._thread.start()

    def submit(self, exchange: Exchange) -> bool:
        """Queue `exchange`; False (and counted in `dropped`) when the queue is full."""
        try:
            self._queue.put_nowait(exchange)
        except queue.Full:
            self.dropped += 1
            return False
        return True

    def flush(self) -> None:
        """Wait until every queued exchange is written (or dropped)."""
        self._queue.join()

    def close(self) -> None:
        """Write what is queued, then stop the thread and the sinks."""
        self._queue.put(None)
        self._thread.join()
        for sink in self.sinks:
            sink.close()

    def _work(self) -> None:
        while True:
            exchange = self._queue.get()
            try:
                if exchange is None:
                    return
                self._write(exchange)
            finally:
                self._queue.task_done()

    def _write(self, exchange: Exchange) -> None:
        if self._mask is None and self.failed is None:
            try:
                self._mask = self._factory()
            except Exception as exc:  # noqa: BLE001 (any failure: collect nothing, say why)
                self.failed = f"the masker did not load ({type(exc).__name__}: {exc})"
                log.error("nothing is collected: %s", self.failed)
        if self._mask is None:
            return
        try:  # request and answer masked together: a value found in one is masked in both
            masked = self._mask(
                {"inputs": exchange.inputs, "outputs": exchange.outputs, "error": exchange.error}
            )
        except Exception:  # a record that cannot be masked is not written
            log.warning("a collected record could not be masked; not written", exc_info=True)
            return
        clean = Exchange(
            exchange.deployment,
            exchange.version,
            exchange.status,
            round(exchange.latency_ms, 3),
            masked["inputs"],
            masked["outputs"],
            masked["error"],
            exchange.time,
            exchange.id,
        )
        for sink in self.sinks:
            try:
                sink.write(clean)
            except Exception:  # a sink's failure never stops the others
                log.warning("collecting to %s failed", type(sink).__name__, exc_info=True)


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
    `model_outputs` (one row per record), correlated. `available()` says whether it can run."""

    def __init__(self) -> None:
        from azureml.ai.monitoring import Collector

        def report(exc: Exception) -> None:
            log.warning("Azure ML data collector: %s", exc)

        self.inputs = Collector(name=INPUTS, on_error=report)
        self.outputs = Collector(name=OUTPUTS, on_error=report)

    @staticmethod
    def available() -> bool:
        try:
            import azureml.ai.monitoring  # noqa: F401
        except ImportError:
            return False
        return True

    def write(self, exchange: Exchange) -> None:
        import pandas as pd

        context = self.inputs.collect(pd.DataFrame(_rows(exchange.inputs)))
        if exchange.outputs is not None:
            self.outputs.collect(pd.DataFrame(_rows(exchange.outputs)), context)

    def close(self) -> None:
        """The collector's own worker sends what it has queued."""


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
        if status < 400:
            latencies.setdefault(key, []).append(float(r.get("latency_ms", 0.0)))
        s.first = s.first or r.get("time")
        s.last = r.get("time")
        s.examples = [*s.examples, r][-examples:] if examples else []
    for key, s in groups.items():
        values = sorted(latencies.get(key, []))
        s.latency_ms = {f"p{q}": percentile(values, q) for q in (50, 95, 99)}
    return [groups[k] for k in sorted(groups, key=lambda k: (k[0], k[1] or ""))]


def ms_since(started: float) -> float:
    return (time.perf_counter() - started) * 1000
