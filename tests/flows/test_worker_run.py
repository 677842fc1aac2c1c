"""retrain/manual run by a process worker: `tunegate deployments apply`, then
`prefect worker start`.

The deployments are registered with the installed `tunegate` command from a scratch directory, as
an operator would from theirs; the run's store and input are relative paths, so it only finds
them if the worker starts the run in the directory `tunegate deployments apply` ran in (as
`tunegate deployments serve` does with its own). Runs before any `tunegate deployments serve` test
(conftest.py orders it first): serve registers the same two deployments, and its runner would race
the worker for this run.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.prefect_server import process_worker, wait_for_state
from tests.tickets import qa_tickets

pytestmark = pytest.mark.slow

TUNEGATE = Path(sys.executable).with_name("tunegate")  # the installed console script
POOL = "tunegate-process"
FINISH_SECONDS = 75


def test_a_deployed_manual_run_completes_on_a_process_worker(
    prefect_server: dict[str, str], tmp_path: Path
) -> None:
    from prefect import get_client

    deploy = subprocess.run(
        [str(TUNEGATE), "deployments", "apply"],
        cwd=tmp_path,
        env=prefect_server,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert deploy.returncode == 0, deploy.stderr
    assert "deployed retrain/manual" in deploy.stderr

    qa_tickets(tmp_path, n_contexts=4)  # tmp_path/tickets.jsonl
    (tmp_path / "run.yaml").write_text(
        yaml.safe_dump(
            {
                "store": "store",  # relative: resolved in the directory `deployments apply` ran in
                "until": "split",
                "dask": {"n_workers": 1, "threads_per_worker": 1, "memory_limit": "2GiB"},
            }
        )
    )
    request = {"inputs": ["tickets.jsonl"], "approval": "auto", "config_file": "run.yaml"}
    log = tmp_path / "worker.log"
    with process_worker(prefect_server, log, POOL):
        with get_client(sync_client=True) as client:
            deployment = client.read_deployment_by_name("retrain/manual")
            assert deployment.job_variables == {"working_dir": str(tmp_path)}
            run = client.create_flow_run_from_deployment(
                deployment.id, parameters={"request": request}
            )
        run = wait_for_state(run.id, lambda r: bool(r.state and r.state.is_final()), FINISH_SECONDS)

    assert run.state.is_completed(), f"{run.state}\n{log.read_text()[-4000:]}"
    assert run.state.message == "data ingested, screened, approved and split"
    assert run.work_pool_name == POOL
    assert f"submitting flow run '{run.id}'" in log.read_text()  # this worker ran it, not a serve
    [split] = (tmp_path / "store" / "datasets" / "split").iterdir()
    assert (split / "manifest.json").is_file()
