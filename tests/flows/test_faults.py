"""SIGKILL to `tunegate run` (no handler runs, nothing is cleaned up) at every stage and at every
rollout step, then the same command again, until a run completes.

One chain, not one run per kill: each run is killed once the stage after the previous kill is
under way, so the next run has to finish what the killed one left (reusing what it finished) to
get that far. The first rollout is killed after its deployment at 0% and after its first 100%;
a second version's rollout at its deployment and each canary step (the last kill lands before
or after the old deployment's retirement). Whatever the kills left, the store verifies, there is
no scratch folder, the endpoint serves only what passed its checks (the champion), one server
answers, and the versions are those the runs registered.
"""

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
from platforms.registry import MlflowRegistry
from tests.tickets import qa_tickets

pytestmark = pytest.mark.slow  # real `tunegate run` processes, training and an endpoint process

TUNEGATE = Path(sys.executable).parent / "tunegate"
MODEL = "tunegate-extractive-qa"
ENDPOINT = Path("endpoints") / MODEL  # the model's own endpoint
# What the run's log says once each stage (or rollout step) is under way or done
FIRST_RUN_KILLS = [
    "ingest: started",
    "screen: started",
    "split: started",
    "trainer | ",
    "evaluate: started",
    "rollout: version",
    "rollout: deploy",  # the first deployment at 0%, before its smoke test
    "rollout: first deployment",  # at 100%, before the champion alias moved
]
SECOND_VERSION_KILLS = [
    "rollout: deploy",  # beside the champion's, at 0%
    "rollout: canary 50%",
    "rollout: canary 100%",  # the champion's deployment at 0%, or retired, not yet promoted
]


def _command(data: Path, store: Path, summary: Path, *more: str) -> list[str]:
    sets = [
        f"store={store}",
        "dask.n_workers=1",
        "train.epochs=1",
        "train.max_length=96",
        'train.args={"doc_stride": 32}',
        "evaluate.min_gain_over_base=-100",
        "evaluate.max_regression=100",
        "evaluate.bootstrap_samples=0",
        "evaluate.min_test_records=1",  # a test split of a few records
        "serving.runtime=torch",  # no export: recovery is what is tested here
        "rollout.steps=[50, 100]",
        "rollout.hold_requests=3",
        "rollout.min_requests=3",
        "rollout.hold_seconds=300",
        # the canary's latency guard is test_rollout's: here a p95 measured while the other test
        # worker trains must not roll back the rollout this test kills and resumes
        "rollout.max_p95_ratio=10",
        "rollout.p95_allowance_ms=2000",
        # no users on this endpoint: each step's live window advances on the replay, at once
        "rollout.live.on_cannot_judge=smoke-only",
        "rollout.live.wait_seconds=0",
        *more,
    ]
    command = [str(TUNEGATE), "run", "--input", str(data), "--approval", "auto"]
    return [*command, *(x for s in sets for x in ("--set", s)), "--summary", str(summary)]


def _kill_when(command: list[str], marker: str, log_path: Path, env: dict[str, str]) -> None:
    """Run `command` until its log shows `marker`, then SIGKILL its whole process group."""
    with log_path.open("w") as log:
        run = subprocess.Popen(
            command, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True
        )
    try:
        deadline = time.monotonic() + 300
        while marker not in log_path.read_text(errors="replace"):
            assert run.poll() is None, f"ended before {marker!r}:\n" + log_path.read_text()[-3000:]
            assert time.monotonic() < deadline, f"{marker!r} never came"
            time.sleep(0.1)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(run.pid, signal.SIGKILL)
        run.wait(30)


def _completes(command: list[str], summary: Path, env: dict[str, str]) -> None:
    again = subprocess.run(command, capture_output=True, text=True, env=env, timeout=600)
    assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
    assert json.loads(summary.read_text())["status"] == "completed"


def _consistent(store: Path, versions: list[int], champion: int) -> None:
    verify = CliRunner().invoke(app, ["store", "verify", "--set", f"store={store}"])
    assert verify.exit_code == 0, verify.output
    assert not list((store / "datasets").glob("*/.tmp-*"))
    registry = MlflowRegistry.local(store)
    assert [v.version for v in registry.versions(MODEL)] == versions
    assert registry.alias(MODEL, "champion").version == champion
    state = json.loads((store / ENDPOINT / "endpoint.json").read_text())
    traffic = state["traffic"]["traffic"]
    serving = {d["version"]: traffic.get(n, 0) for n, d in state["deployments"].items()}
    assert serving == {f"{MODEL}:{champion}": 100}, state  # only what passed its checks
    pid = json.loads((store / ENDPOINT / "server.json").read_text())["pid"]
    servers = subprocess.run(
        ["pgrep", "-f", f"endpoint serve .*--state-dir {store / ENDPOINT}"],
        capture_output=True, text=True, check=False,
    ).stdout.split()  # fmt: skip
    assert servers == [str(pid)], servers  # one endpoint, and it is the recorded one


def test_runs_killed_at_every_stage_and_rollout_step_are_finished_by_the_next(
    tmp_path: Path, prefect_server: dict[str, str]
) -> None:
    store, summary = tmp_path / "store", tmp_path / "summary.json"
    data = qa_tickets(tmp_path)
    # the session's Prefect server, as a deployment's runs have (not a temporary one per run)
    env = {
        **os.environ,
        **prefect_server,
        "TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS": "",
        "HF_HUB_OFFLINE": "1",
    }
    try:
        first = _command(data, store, summary)
        for i, marker in enumerate(FIRST_RUN_KILLS):
            _kill_when(first, marker, tmp_path / f"killed-{i}.log", env)
            assert not summary.exists()
        _completes(first, summary, env)
        _consistent(store, versions=[1], champion=1)

        second = _command(data, store, summary, "train.learning_rate=0.0002")
        summary.unlink()
        for i, marker in enumerate(SECOND_VERSION_KILLS):
            _kill_when(second, marker, tmp_path / f"killed-v2-{i}.log", env)
            assert not summary.exists()
        _completes(second, summary, env)
        _consistent(store, versions=[1, 2], champion=2)
    finally:
        stop_local_endpoint(store / ENDPOINT)
