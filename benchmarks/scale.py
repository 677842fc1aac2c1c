"""The data stages at scale: ingest -> screen -> split on a Dask cluster started as an operator
starts one, time and memory against the number of records, and the screen against the number of
workers.

    python benchmarks/scale.py --records 10000 100000 [--workers 1 2] [--store local|blob] [--out DIR]
        [--source generated|external] [--input FILE --task TASK] [--add EARLIER/scale.json ...]

For each size N and each worker count W: writes N generated support tickets
(`samples.generate`, extractive QA; to a temporary folder, never committed) or, with `--source
external`, N texts others wrote (`external_records`: every distinct text of the public corpora
in benchmarks/corpora/, sources and licences in its SOURCES.md, as text-generation records; about
54,500 exist, so a larger N is cut to them and the row says how many) or, with `--input FILE`,
the first N lines of a JSON lines file of your own records of `--task` (a public corpus too large
to ship here: SQuAD 2.0's training set as extractive-QA records), starts a scheduler
(`dask scheduler`) and W single-threaded worker processes (`dask worker --nthreads 1`), as on a
cluster, and runs the three stages against it from this process (the orchestrator, as `tunegate
run` is). `--store local`: input and store on the local disk; `--store blob`: both on a real
Azure Blob endpoint (Azurite, `npm ci`), the input uploaded first, the store `az://`. Every
worker first loads the screen's models (as `dask worker --preload` would on a cluster kept up;
timed apart, `worker load`), then for each stage: seconds and records a second; for the run:
the peak RSS of each worker process (sampled every 0.2 s, its children included) and of this
process alone during the stages (the sample is written by `tunegate data sample` in a process
of its own, so the generator's memory is not counted as the orchestrator's).

Prints a table, writes it as `scale.json` and `scale.md` and draws `scale.png` (time per stage
and worker peak memory against records) in `--out`; ends with the ratios of the largest size to
the smallest (time per record: linear growth is about 1.0; worker peak memory: bounded by a
partition, not by the dataset, issue 43 asks at most 1.5x from 100k to 1M) and, with several
worker counts, the screen's records a second with the most workers over the fewest (issue 43:
at least 1.8x from 1 to 2 on two cores). Never run in CI: a wall time is no test.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import multiprocessing
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager, nullcontext
from pathlib import Path

os.environ.setdefault("TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS", "")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import psutil

from flows.config import validate_config
from platforms.compute import shared_client
from screening.scan import screen_records
from tasks.ingest import run_ingest
from tasks.screen import run_screen
from tasks.split import run_split

BIN = Path(sys.executable).parent
WARM_RECORD = {
    "id": "warm",
    "question": "Where does Maria Gonzalez live?",
    "context": "Maria Gonzalez lives at 12 Main Street; call her on 555-0100.",
    "answers": {"text": ["12 Main Street"], "answer_start": [24]},
}


def warm_record(task: str) -> dict[str, object]:
    """A record of `task` holding a name, an address and a phone: loads every model it needs."""
    text, summary = WARM_RECORD["context"], "Where Maria lives."
    return {
        "extractive-qa": WARM_RECORD,
        "summarization": {"id": "warm", "document": text, "summary": summary},
        "chat": {
            "id": "warm",
            "messages": [{"role": "user", "content": text}, {"role": "assistant", "content": "Ok"}],
        },
    }.get(task, {"id": "warm", "text": text})


class PeakSampler:
    """The peak RSS of processes (with their children, unless `children` is False), sampled on
    a thread."""

    def __init__(self, pids: list[int], children: bool = True) -> None:
        self.peaks = dict.fromkeys(pids, 0)
        self.children = children
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> PeakSampler:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.is_set():
            for pid in self.peaks:
                try:
                    process = psutil.Process(pid)
                    rss = sum(
                        p.memory_info().rss
                        for p in [
                            process,
                            *(process.children(recursive=True) if self.children else ()),
                        ]
                        if p.is_running()
                    )
                except psutil.Error:
                    continue
                self.peaks[pid] = max(self.peaks[pid], rss)
            self._stop.wait(0.2)


def start_cluster(folder: Path, workers: int) -> tuple[str, list[subprocess.Popen]]:
    """A scheduler and `workers` single-threaded worker processes, each a process of its own."""
    scheduler_file = folder / "scheduler.json"
    log = (folder / "cluster.log").open("w")
    processes = [
        subprocess.Popen(
            [str(BIN / "dask"), "scheduler", "--scheduler-file", str(scheduler_file),
             "--port", "0", "--dashboard-address", "127.0.0.1:0", "--no-show"],
            stdout=log, stderr=subprocess.STDOUT,
        )
    ]  # fmt: skip
    deadline = time.monotonic() + 60
    while not scheduler_file.exists():
        if time.monotonic() > deadline:
            raise SystemExit(f"the scheduler did not start: {folder / 'cluster.log'}")
        time.sleep(0.2)
    # as docs/stages.md asks of an operator's workers: no stack sampling for a dashboard profile
    env = {**os.environ, "DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED": "False"}
    for i in range(workers):
        processes.append(
            subprocess.Popen(
                [str(BIN / "dask"), "worker", "--scheduler-file", str(scheduler_file),
                 "--nthreads", "1", "--nworkers", "1", "--memory-limit", "4GiB",
                 "--name", f"worker-{i}", "--no-dashboard"],
                stdout=log, stderr=subprocess.STDOUT, env=env,
            )
        )  # fmt: skip
    address = json.loads(scheduler_file.read_text())["address"]
    return address, processes


@contextmanager
def blob_store(folder: Path, sample: Path) -> Iterator[dict[str, object]]:
    """Azurite on a free port (its data in `folder`), the sample uploaded to it: the config's
    input and store as `az://` paths. The workers started after this read its connection string
    from the environment, as on a cluster given the account's settings."""
    from azure.storage.blob import BlobServiceClient

    from tests.azurite import azurite_blob

    before = os.environ.get("AZURE_STORAGE_CONNECTION_STRING")
    with azurite_blob(folder / "azurite") as connection:
        os.environ["AZURE_STORAGE_CONNECTION_STRING"] = connection
        try:
            service = BlobServiceClient.from_connection_string(connection)
            for container in ("incoming", "tunegate"):
                service.create_container(container)
            with sample.open("rb") as data:
                blob = service.get_blob_client("incoming", sample.name)
                blob.upload_blob(data, max_concurrency=2)
            yield {
                "store": "az://tunegate/store",
                "ingest": {"inputs": [f"az://incoming/{sample.name}"]},
                "tracking": {"uri": "http://mlflow.invalid:5000"},  # never reached: data only
            }
        finally:  # the next measurement's Azurite has another port
            os.environ.pop("AZURE_STORAGE_CONNECTION_STRING")
            if before is not None:
                os.environ["AZURE_STORAGE_CONNECTION_STRING"] = before


CORPORA = Path(__file__).resolve().parent / "corpora"


def external_records(n: int, out: Path) -> int:
    """Up to `n` text-generation records (`{"id", "text"}`) of the distinct texts of the public
    corpora in benchmarks/corpora/ (`screen_findings.corpus_texts`: every text field of every
    record), in an order fixed by their hashes so corpora mix; written to `out` as JSON lines.
    Returns how many were written (fewer than `n` where the corpora hold fewer)."""
    from benchmarks.screen_findings import corpus_texts

    texts: dict[str, str] = {}
    for path in sorted(CORPORA.glob("*.jsonl")):
        for text in corpus_texts(path):
            if text.strip():
                texts.setdefault(text, path.stem)
    order = sorted(texts, key=lambda t: hashlib.sha256(t.encode()).hexdigest())[:n]
    with out.open("w", encoding="utf-8") as f:
        for i, text in enumerate(order):
            f.write(json.dumps({"id": f"{texts[text]}-{i}", "text": text}) + "\n")
    return len(order)


def first_lines(source: Path, n: int, out: Path) -> int:
    """The first `n` non-blank lines of `source` copied to `out`; how many there were."""
    written = 0
    with source.open(encoding="utf-8") as lines, out.open("w", encoding="utf-8") as f:
        for line in lines:
            if written == n:
                break
            if line.strip():
                f.write(line if line.endswith("\n") else line + "\n")
                written += 1
    return written


def measure(
    n: int,
    workers: int,
    sample: Path,
    folder: Path,
    blob: bool,
    task: str = "extractive-qa",
    source: str = "generated",
) -> dict[str, object]:
    local = {"store": str(folder / "store"), "ingest": {"inputs": [str(sample)]}}
    with blob_store(folder, sample) if blob else nullcontext(local) as where:
        return _measure(n, workers, folder, where, task, source)


def _measure(
    n: int, workers: int, folder: Path, where: dict[str, object], task: str, source: str
) -> dict[str, object]:
    address, processes = start_cluster(folder, workers)
    try:
        cfg = validate_config(
            {"task": task, **where, "dask": {"address": address, "partition_rows": 1000}}
        )
        client, store = shared_client(cfg.dask), cfg.open_store()
        client.wait_for_workers(workers, timeout=120)
        worker_pids = [p.pid for p in processes[1:]]
        seconds: dict[str, float] = {}
        # what `dask worker --preload` would do on a cluster kept up: every worker loads the
        # screen's models (spaCy, Presidio, the person reader, toxicity) before the stages, so
        # the stage times are the work on the records, timed apart as `worker_load`
        start = time.perf_counter()
        client.run(screen_records, cfg.task, [warm_record(task)], cfg.screen)
        seconds["worker_load"] = time.perf_counter() - start
        # this process alone (its children are the cluster), from the stages' start only
        with PeakSampler(worker_pids) as sampler, PeakSampler([os.getpid()], False) as own:
            start = time.perf_counter()
            ingested = run_ingest(client, store, cfg.task, cfg.columns, cfg.ingest, cfg.azure, 1000)
            seconds["ingest"] = time.perf_counter() - start
            start = time.perf_counter()
            screened, report = run_screen(client, store, ingested, cfg.screen)
            seconds["screen"] = time.perf_counter() - start
            start = time.perf_counter()
            split = run_split(client, store, screened, cfg.split, [])
            seconds["split"] = time.perf_counter() - start
        client.close()
    finally:
        for p in processes:
            p.terminate()
        for p in processes:
            try:
                p.wait(20)
            except subprocess.TimeoutExpired:
                p.kill()
    orchestrator = own.peaks[os.getpid()]
    return {
        "records": n,
        "source": source,
        "workers": workers,
        "store": "blob" if str(where["store"]).startswith("az://") else "local",
        "ingest_counts": ingested.counts,
        "kept": report.kept,
        "split_counts": split.counts,
        "seconds": {k: round(v, 1) for k, v in seconds.items()},
        "records_per_second": {
            k: round(n / v, 1) for k, v in seconds.items() if k != "worker_load"
        },
        "worker_peak_mib": [round(v / 2**20) for v in sampler.peaks.values()],
        "orchestrator_peak_mib": round(orchestrator / 2**20),
    }


def table(rows: list[dict[str, object]]) -> str:
    lines = [
        "| records | source | workers | store | worker load s | ingest s | screen s | split s | "
        "screen records/s | worker peak MiB | orchestrator peak MiB |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        s, rate = r["seconds"], r["records_per_second"]
        lines.append(
            f"| {r['records']:,} | {r.get('source', 'generated')} | {r['workers']} | "
            f"{r['store']} | {s['worker_load']} | "
            f"{s['ingest']} | {s['screen']} | {s['split']} | "
            f"{rate['screen']:,} | {', '.join(map(str, r['worker_peak_mib']))} | "
            f"{r['orchestrator_peak_mib']} |"
        )
    return "\n".join(lines)


def plot(rows: list[dict[str, object]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    for workers in sorted({r["workers"] for r in rows}):
        mine = [r for r in rows if r["workers"] == workers]
        sizes = [r["records"] for r in mine]
        for stage in ("ingest", "screen", "split"):
            left.plot(
                sizes, [r["seconds"][stage] for r in mine], marker="o",
                label=f"{stage}, {workers} worker(s)",
            )  # fmt: skip
        right.plot(
            sizes, [max(r["worker_peak_mib"]) for r in mine], marker="o",
            label=f"worker, {workers} worker(s)",
        )  # fmt: skip
        right.plot(
            sizes, [r["orchestrator_peak_mib"] for r in mine], marker="o",
            label=f"orchestrator, {workers} worker(s)",
        )  # fmt: skip
    left.set(xscale="log", yscale="log", xlabel="records", ylabel="seconds", title="time")
    left.legend()
    right.set(xscale="log", xlabel="records", ylabel="peak RSS, MiB", title="memory")
    right.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, nargs="*", default=[10_000, 100_000])
    parser.add_argument(
        "--workers", type=int, nargs="+", default=[2],
        help="single-threaded worker processes (several: each size with each count)",
    )  # fmt: skip
    parser.add_argument(
        "--store", choices=["local", "blob"], default="local",
        help="input and store on the local disk, or on Azurite's Blob endpoint",
    )  # fmt: skip
    parser.add_argument("--out", type=Path, default=Path("scale-out"))
    parser.add_argument(
        "--input", type=Path, help="records of your own (JSON lines of --task): their first N lines"
    )
    parser.add_argument(
        "--task", default="extractive-qa",
        choices=["extractive-qa", "summarization", "chat", "text-generation"],
        help="the task of the --input records",
    )  # fmt: skip
    parser.add_argument(
        "--source", choices=["generated", "external"], default="generated",
        help="generated support tickets (extractive QA), or texts others wrote: the public "
        "corpora of benchmarks/corpora/ as text-generation records (about 54,500 at most)",
    )  # fmt: skip
    parser.add_argument(
        "--add", type=Path, nargs="+", default=[], metavar="SCALE_JSON",
        help="rows of earlier runs (their scale.json) to tabulate, draw and compare with these: "
        "sizes measured in several sessions, the same release. `--records` with no size: "
        "these rows alone",
    )  # fmt: skip
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    rows = []
    for n in sorted(args.records):
        data = Path(tempfile.mkdtemp(prefix=f"scale-{n}-"))
        sample = data / "sample.jsonl"  # one sample of each size, for every worker count
        # written in a process of their own: the orchestrator's memory is the stages' alone
        task, source = "extractive-qa", args.source
        if args.input:
            n, task, source = first_lines(args.input, n, sample), args.task, args.input.name
        elif args.source == "external":
            spawn = multiprocessing.get_context("spawn")
            with ProcessPoolExecutor(1, mp_context=spawn) as writer:
                n = writer.submit(external_records, n, sample).result()
            task = "text-generation"
        else:
            subprocess.run(
                [
                    BIN / "tunegate",
                    "data",
                    "sample",
                    "--n",
                    str(n),
                    "--seed",
                    "43",
                    "--out",
                    sample,
                ],
                check=True,
                stdout=subprocess.DEVNULL,
            )
        for workers in sorted(args.workers):
            folder = data / f"workers-{workers}"
            folder.mkdir()
            try:
                row = measure(n, workers, sample, folder, args.store == "blob", task, source)
            finally:
                shutil.rmtree(folder, ignore_errors=True)
            rows.append(row)
            print(json.dumps(row), flush=True)
        shutil.rmtree(data, ignore_errors=True)
    for earlier in args.add:
        rows.extend(json.loads(earlier.read_text()))
    rows.sort(key=lambda r: (r["workers"], r["records"], r["store"]))
    if not rows:
        parser.error("no sizes to run (--records) and no rows to add (--add)")
    (args.out / "scale.json").write_text(json.dumps(rows, indent=2))
    (args.out / "scale.md").write_text(table(rows) + "\n")
    plot(rows, args.out / "scale.png")
    print(table(rows))
    most = max(r["workers"] for r in rows)
    by_size = [r for r in rows if r["workers"] == most]
    if len(by_size) > 1:
        small, large = by_size[0], by_size[-1]
        per_record = {
            stage: (large["seconds"][stage] / large["records"])
            / (small["seconds"][stage] / small["records"])
            for stage in ("ingest", "screen", "split")
        }
        memory = max(large["worker_peak_mib"]) / max(small["worker_peak_mib"])
        print(
            "time per record, largest over smallest: "
            + ", ".join(f"{k} {v:.2f}" for k, v in per_record.items())
        )
        print(f"worker peak memory, largest over smallest: {memory:.2f}x")
    fewest = min(r["workers"] for r in rows)
    if most > fewest:
        for n in sorted({r["records"] for r in rows}):
            rate = {
                r["workers"]: r["records_per_second"]["screen"] for r in rows if r["records"] == n
            }
            if most not in rate or fewest not in rate:
                continue
            print(
                f"screen at {n:,} records: {most} workers {rate[most] / rate[fewest]:.2f}x "
                f"the records a second of {fewest}"
            )


if __name__ == "__main__":
    main()
