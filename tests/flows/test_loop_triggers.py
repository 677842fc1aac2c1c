"""The loop closes itself on a real Prefect server: the monitor's drift event and the inbox
watcher's new-data event start retrain/nightly through its deployment trigger, once per
cool-down, with the event as the run's reason.

The deployments are registered by `tunegate deployments apply` (as an operator would), the
events are emitted by `tunegate monitor --emit` and the `watch-inbox` flow; the runs the trigger
creates are read back from the API (no worker is started: a created run is the trigger's work).
"""

from __future__ import annotations

import shutil
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml
from prefect import get_client
from prefect.client.schemas.filters import DeploymentFilter, DeploymentFilterId
from prefect.client.schemas.sorting import FlowRunSort
from prefect.events.worker import EventsWorker
from typer.testing import CliRunner

from cli.main import app
from flows.config import PipelineConfig, RetrainRequest
from flows.inbox import watch_inbox
from tests.tasks.test_monitor import MODEL, _in_distribution, _serve, _shifted, champion

pytestmark = pytest.mark.slow
__all__ = ["champion"]  # the fixture, shared with tests/tasks/test_monitor.py


def _config_file(config: PipelineConfig, tmp_path: Path, **extra: Any) -> Path:
    path = tmp_path / "loop.yaml"
    data = {
        "store": config.store,
        "registry": {"model_name": MODEL},
        "monitor": {"sample_size": 150, "min_requests": 30, "cooldown_hours": 6},
        **extra,
    }
    path.write_text(yaml.safe_dump(data))
    return path


def _runs_of_nightly() -> list[Any]:
    with get_client(sync_client=True) as client:
        nightly = client.read_deployment_by_name("retrain/nightly")
        return client.read_flow_runs(
            deployment_filter=DeploymentFilter(id=DeploymentFilterId(any_=[nightly.id])),
            sort=FlowRunSort.ID_DESC,
            limit=200,  # this server refuses a null limit
        )


def _wait_for_runs(count: int, seconds: float = 60) -> list[Any]:
    """The nightly deployment's runs once there are `count` (or what there is after `seconds`)."""
    EventsWorker.drain_all()
    deadline = time.monotonic() + seconds
    runs = _runs_of_nightly()
    while len(runs) < count and time.monotonic() < deadline:
        time.sleep(1)
        runs = _runs_of_nightly()
    return runs


def _apply(config_file: Path, inbox: str) -> None:
    result = CliRunner().invoke(
        app, ["deployments", "apply", "--config", str(config_file), "--input", inbox]
    )
    assert result.exit_code == 0, result.output
    assert "monitor/hourly" in result.output and "watch-inbox/every-minute" in result.output


def _monitor(config_file: Path, since: datetime, until: datetime) -> CliRunner:
    return CliRunner().invoke(
        app,
        [
            "monitor",
            MODEL,
            "-c",
            str(config_file),
            "--since",
            since.isoformat(),
            "--until",
            until.isoformat(),
            "--emit",
        ],
    )


def test_drift_starts_one_retrain_run_and_the_cooldown_holds_the_next(
    prefect_server: dict[str, str],
    champion: tuple[PipelineConfig, list[dict[str, Any]]],
    tmp_path: Path,
) -> None:
    config, unseen = champion
    config_file = _config_file(config, tmp_path)
    _apply(config_file, str(tmp_path / "inbox" / "*.jsonl"))
    before = len(_runs_of_nightly())
    start = datetime.now(UTC) - timedelta(hours=3)
    _serve(config, _in_distribution(unseen[:80]), start)
    _serve(config, _in_distribution(unseen[80:]), start + timedelta(hours=1))
    _serve(config, _shifted(100), start + timedelta(hours=2))

    calm = _monitor(config_file, start + timedelta(hours=1), start + timedelta(hours=2))
    assert calm.exit_code == 0, calm.output
    assert '"drift": false' in calm.stdout and '"judged": true' in calm.stdout
    # that a clear window starts nothing is checked at the end, after the cool-down's wait: a
    # run it started would be one run too many there

    shifted = _monitor(config_file, start + timedelta(hours=2), start + timedelta(hours=3))
    assert '"drift": true' in shifted.stdout, shifted.output
    runs = _wait_for_runs(before + 1)
    assert len(runs) == before + 1
    [run] = [r for r in runs if r.parameters["request"].get("reason")]
    request = RetrainRequest.model_validate(run.parameters["request"])
    assert request.reason.startswith("drift: ") and "input_length" in request.reason
    assert request.approval.value == "auto-if-clean"  # the nightly deployment's own request

    again = _monitor(config_file, start + timedelta(hours=2), start + timedelta(hours=3))
    assert '"drift": true' in again.stdout
    # inside the cool-down (and the clear window started none)
    assert len(_wait_for_runs(before + 2, seconds=15)) == before + 1


def test_a_new_file_in_the_inbox_starts_one_run_and_the_same_file_none(
    prefect_server: dict[str, str],
    champion: tuple[PipelineConfig, list[dict[str, Any]]],
    tmp_path: Path,
) -> None:
    config, _ = champion
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    # its own model, so the drift test's cool-down does not hold this one
    config_file = _config_file(
        config, tmp_path, registry={"model_name": "inbox-qa"}, monitor={"cooldown_hours": 1}
    )
    _apply(config_file, str(inbox / "*.jsonl"))
    request = RetrainRequest(
        inputs=[str(inbox / "*.jsonl")], approval="auto-if-clean", config_file=str(config_file)
    )
    assert watch_inbox(request) == []  # an empty inbox announces nothing
    before = len(_runs_of_nightly())

    dropped = inbox / "tickets-1.jsonl"
    dropped.write_text(
        '{"id": "1", "question": "When?", "context": "Sent on 12 March.", '
        '"answers": {"text": ["12 March"], "answer_start": [8]}}\n'
    )
    [arrival] = watch_inbox(request)
    assert arrival.uri.endswith("tickets-1.jsonl")
    runs = _wait_for_runs(before + 1)
    assert len(runs) == before + 1
    reasons = [r.parameters["request"].get("reason", "") for r in runs]
    assert any(r.startswith("new data: ") and "tickets-1.jsonl" in r for r in reasons)

    assert watch_inbox(request) == []  # the same file again
    shutil.copy(dropped, inbox / "tickets-1-copy.jsonl")  # the same content, renamed
    assert watch_inbox(request) == []
    assert len(_wait_for_runs(before + 2, seconds=10)) == before + 1
