"""The local Dask cluster leaves this process's environment as it found it, and its workers
spend no time on what nobody reads."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")

PROBE = """
import os
from platforms.compute import DaskConfig, shared_client

client = shared_client(DaskConfig(n_workers=1, memory_limit="1GiB"))
names = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")
(worker,) = client.run(lambda: os.environ.get("OMP_NUM_THREADS")).values()
print("worker", worker)
import dask
(profiling,) = client.run(lambda: dask.config.get("distributed.worker.profile.enabled")).values()
print("profiling", profiling)
print("here", *(os.environ.get(n) for n in names))
"""


def test_starting_the_cluster_does_not_pin_later_processes_to_one_thread() -> None:
    # Dask's nanny sets OMP_NUM_THREADS=1 etc. in the parent before spawning its workers; the
    # training subprocess and the endpoint started after the data stages inherited them.
    env = {k: v for k, v in os.environ.items() if k not in THREAD_VARIABLES}
    probe = subprocess.run(
        [sys.executable, "-c", PROBE],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert probe.returncode == 0, probe.stderr[-2000:]
    lines = dict(line.split(" ", 1) for line in probe.stdout.splitlines())
    assert lines["worker"] == "1"  # the workers still get Dask's one-thread setting
    assert lines["here"] == "None None None"  # this process (and what it starts) does not
    assert lines["profiling"] == "False"  # no stack sampling for a dashboard this cluster lacks
