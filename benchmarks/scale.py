"""The data stages at scale: ingest -> screen -> split on a Dask cluster started as an operator
starts one, time and memory against the number of records.

    python benchmarks/scale.py --records 10000 100000 [--workers 2] [--out DIR]

For each size N: writes N generated support tickets (`samples.generate`, extractive QA; written
to a temporary folder, never committed), starts a scheduler (`dask scheduler`) and `--workers`
single-threaded worker processes (`dask worker --nthreads 1`), as on a cluster, and runs the
three stages against it from this process (the orchestrator, as `tunegate run` is), with the
store on the local disk. For each stage: seconds and records a second; for the size: the peak
RSS of each worker process (sampled every 0.2 s, its children included) and of this process.

Prints a table, writes it as `scale.json` and `scale.md` and draws `scale.png` (time per stage
and worker peak memory against records) in `--out`; ends with the ratios of the largest size to
the smallest: time per record (linear growth: about 1.0) and worker peak memory (bounded by a
partition, not by the dataset: issue 43 asks at most 1.5x from 100k to 1M). The store on Blob
(Azurite) is not measured yet. Never run in CI: a wall time is no test.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

os.environ.setdefault("TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS", "")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import psutil

from flows.config import validate_config
from platforms.compute import shared_client
from samples.generate import generate_sample, write_sample
from tasks.ingest import run_ingest
from tasks.screen import run_screen
from tasks.split import run_split

BIN = Path(sys.executable).parent


class PeakSampler:
    """The peak RSS of processes (with their children), sampled on a thread."""

    def __init__(self, pids: list[int]) -> None:
        self.peaks = dict.fromkeys(pids, 0)
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
                        for p in [process, *process.children(recursive=True)]
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
    for i in range(workers):
        processes.append(
            subprocess.Popen(
                [str(BIN / "dask"), "worker", "--scheduler-file", str(scheduler_file),
                 "--nthreads", "1", "--nworkers", "1", "--memory-limit", "4GiB",
                 "--name", f"worker-{i}", "--no-dashboard"],
                stdout=log, stderr=subprocess.STDOUT,
            )
        )  # fmt: skip
    address = json.loads(scheduler_file.read_text())["address"]
    return address, processes


def measure(n: int, workers: int, folder: Path) -> dict[str, object]:
    sample = folder / "sample.jsonl"
    write_sample(generate_sample("extractive-qa", n, seed=43), sample)
    address, processes = start_cluster(folder, workers)
    try:
        cfg = validate_config(
            {
                "task": "extractive-qa",
                "store": str(folder / "store"),
                "ingest": {"inputs": [str(sample)]},
                "dask": {"address": address, "partition_rows": 1000},
            }
        )
        client, store = shared_client(cfg.dask), cfg.open_store()
        client.wait_for_workers(workers, timeout=120)
        worker_pids = [p.pid for p in processes[1:]]
        seconds: dict[str, float] = {}
        with PeakSampler(worker_pids) as sampler:
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
    orchestrator = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    return {
        "records": n,
        "ingest_counts": ingested.counts,
        "kept": report.kept,
        "split_counts": split.counts,
        "seconds": {k: round(v, 1) for k, v in seconds.items()},
        "records_per_second": {k: round(n / v, 1) for k, v in seconds.items()},
        "worker_peak_mib": [round(v / 2**20) for v in sampler.peaks.values()],
        "orchestrator_peak_mib": round(orchestrator / 2**20),
    }


def table(rows: list[dict[str, object]]) -> str:
    lines = [
        "| records | ingest s | screen s | split s | screen records/s | worker peak MiB | "
        "orchestrator peak MiB |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        s, rate = r["seconds"], r["records_per_second"]
        lines.append(
            f"| {r['records']:,} | {s['ingest']} | {s['screen']} | {s['split']} | "
            f"{rate['screen']:,} | {', '.join(map(str, r['worker_peak_mib']))} | "
            f"{r['orchestrator_peak_mib']} |"
        )
    return "\n".join(lines)


def plot(rows: list[dict[str, object]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sizes = [r["records"] for r in rows]
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    for stage in ("ingest", "screen", "split"):
        left.plot(sizes, [r["seconds"][stage] for r in rows], marker="o", label=stage)
    left.set(xscale="log", yscale="log", xlabel="records", ylabel="seconds", title="time")
    left.legend()
    right.plot(sizes, [max(r["worker_peak_mib"]) for r in rows], marker="o", label="worker")
    right.plot(sizes, [r["orchestrator_peak_mib"] for r in rows], marker="o", label="orchestrator")
    right.set(xscale="log", xlabel="records", ylabel="peak RSS, MiB", title="memory")
    right.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--workers", type=int, default=2, help="single-threaded worker processes")
    parser.add_argument("--out", type=Path, default=Path("scale-out"))
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    rows = []
    for n in sorted(args.records):
        folder = Path(tempfile.mkdtemp(prefix=f"scale-{n}-"))
        try:
            row = measure(n, args.workers, folder)
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        rows.append(row)
        print(json.dumps(row), flush=True)
    (args.out / "scale.json").write_text(json.dumps(rows, indent=2))
    (args.out / "scale.md").write_text(table(rows) + "\n")
    plot(rows, args.out / "scale.png")
    print(table(rows))
    if len(rows) > 1:
        small, large = rows[0], rows[-1]
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


if __name__ == "__main__":
    main()
