"""dask.address: the data stages run on a separately started scheduler and worker."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from flows.config import validate_config
from platforms.compute import shared_client
from tasks.ingest import run_ingest
from tasks.screen import run_screen
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
                    "1",
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
    assert len(worker_addresses) == 1  # not a LocalCluster of our own
    client.close()
