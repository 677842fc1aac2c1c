"""The deployments' schedules make runs: a `prefect server start` from this environment (its
scheduler service on) schedules retrain/nightly's next runs once `tunegate deployments apply`
registered it. With SQLAlchemy 2.1 Prefect's scheduler failed every minute ("Can't evaluate bulk
DML statement") and no scheduled run was ever made: constraints.txt pins 2.0."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.prefect_server import ROOT, prefect_server

pytestmark = pytest.mark.slow


def test_the_nightly_deployment_gets_its_scheduled_runs(tmp_path: Path) -> None:
    from prefect import get_client
    from prefect.client.schemas.filters import DeploymentFilter, DeploymentFilterId
    from prefect.client.schemas.sorting import FlowRunSort
    from prefect.settings import PREFECT_API_URL, temporary_settings

    home = tmp_path / "home"
    home.mkdir()
    with prefect_server(home, scheduler=True) as env:
        done = subprocess.run(
            [sys.executable, "-m", "cli", "deployments", "apply"],
            cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
        with (
            temporary_settings(updates={PREFECT_API_URL: env["PREFECT_API_URL"]}),
            get_client(sync_client=True) as client,
        ):
            nightly = client.read_deployment_by_name("retrain/nightly")
            only = DeploymentFilter(id=DeploymentFilterId(any_=[nightly.id]))
            deadline, runs = time.monotonic() + 120, []
            while not runs and time.monotonic() < deadline:
                time.sleep(2)
                runs = client.read_flow_runs(
                    deployment_filter=only, limit=5, sort=FlowRunSort.EXPECTED_START_TIME_ASC
                )
        log = (home / "server.log").read_text(errors="replace")
    assert runs, f"no run of retrain/nightly scheduled in 120 s; server log:\n{log[-3000:]}"
    assert all(r.state and r.state.is_scheduled() for r in runs)
    # at 02:00 (the cron of deployments/prefect.yaml), in the deployment's timezone
    assert {(r.expected_start_time.hour, r.expected_start_time.minute) for r in runs} <= {
        (h, 0) for h in range(24)
    }
    assert "Can't evaluate bulk DML" not in log
