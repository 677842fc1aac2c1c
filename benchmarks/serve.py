"""Serving throughput: what the endpoint serves against one-request-at-a-time fp32, on the real
endpoint.

    python benchmarks/serve.py                      # the demo's registered model, as it serves

With no arguments it measures what is served: the `champion` of `tunegate-demo-qa` (`--model`)
registered in the store `.tunegate` (`--store`; `make demo` makes it), on the runtime its
evaluation gated and `serving.json` records (ONNX Runtime int8 for the demo), files checked
against the registry's record. Without such a store it says how to get one and measures the
untrained packaged MiniLM (a seeded QA head, built without training) in torch instead.

Starts the local endpoint on a free loopback port and deploys the model twice:
- `batched`: the model as served (its registered runtime; `--runtime` another), requests waiting
  together scored in one model call (`--batch-size`, `--wait-ms`) by `--workers` scoring
  processes, through the endpoint's fair micro-batcher;
- `unbatched`: the same weights in torch fp32 (serving files left out), `max_batch_size` 1, in
  the server process: every request is its own model call (the baseline).
Each is warmed up, then sent the same `--requests` support-ticket questions over HTTP by
`--concurrency` concurrent clients in this process (a closed loop: a client sends its next request
when the last is answered), `--rounds` times in alternating order (ABBA...) so that a change in
background load hits both alike. The script prints each side's requests/s, client-side p50/p95
latency and model calls over all rounds, checks both gave the same answers, and ends with
`ratio N.Nx (p95 batched A ms vs B ms unbatched)`, the ratio being batched / unbatched
requests/s.

`--runtime torch|onnx|onnx-int8` serves the batched side with that runtime (serving/runtimes.py,
exported here when the folder has none; the baseline stays torch), `--model-dir` a trained model
folder instead of the registered one (a registered version's folder serves its own runtime), and
`--split` prints both sides' F1 on its test records, scored as the endpoint scores.

Last, the model alone: the same requests scored without HTTP by one scoring process per CPU, every
CPU busy all the time (for each runtime). That rate is as fast as this machine can run this model; it bounds the
batched side, and so the ratio any batching can reach here (printed as `ceiling`). Never run in
CI: these machines are shared and a wall time is no test.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import httpx
import torch

from samples.generate import valid_records
from serving import runtimes
from serving.api import DEPLOYMENT_HEADER
from serving.client import RunningEndpoint, serve_in_thread
from serving.metrics import percentile
from serving.scoring import Scorer
from serving.settings import ServerSettings
from serving.workers import ProcessScorer
from trainer.args import PACKAGED_MODEL
from trainer.model_paths import has_weights
from trainer.modeling import load_base, load_tokenizer, write_model_info


@dataclass(frozen=True)
class LoadResult:
    seconds: float
    latencies_ms: list[float]  # one per request, client-side
    answers: list[tuple[str, int]]  # (answer, start) per request, in request order
    model_calls: int

    @property
    def rate(self) -> float:
        return len(self.latencies_ms) / self.seconds

    def p(self, q: float) -> float:
        value = percentile(sorted(self.latencies_ms), q)
        assert value is not None
        return value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=400, help="timed requests per config")
    parser.add_argument("--concurrency", type=int, default=16, help="concurrent clients")
    parser.add_argument("--batch-size", type=int, default=2, help="batched: max_batch_size")
    parser.add_argument("--wait-ms", type=float, default=5.0, help="batched: max_wait_ms")
    parser.add_argument(
        "--workers",
        type=int,
        default=2,
        help="batched: scoring processes (batches in flight), each with cpus/workers torch threads",
    )
    parser.add_argument("--rounds", type=int, default=2, help="timed runs of each config")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per request")
    parser.add_argument(
        "--runtime",
        choices=("torch", "onnx", "onnx-int8"),
        help="batched: the runtime it serves with (serving/runtimes.py; default: the one the "
        "model folder's serving.json names, else torch); unbatched is torch",
    )
    parser.add_argument(
        "--store", type=Path, default=Path(".tunegate"), help="the store to find --model in"
    )
    parser.add_argument(
        "--model",
        default="tunegate-demo-qa",
        help="the registered model whose champion is measured (without --model-dir)",
    )
    parser.add_argument(
        "--model-dir",
        type=Path,
        help="a trained QA model folder (e.g. a registered version's) instead of the registered "
        "champion",
    )
    parser.add_argument(
        "--no-ceiling",
        action="store_true",
        help="skip the model-alone rates (each runtime scored without HTTP by every CPU)",
    )
    parser.add_argument(
        "--split", type=Path, help="a split dataset: F1 of both sides on its test records"
    )
    args = parser.parse_args()
    source = args.model_dir or _registered(args.store, args.model)
    served = "torch" if source is None else runtimes.served_runtime(source)[0]
    runtime = args.runtime or served
    if source is not None:
        print(f"model {source}: serves {served}; the batched side serves {runtime}")

    payloads = _payloads(args.requests)
    load = os.getloadavg()[0]
    print(
        f"{len(payloads)} requests ({len({json.dumps(p) for p in payloads})} distinct), "
        f"concurrency {args.concurrency}, {args.rounds} rounds; "
        f"load average {load:.1f} on {os.cpu_count()} CPUs before start"
    )
    with tempfile.TemporaryDirectory() as tmp:
        # models: torch (the baseline) and the batched side's runtime
        model_dir = Path(tmp) / "qa-model"  # the torch model: serving files left out
        if source is not None:
            ignored = shutil.ignore_patterns(runtimes.FOLDER, runtimes.SERVING_FILE)
            shutil.copytree(source, model_dir, ignore=ignored)
        else:
            load_base("extractive-qa", PACKAGED_MODEL, 42).save_pretrained(model_dir)
            load_tokenizer(PACKAGED_MODEL).save_pretrained(model_dir)
            write_model_info(model_dir, "extractive-qa", PACKAGED_MODEL, adapter=False)
        if source is not None and runtime == served:
            served_dir = source  # as registered: its runtime's files, hash-checked when loaded
        else:
            served_dir = _with_runtime(model_dir, Path(tmp) / "served", runtime)
        quality = _f1(model_dir, served_dir, args.split) if args.split else None

        # endpoint
        settings = ServerSettings(key_file=Path(tmp) / "key")
        with serve_in_thread(settings) as endpoint, endpoint.client() as admin:
            admin.put_deployment(
                "batched",
                str(served_dir),
                max_batch_size=args.batch_size,
                max_wait_ms=args.wait_ms,
                workers=args.workers,
            )
            admin.put_deployment("unbatched", str(model_dir), max_batch_size=1, max_wait_ms=0)
            admin.set_traffic({"batched": 100})

            # load
            names = ("unbatched", "batched")
            runs: dict[str, list[LoadResult]] = {name: [] for name in names}
            for name in names:
                warm = payloads[: 4 * args.concurrency]
                asyncio.run(_load(endpoint, name, warm, args.concurrency, args.timeout))
            for round_ in range(args.rounds):
                for name in names if round_ % 2 == 0 else names[::-1]:
                    run = asyncio.run(
                        _load(endpoint, name, payloads, args.concurrency, args.timeout)
                    )
                    runs[name].append(run)
        ceilings = {
            name: _model_alone(
                served_dir
                if name == runtime
                else _with_runtime(model_dir, Path(tmp) / f"alone-{name}", name),
                payloads,
                args.batch_size,
            )
            for name in ("torch", "onnx", "onnx-int8")
            if not args.no_ceiling and (name == runtime or has_weights(model_dir))
        }
        ceiling = ceilings.get(runtime)

    # report
    cpus, threads = os.cpu_count() or 1, torch.get_num_threads()
    batched, unbatched = _pooled(runs["batched"]), _pooled(runs["unbatched"])
    total = args.rounds * len(payloads)
    for name, result, how in (
        (
            "batched",
            batched,
            f"max_batch_size {args.batch_size}, max_wait_ms {args.wait_ms:g}, "
            f"{args.workers} scoring processes x {max(1, cpus // args.workers)} threads, "
            f"runtime {runtime}",
        ),
        (
            "unbatched",
            unbatched,
            f"max_batch_size 1, in the server process, {threads} torch threads",
        ),
    ):
        print(
            f"{name:<10} {result.rate:6.1f} requests/s  p50 {result.p(50):6.1f} ms  "
            f"p95 {result.p(95):6.1f} ms  {result.model_calls} model calls "
            f"({total / result.model_calls:.1f} requests/call; {how})"
        )
    same = sum(a == b for a, b in zip(batched.answers, unbatched.answers, strict=True))
    # A batch pads to its longest request, which changes float rounding: with an untrained QA
    # head a near-tied span can flip. Answers mixed up between requests would differ nearly all.
    print(f"same answers: {same}/{total} (answer text and start)")
    if same < 0.95 * total and runtime != "onnx-int8":  # int8 answers are its own
        raise SystemExit(f"answers differ in {total - same} requests: the comparison is void")
    if quality is not None:
        print(
            f"test F1 ({quality[2]} records): torch {quality[0]:.2f}, served {runtime} "
            f"{quality[1]:.2f} ({quality[1] - quality[0]:+.2f})"
        )
    if ceiling is not None:
        print(
            "model alone, requests/s: "
            + ", ".join(f"{name} {rate:.1f}" for name, rate in ceilings.items())
        )
        print(
            f"ceiling {ceiling:.1f} requests/s (the model alone, {cpus} processes, no HTTP): "
            f"batched reaches {batched.rate / ceiling:.0%} of it; 3x unbatched would need "
            f"{3 * unbatched.rate / ceiling:.0%}"
        )
    print(f"load average {os.getloadavg()[0]:.1f} at the end")
    print(
        f"ratio {batched.rate / unbatched.rate:.1f}x "
        f"(p95 batched {batched.p(95):.0f} ms vs {unbatched.p(95):.0f} ms unbatched)"
    )


def _registered(store: Path, name: str) -> Path | None:
    """The folder of `name`'s champion registered in `store`, its files checked against the
    registry's record; None (saying how to get one) when the store has none."""
    from platforms import tracking
    from platforms.registry import MlflowRegistry

    database = tracking.local_tracking_dir(store) / tracking.DB_FILE
    version = None
    if database.exists():  # never create a store's database here
        registry = MlflowRegistry.local(store)
        version = registry.alias(name, "champion")
    if version is None:
        print(
            f"no champion of {name} registered in {store}: `make demo` registers one (or pass "
            "--model-dir a registered model folder); measuring the untrained packaged MiniLM "
            "in torch instead"
        )
        return None
    return registry.download(version)


def _with_runtime(model_dir: Path, dest: Path, runtime: str) -> Path:
    """`model_dir` served with `runtime`: a copy with its exported folder and serving.json (the
    ONNX runtimes are exported once, beside the torch model)."""
    if runtime == "torch":
        return model_dir
    exported = model_dir.parent / "exported"
    if not (exported / runtime).exists():
        runtimes.export(model_dir, exported)
    if not dest.exists():
        choice = runtimes.ServingChoice(runtime, {}, [f"{runtime}: benchmarks/serve.py"])
        runtimes.stage(model_dir, exported / runtime, choice, dest)
    return dest


def _f1(torch_dir: Path, served_dir: Path, split: Path) -> tuple[float, float, int]:
    """Test F1 of the torch model and of the served runtime, by the evaluation's metric code,
    each scoring the records as the endpoint does (`Scorer.score`)."""
    from trainer.data import read_split
    from trainer.metrics import score_records

    records = read_split(split, "test")
    values = []
    for folder in (torch_dir, served_dir):
        scorer = Scorer(folder)
        answers = [scorer.score([r])[0]["answer"] for r in records]
        values.append(score_records("extractive-qa", answers, records)[0]["f1"])
    return values[0], values[1], len(records)


def _model_alone(model_dir: Path, payloads: list[dict[str, str]], batch_size: int) -> float:
    """Requests/s of the model alone: one scoring process per CPU, each always busy."""
    cpus = os.cpu_count() or 1
    scorer = ProcessScorer(model_dir, workers=cpus)
    try:
        batches = [payloads[i : i + batch_size] for i in range(0, len(payloads), batch_size)]
        with ThreadPoolExecutor(cpus) as pool:
            list(pool.map(scorer.score, batches[: 2 * cpus]))  # warm-up
            started = time.perf_counter()
            list(pool.map(scorer.score, batches))
            return len(payloads) / (time.perf_counter() - started)
    finally:
        scorer.close()


def _payloads(n: int) -> list[dict[str, str]]:
    """`n` score requests (question and context) of valid sample tickets, repeated if need be."""
    records = [
        {"question": r["question"], "context": r["context"]}
        for r in valid_records("extractive-qa", n, seed=5)
    ]
    if not records:
        raise ValueError("the sample generator gave no valid extractive-qa record: check it")
    return [records[i % len(records)] for i in range(n)]


async def _load(
    endpoint: RunningEndpoint,
    deployment: str,
    payloads: list[dict[str, str]],
    concurrency: int,
    timeout: float,
) -> LoadResult:
    """`payloads` sent to `deployment` by `concurrency` clients, each waiting for its answer."""
    latencies = [0.0] * len(payloads)
    answers = [("", 0)] * len(payloads)
    pending = iter(range(len(payloads)))
    headers = {"Authorization": f"Bearer {endpoint.key}", DEPLOYMENT_HEADER: deployment}
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(
        base_url=endpoint.url, headers=headers, timeout=timeout, limits=limits
    ) as http:

        async def client() -> None:
            for i in pending:  # a shared iterator: each index is taken by exactly one client
                started = time.perf_counter()
                response = await http.post("/score", json=payloads[i])
                latencies[i] = (time.perf_counter() - started) * 1000
                response.raise_for_status()
                body = response.json()
                answers[i] = (body["answer"], body["start"])

        calls_before = await _model_calls(http, deployment)
        started = time.perf_counter()
        await asyncio.gather(*(client() for _ in range(concurrency)))
        seconds = time.perf_counter() - started
        calls = await _model_calls(http, deployment) - calls_before
    return LoadResult(seconds, latencies, answers, calls)


def _pooled(runs: list[LoadResult]) -> LoadResult:
    """The runs of one config as one: total time, every latency and answer, all model calls."""
    return LoadResult(
        sum(r.seconds for r in runs),
        [ms for r in runs for ms in r.latencies_ms],
        [a for r in runs for a in r.answers],
        sum(r.model_calls for r in runs),
    )


async def _model_calls(http: httpx.AsyncClient, deployment: str) -> int:
    response = await http.get("/metrics")
    response.raise_for_status()
    return int(response.json()["deployments"][deployment]["model_calls"])


if __name__ == "__main__":
    main()
