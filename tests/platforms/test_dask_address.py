"""dask.address: the data stages run on a separately started scheduler and workers, and a worker
killed in the middle of a stage costs that stage its own partitions only."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from distributed import Client, get_task_stream

from flows.config import validate_config
from platforms.compute import DaskConfig, shared_client
from samples.generate import generate_sample, write_sample
from tasks.ingest import run_ingest
from tasks.screen import run_screen
from tasks.split import run_split
from tests.conftest import write_jsonl

pytestmark = pytest.mark.slow

DASK_CLI = Path(sys.executable).parent / "dask"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def scheduler(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    log = tmp_path_factory.mktemp("dask") / "dask.log"
    with log.open("w") as out:
        procs = [
            subprocess.Popen(
                [
                    str(DASK_CLI),
                    "scheduler",
                    "--host",
                    "127.0.0.1",
                    "--port",
                    str(port),
                    "--dashboard-address",
                    ":0",
                ],
                stdout=out,
                stderr=out,
            )
        ]
        procs.append(
            subprocess.Popen(
                [
                    str(DASK_CLI),
                    "worker",
                    address,
                    "--nthreads",
                    "1",
                    "--nworkers",
                    "2",  # two worker processes, each under its own nanny (which restarts it)
                    "--memory-limit",
                    "2GiB",
                    "--dashboard-address",
                    ":0",
                ],
                stdout=out,
                stderr=out,
            )
        )
    try:
        yield address
    finally:
        # the tests' shared client first: left open, it keeps trying to reach the scheduler
        shared_client(DaskConfig(address=address)).close()
        for proc in reversed(procs):
            proc.terminate()
        for proc in procs:
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                proc.kill()


def test_stages_run_on_an_existing_scheduler(scheduler: str, tmp_path: Path) -> None:
    context = "Customer Maria Gonzalez waited 4 days for the replacement router."
    lines = [
        json.dumps(
            {
                "id": f"r{i}",
                "question": f"How long did ticket {i} wait?",
                "context": context,
                "answers": {"text": ["4 days"], "answer_start": [context.index("4 days")]},
            }
        )
        for i in range(10)
    ]
    path = write_jsonl(tmp_path / "in.jsonl", lines)
    cfg = validate_config(
        {
            "store": str(tmp_path / "store"),
            "ingest": {"inputs": [str(path)]},
            "dask": {"address": scheduler},
        }
    )
    client = shared_client(cfg.dask)
    deadline = time.monotonic() + 60
    while not client.scheduler_info()["workers"]:
        assert time.monotonic() < deadline, "the worker never joined"
        time.sleep(0.5)
    store = cfg.open_store()
    ingested = run_ingest(client, store, cfg.task, cfg.columns, cfg.ingest, cfg.azure, 100)
    _, report = run_screen(client, store, ingested, cfg.screen)
    assert (ingested.counts["accepted"], report.redacted) == (10, 10)
    worker_addresses = set(client.scheduler_info()["workers"])
    assert len(worker_addresses) == 2  # the cluster's two, not a LocalCluster of our own


def _running(client: Client, prefix: str, deadline: float) -> str:
    """The address of a worker running a task whose key starts with `prefix`, once one does."""
    while True:
        for worker, keys in client.processing().items():
            if any(str(key).startswith(prefix) for key in keys):
                return worker
        assert time.monotonic() < deadline, f"no {prefix} task ever ran"
        time.sleep(0.02)


def test_a_worker_killed_mid_screen_costs_its_partitions_only(
    scheduler: str, tmp_path: Path
) -> None:
    sample = tmp_path / "tickets.jsonl"
    write_sample(generate_sample("extractive-qa", 300, seed=7), sample)

    def stages(store: str) -> tuple:
        cfg = validate_config(
            {"store": str(tmp_path / store), "ingest": {"inputs": [str(sample)]},
             "dask": {"address": scheduler}}
        )  # fmt: skip
        return shared_client(cfg.dask), cfg.open_store(), cfg

    client, store, cfg = stages("clean")
    client.wait_for_workers(2, timeout=60)
    ingested = run_ingest(client, store, cfg.task, cfg.columns, cfg.ingest, cfg.azure, 25)
    clean, _ = run_screen(client, store, ingested, cfg.screen)
    clean_split = run_split(client, store, clean, cfg.split, [])

    client, store, cfg = stages("killed")
    ingested = run_ingest(client, store, cfg.task, cfg.columns, cfg.ingest, cfg.azure, 25)
    partitions = len(store.table_files(ingested, "accepted"))
    with get_task_stream(client) as stream, ThreadPoolExecutor(1) as pool:
        screening = pool.submit(run_screen, client, store, ingested, cfg.screen)
        victim = _running(client, "screen_partition", time.monotonic() + 120)
        pid = client.run(os.getpid, workers=[victim])[victim]
        os.kill(pid, signal.SIGKILL)  # no handler runs: as a node lost or an OOM kill
        assert not screening.done()  # killed in the middle of the stage
        killed, _ = screening.result(timeout=300)
    split = run_split(client, store, killed, cfg.split, [])

    assert (killed.content_hash, killed.counts) == (clean.content_hash, clean.counts)
    assert (split.content_hash, split.counts) == (clean_split.content_hash, clean_split.counts)
    assert victim not in client.scheduler_info()["workers"]  # its nanny started a new one
    # every partition ran; the only ones that ran twice had run on the killed worker, whose
    # results were lost with it
    runs = [t for t in stream.data if str(t["key"]).startswith("screen_partition")]
    count = Counter(str(t["key"]) for t in runs)
    assert len(count) == partitions > 2
    first = {}
    for t in sorted(runs, key=lambda t: t["startstops"][0]["start"]):
        first.setdefault(str(t["key"]), t["worker"])
    assert all(first[key] == victim for key, n in count.items() if n > 1), (count, first)
