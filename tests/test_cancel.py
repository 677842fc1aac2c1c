"""Cancelling a run stops its training job: SIGTERM (what Prefect's runner sends on cancel)
to a real `tunegate run` while the trainer runs leaves no trainer process behind."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.tickets import qa_tickets

pytestmark = pytest.mark.slow

TUNEGATE = Path(sys.executable).parent / "tunegate"


def _trainer_pid(jobs: Path, deadline: float) -> int:
    while time.monotonic() < deadline:
        for job in jobs.glob("*/job.json"):
            log = job.parent / "train.log"
            # the trainer's line once the base model and its new head are loaded
            if log.exists() and "new (initialised)" in log.read_text(errors="replace"):
                return json.loads(job.read_text())["pid"]
        time.sleep(0.5)
    raise AssertionError("training never started")


def _alive(pid: int, signal_to: Callable[[int, int], None] = os.kill) -> bool:
    """Whether the process (or, with `os.killpg`, any process of the group) still runs."""
    try:
        signal_to(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_sigterm_to_the_run_stops_the_training_job(tmp_path: Path) -> None:
    store = tmp_path / "store"
    command = [
        str(TUNEGATE),
        "run",
        "--input",
        str(qa_tickets(tmp_path)),
        "--approval",
        "auto",
        "--set",
        f"store={store}",
        "--set",
        "dask.n_workers=1",
        "--set",
        'train.args={"max_steps": 100000, "doc_stride": 32}',
        "--set",
        "train.max_length=64",
    ]
    env = {**os.environ, "TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS": "", "HF_HUB_OFFLINE": "1"}
    log = (tmp_path / "run.log").open("w")
    run = subprocess.Popen(
        command, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True
    )
    try:
        pid = _trainer_pid(store / "jobs", time.monotonic() + 240)
        assert _alive(pid)
        run.send_signal(signal.SIGTERM)
        run.wait(timeout=60)
        deadline = time.monotonic() + 30
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not _alive(pid), "the training job outlived its cancelled run"
        [job] = (store / "jobs").iterdir()
        assert (job / "cancelled").exists()
        # Nothing the run started outlives it: not Prefect's temporary API server, not Dask.
        deadline = time.monotonic() + 30
        while _alive(run.pid, os.killpg) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not _alive(run.pid, os.killpg), "a process of the cancelled run is still running"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(run.pid, signal.SIGKILL)
        log.close()
