"""SIGKILL to `tunegate run` at a stage (no handler runs, nothing is cleaned up), then the same
command again: the second run finishes, reusing what the first finished, and leaves a store that
verifies, no scratch folder, one registered version and one endpoint server."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli.main import app
from platforms.endpoint import stop_local_endpoint
from platforms.registry import LocalRegistry
from tests.tickets import qa_tickets

pytestmark = pytest.mark.slow  # real `tunegate run` processes, training and an endpoint process

ENDPOINT = Path("endpoints") / "tunegate-extractive-qa"  # the model's own endpoint
TUNEGATE = Path(sys.executable).parent / "tunegate"
# What the run's log says once each stage is under way
KILL_WHEN = {
    "ingest": "ingest: started",
    "screen": "screen: started",
    "split": "split: started",
    "train": "trainer | ",
    "evaluate": "evaluate: started",
    "rollout": "rollout: version",
}


def _command(data: Path, store: Path, summary: Path) -> list[str]:
    sets = [
        f"store={store}",
        "dask.n_workers=1",
        "train.epochs=1",
        "train.max_length=96",
        'train.args={"doc_stride": 32}',
        "evaluate.min_gain_over_base=-100",
        "evaluate.bootstrap_samples=0",
        "evaluate.min_test_records=1",  # a test split of a few records
        "serving.runtime=torch",  # no export: recovery is what is tested here
    ]
    command = [str(TUNEGATE), "run", "--input", str(data), "--approval", "auto"]
    return [*command, *(x for s in sets for x in ("--set", s)), "--summary", str(summary)]


@pytest.mark.parametrize("stage", list(KILL_WHEN))
def test_a_run_killed_at_a_stage_is_finished_by_the_next(
    tmp_path: Path, stage: str, prefect_server: dict[str, str]
) -> None:
    store, summary = tmp_path / "store", tmp_path / "summary.json"
    command = _command(qa_tickets(tmp_path), store, summary)
    # the session's Prefect server, as a deployment's runs have (not a temporary one per run)
    env = {
        **os.environ,
        **prefect_server,
        "TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS": "",
        "HF_HUB_OFFLINE": "1",
    }
    log_path = tmp_path / "killed.log"
    with log_path.open("w") as log:
        run = subprocess.Popen(
            command, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True
        )
    try:
        deadline = time.monotonic() + 300
        while KILL_WHEN[stage] not in log_path.read_text(errors="replace"):
            assert run.poll() is None, log_path.read_text()[-3000:]
            assert time.monotonic() < deadline, f"{stage} never started"
            time.sleep(0.2)
        os.killpg(run.pid, signal.SIGKILL)
        run.wait(30)
        assert not summary.exists()

        again = subprocess.run(
            command, capture_output=True, text=True, env=env, timeout=600, check=False
        )
        assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
        assert json.loads(summary.read_text())["status"] == "completed"
        verify = CliRunner().invoke(app, ["store", "verify", "--set", f"store={store}"])
        assert verify.exit_code == 0, verify.output
        assert not list((store / "datasets").glob("*/.tmp-*"))
        versions = LocalRegistry(store).versions("tunegate-extractive-qa")
        assert [v.version for v in versions] == [1]
        pid = json.loads((store / ENDPOINT / "server.json").read_text())["pid"]
        servers = subprocess.run(
            ["pgrep", "-f", f"endpoint serve .*--state-dir {store / ENDPOINT}"],
            capture_output=True, text=True, check=False,
        ).stdout.split()  # fmt: skip
        assert servers == [str(pid)], servers  # one endpoint, and it is the recorded one
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(run.pid, signal.SIGKILL)
        stop_local_endpoint(store / ENDPOINT)
