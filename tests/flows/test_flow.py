"""The retrain flow under a real (temporary) Prefect API, real Dask and the real spaCy model."""

from __future__ import annotations

import json
import time
from pathlib import Path
from uuid import UUID

import pytest
import yaml
from prefect import get_client
from prefect.client.schemas.filters import (
    ArtifactFilter,
    FlowRunFilter,
    FlowRunFilterId,
    TaskRunFilter,
)
from prefect.client.schemas.sorting import ArtifactSort, FlowRunSort
from prefect.input.actions import read_flow_run_input
from prefect.input.run_input import keyset_from_paused_state
from typer.testing import CliRunner

from cli.main import app
from flows.config import RetrainRequest
from flows.retrain import retrain, retrain_request, run_name
from flows.summary import RunSummary
from tests.prefect_server import artifacts, retrain_in_thread
from tests.tickets import qa_tickets

pytestmark = pytest.mark.slow  # every test runs retrain against a Prefect API server


def _config(make_config, tmp_path: Path, mode: str, timeout: int = 120):
    return make_config(
        ingest={"inputs": [str(qa_tickets(tmp_path))]},
        approval={"mode": mode, "timeout_seconds": timeout, "poll_seconds": 1},
    )


def _split_dir(cfg) -> Path:
    return Path(cfg.store) / "datasets" / "split"


def _wait_for_pause(known: set[str], timeout: float = 120) -> str:
    deadline = time.monotonic() + timeout
    with get_client(sync_client=True) as client:
        while time.monotonic() < deadline:
            for run in client.read_flow_runs(limit=200, sort=FlowRunSort.EXPECTED_START_TIME_DESC):
                if run.state and run.state.is_paused() and str(run.id) not in known:
                    return str(run.id)
            time.sleep(0.5)
    raise AssertionError("no flow run paused for approval")


def _paused_ids() -> set[str]:
    with get_client(sync_client=True) as client:
        return {
            str(r.id)
            for r in client.read_flow_runs(limit=200, sort=FlowRunSort.EXPECTED_START_TIME_DESC)
            if r.state and r.state.is_paused()
        }


def test_auto_approval_runs_every_stage(prefect_api, make_config, tmp_path: Path) -> None:
    cfg = _config(make_config, tmp_path, "auto")
    cfg = cfg.model_copy(  # the raw records deleted once approved (ingest.raw_retention)
        update={"ingest": cfg.ingest.model_copy(update={"raw_retention": "delete-after-approval"})}
    )
    state = retrain(cfg, return_state=True)
    summary: RunSummary = state.result()
    assert state.is_completed()
    assert list(summary.stages) == ["ingest", "screen", "approve", "split"]
    ingest = summary.stages["ingest"].details
    assert (ingest["read"], ingest["accepted"], ingest["quarantined"]) == (37, 36, 1)
    split = summary.stages["split"].details
    assert split["train"] + split["validation"] + split["test"] == 36
    assert summary.stages["approve"].details["reviewer"] == "policy"
    assert summary.stages["screen"].details["redacted"] > 0

    with get_client(sync_client=True) as client:
        artifacts = client.read_artifacts(  # 3.8.8's sync client sends None for unset fields
            artifact_filter=ArtifactFilter(),
            flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=[UUID(summary.flow_run_id)])),
            task_run_filter=TaskRunFilter(),
            limit=50,
            offset=0,
            sort=ArtifactSort.CREATED_DESC,
        )
    by_key = {a.key: a for a in artifacts}
    assert {
        "ingest-counts",
        "screening-report",
        "screening-counts",
        "approval",
        "split-counts",
    } <= set(by_key)
    report = str(by_key["screening-report"].data)
    assert "&lt;PERSON&gt;" in report and "Kenji" not in report  # shown as <PERSON>

    # The same inbox again, from a deployment's form: already approved and split, nothing new.
    config_file = tmp_path / "deployed.yaml"
    config_file.write_text(yaml.safe_dump(cfg.model_dump(mode="json")))
    again = retrain_request(
        RetrainRequest(config_file=str(config_file), approval="auto"), return_state=True
    )
    quiet: RunSummary = again.result()
    assert again.is_completed() and quiet.status == "nothing-new"
    [ingested] = (Path(cfg.store) / "datasets" / "ingest").glob("*/manifest.json")
    made = json.loads(ingested.read_text())["created_at"]
    assert again.message == quiet.message
    assert quiet.message.startswith(f"nothing new since {made}: the inputs hold only data")
    assert list(quiet.stages) == ["ingest"] and quiet.stages["ingest"].details["reused"]

    # the raw records were deleted after the approval, and the rerun above needed none of them
    # (a run that must screen them again reads the inputs again: test_raw_retention.py)
    assert not list(ingested.parent.rglob("*.parquet"))
    assert set(json.loads(ingested.read_text())["removed"]) == {"accepted", "quarantine"}


def test_manual_approval_pauses_and_resumes_with_the_reviewers_input(
    prefect_api, make_config, tmp_path: Path
) -> None:
    cfg = _config(make_config, tmp_path, "manual")
    known = _paused_ids()
    thread, out = retrain_in_thread(retrain, cfg)
    run_id = _wait_for_pause(known)
    assert not _split_dir(cfg).exists()
    with get_client(sync_client=True) as client:
        flow_run = client.read_flow_run(UUID(run_id))
    # named for its model and data, tagged with both
    assert flow_run.name == run_name(cfg) and flow_run.name.startswith("tunegate-extractive-qa · ")
    assert {"tunegate-extractive-qa", "extractive-qa"} <= set(flow_run.tags)
    paused = flow_run.state
    description = read_flow_run_input(keyset_from_paused_state(paused)["description"], UUID(run_id))
    assert "Screening report" in description and "Read the full review" in description
    assert "Since the last approval" in description
    review = artifacts(UUID(run_id))["review"]  # the page the form links to: masked records
    assert "&lt;PERSON&gt;" in review and "**Reason:** LOCATION in context" in review
    assert "Kenji" not in description  # the form: counts and links only
    # the review shows a replaced name's original (screen.review_shows: a false finding such
    # as a product turned <PERSON> is seen), and what training gets after it
    assert "Agent **Kenji Watanabe**" in review and "Agent **&lt;PERSON&gt;**" in review
    # the same review in a terminal, found through the paused run's artifact on the API
    shown = CliRunner().invoke(app, ["review", "show", run_id, "--set", f"store={cfg.store}"])
    assert shown.exit_code == 0, shown.output
    assert "Reason: LOCATION in context" in shown.stdout and "<PERSON>" in shown.stdout

    result = CliRunner().invoke(
        app,
        [
            "approve",
            run_id,
            "--reviewer",
            "dana@example.com",
            "--comment",
            "looks clean",
            "--exclude",
            "t0-q0",
        ],
    )
    assert result.exit_code == 0, result.output
    thread.join(120)

    state = out["state"]
    assert state.is_completed(), state.message
    summary = state.result()
    assert summary.stages["approve"].details["reviewer"] == "dana@example.com"
    assert summary.stages["split"].details["excluded"] == 1
    [audit_file] = (Path(cfg.store) / "approvals").glob("*/*.json")
    audit = json.loads(audit_file.read_text())
    assert audit["decision"] == "approved" and audit["comment"] == "looks clean"
    assert audit["flow_run_id"] == run_id and audit["exclude_ids"] == ["t0-q0"]
    assert audit["dataset_hash"] == summary.stages["screen"].details["content_hash"]

    # The same screened data again: the approval is reused, nobody is asked twice.
    again = retrain(cfg, return_state=True)
    assert again.is_completed()
    assert again.result().stages["approve"].details["reused"] is True


def test_rejection_stops_before_split(prefect_api, make_config, tmp_path: Path) -> None:
    cfg = _config(make_config, tmp_path, "manual")
    known = _paused_ids()
    thread, out = retrain_in_thread(retrain, cfg)
    run_id = _wait_for_pause(known)
    result = CliRunner().invoke(
        app, ["reject", run_id, "--reviewer", "sam", "--comment", "too many names"]
    )
    assert result.exit_code == 0, result.output
    thread.join(120)

    state = out["state"]
    assert state.is_failed()
    assert "rejected by sam: too many names" in state.message
    assert state.result(raise_on_failure=False).stages["approve"].status == "rejected"
    assert not _split_dir(cfg).exists()


def test_approval_timeout_counts_as_rejection(prefect_api, make_config, tmp_path: Path) -> None:
    cfg = _config(make_config, tmp_path, "manual", timeout=2)
    state = retrain(cfg, return_state=True)
    assert state.is_failed()
    assert "rejected by timeout" in state.message
    assert not _split_dir(cfg).exists()
    [audit_file] = (Path(cfg.store) / "approvals").glob("*/*.json")
    assert json.loads(audit_file.read_text())["decision"] == "rejected"


def test_auto_if_clean_waits_when_something_is_flagged(
    prefect_api, make_config, tmp_path: Path
) -> None:
    # Lisbon is a LOCATION, flagged for review by the default policy.
    cfg = _config(make_config, tmp_path, "auto-if-clean", timeout=2)
    state = retrain(cfg, return_state=True)
    assert state.is_failed() and "timeout" in state.message

    quiet = cfg.model_copy(
        update={
            "screen": cfg.screen.model_copy(
                update={
                    "entities": {k: v for k, v in cfg.screen.entities.items() if k != "LOCATION"}
                }
            )
        }
    )
    state = retrain(quiet, return_state=True)
    assert state.is_completed()
    assert state.result().stages["approve"].details["reviewer"] == "policy"


@pytest.mark.parametrize("command", ["approve", "reject"])
def test_resuming_an_unknown_run_is_a_clear_error(prefect_api, command: str) -> None:
    result = CliRunner().invoke(
        app, [command, "00000000-0000-0000-0000-000000000000", "--reviewer", "x"]
    )
    assert result.exit_code == 2
    assert "no flow run" in result.output


def test_an_edited_approval_is_asked_again_or_stops_an_automatic_run(
    prefect_api, make_config, tmp_path: Path
) -> None:
    approved = retrain(_config(make_config, tmp_path, "auto"), return_state=True)
    assert approved.is_completed()
    assert approved.result().stages["approve"].details["reviewer"] == "policy"
    [audit_file] = (Path(tmp_path) / "store" / "approvals").glob("*/*.json")
    audit = json.loads(audit_file.read_text())
    audit_file.write_text(json.dumps({**audit, "reviewer": "a human, honestly"}))

    manual = retrain(_config(make_config, tmp_path, "manual", timeout=2), return_state=True)
    assert manual.is_failed() and "rejected by timeout" in manual.message  # it paused again
    automatic = retrain(_config(make_config, tmp_path, "auto"), return_state=True)
    assert automatic.is_failed()
    assert audit_file.name in automatic.message and "tampered with" in automatic.message
    assert automatic.result(raise_on_failure=False).stages["approve"].status == "rejected"
