"""Notifications through Prefect: the `notify:` config, the automations and block `tunegate
deployments apply` makes, and messages that reach a webhook from a real `prefect server start`
(its triggers and actions services fire the automations)."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest
import yaml
from prefect import get_client
from prefect.blocks.notifications import CustomWebhookNotificationBlock
from prefect.client.schemas.sorting import AutomationSort, FlowRunSort
from prefect.flow_runs import resume_flow_run
from typer.testing import CliRunner

from cli.main import app
from flows.automations import MESSAGES, apply_notifications, automation_name
from flows.config import ConfigError, validate_config
from platforms.notify import BLOCK_NAME, EVENTS, NotifyConfig
from tests.prefect_server import ROOT, background, tunegate_run
from tests.tickets import qa_tickets

RECEIVE_SECONDS = 60
RUN_SECONDS = 300


def _state(run_id: UUID | str) -> Any:
    """The flow run's state on the API."""
    with get_client(sync_client=True) as client:
        return client.read_flow_run(UUID(str(run_id))).state


def _wait_for(webhook, needle: str) -> dict[str, Any]:
    """The first message the receiver got whose text holds `needle` (polled, bounded)."""
    deadline = time.monotonic() + RECEIVE_SECONDS
    while time.monotonic() < deadline:
        for message in list(webhook.received):
            if needle in message.get("text", ""):
                return message
        time.sleep(0.5)
    raise AssertionError(f"no message with {needle!r} in {RECEIVE_SECONDS}s: {webhook.received}")


def _automations() -> dict[str, list[Any]]:
    with get_client(sync_client=True) as client:
        found: dict[str, list[Any]] = {}
        # 3.8.8's sync client sends None for unset fields
        for automation in client.read_automations(sort=AutomationSort.NAME_ASC, limit=200):
            found.setdefault(automation.name, []).append(automation)
    return found


@pytest.fixture
def no_automations_after(prefect_server):
    """The session's server is shared: leave it without tunegate's automations."""
    yield
    apply_notifications(NotifyConfig())


# config


def test_an_earlier_webhook_config_still_loads() -> None:
    cfg = validate_config(
        {
            "notify": {
                "webhook_url": "https://hooks.example/T0/B0/token",
                "events": ["approval-waiting", "gate-failed", "rolled-back"],
                "attempts": 3,
                "timeout_seconds": 5,
            }
        }
    )
    assert cfg.notify.enabled and cfg.notify.block is None
    assert not validate_config({}).notify.enabled  # nothing configured: nothing sent
    assert set(MESSAGES) == set(EVENTS)  # every event kind has its message


@pytest.mark.parametrize(
    ("notify", "field"),
    [
        ({"block": "slack webhook"}, "notify.block"),
        ({"events": ["run-finished"]}, "notify.events"),
        ({"webhook_url": "hooks.example/x"}, "notify.webhook_url"),
        ({"block": "slack-webhook/ml", "webhook_url": "https://hooks.example/x"}, "notify"),
    ],
)
def test_a_bad_notify_section_exits_2_naming_the_field(
    notify: dict[str, Any], field: str, tmp_path: Path
) -> None:
    with pytest.raises(ConfigError, match=f"^invalid config: {field}"):
        validate_config({"notify": notify})
    config = tmp_path / "bad.yaml"
    config.write_text(yaml.safe_dump({"notify": notify}))
    result = CliRunner().invoke(app, ["config", "show", "-c", str(config)])
    assert result.exit_code == 2 and field in result.output


# automations on a real server


@pytest.mark.slow
def test_applying_twice_leaves_one_automation_of_each_kind(
    prefect_server, no_automations_after
) -> None:
    webhook = NotifyConfig(webhook_url="http://127.0.0.1:9/hook")
    first = apply_notifications(webhook)
    assert all(line.startswith("created") for line in first) and len(first) == len(EVENTS)
    made = _automations()
    again = apply_notifications(webhook)
    assert all(line.startswith("updated") for line in again)
    assert _automations().keys() == made.keys()
    for kind in EVENTS:
        [one] = _automations()[automation_name(kind)]
        assert one.id == made[automation_name(kind)][0].id and one.tags == ["tunegate"]
    block = CustomWebhookNotificationBlock.load(BLOCK_NAME)
    assert block.secrets.get_secret_value() == {"webhook_url": "http://127.0.0.1:9/hook"}
    assert "127.0.0.1:9" not in block.url  # the URL (and its token) is the block's secret

    # a block the team already has, and fewer events: the others' automations go
    CustomWebhookNotificationBlock(name="team", url="http://127.0.0.1:9/team").save(
        "team-hook", overwrite=True
    )
    with get_client(sync_client=True) as client:
        team_id = client.read_block_document_by_name("team-hook", "custom-webhook").id
    apply_notifications(NotifyConfig(block="custom-webhook/team-hook", events=["run-failed"]))
    left = _automations()
    assert [n for n in left if n.startswith("tunegate: ")] == [automation_name("run-failed")]
    [failed] = left[automation_name("run-failed")]
    assert failed.actions[0].block_document_id == team_id

    with pytest.raises(ConfigError, match=r"^notify\.block: no block slack-webhook/nobody"):
        apply_notifications(NotifyConfig(block="slack-webhook/nobody"))


def _wait_for_pause(started_after: float, timeout: float = 180) -> UUID:
    deadline = time.monotonic() + timeout
    with get_client(sync_client=True) as client:
        while time.monotonic() < deadline:
            for run in client.read_flow_runs(limit=20, sort=FlowRunSort.EXPECTED_START_TIME_DESC):
                if run.state and run.state.is_paused() and run.created.timestamp() > started_after:
                    return run.id
            time.sleep(0.5)
    raise AssertionError("no flow run paused for approval")


@pytest.mark.slow
def test_a_failed_run_reaches_the_webhook_through_the_block(
    prefect_server, no_automations_after, make_config, webhook, tmp_path: Path
) -> None:
    apply_notifications(NotifyConfig(webhook_url=webhook.url))
    # a file that is there but holds no Arrow data: ingest fails inside the run
    broken = tmp_path / "nowhere" / "tickets.arrow"
    broken.parent.mkdir()
    broken.write_bytes(b"not an Arrow stream")
    cfg = make_config(ingest={"inputs": [str(broken)]})
    with tunegate_run(cfg, prefect_server, tmp_path / "run") as (proc, summary):
        assert proc.wait(RUN_SECONDS) == 1, (tmp_path / "run" / "run.log").read_text()
    run_id = json.loads(summary.read_text())["flow_run_id"]
    # the command's last words are its own: not Dask's 18 lines of closing its cluster at exit
    output = (tmp_path / "run" / "run.log").read_text()
    assert not [line for line in output.splitlines() if "INFO" in line and "distributed." in line]
    assert _state(run_id).is_failed()

    message = _wait_for(webhook, run_id)
    assert message["subject"].startswith("tunegate: retrain run ")
    assert message["subject"].endswith(" Failed")
    assert f"({run_id}) ended Failed: ingest failed." in message["body"]
    assert "nowhere" not in message["text"]  # the exception's text stays in the run
    assert f"/runs/flow-run/{run_id}" in message["body"]


@pytest.mark.slow
def test_a_paused_run_sends_the_approve_command_and_a_rejection_its_counts(
    prefect_server, no_automations_after, make_config, webhook, tmp_path: Path
) -> None:
    apply_notifications(NotifyConfig(webhook_url=webhook.url))
    cfg = make_config(
        ingest={"inputs": [str(qa_tickets(tmp_path))]},
        approval={"mode": "manual", "timeout_seconds": 120, "poll_seconds": 1},
    )
    started = time.time() - 1
    with tunegate_run(cfg, prefect_server, tmp_path / "run") as (proc, _):
        run_id = _wait_for_pause(started)
        waiting = _wait_for(webhook, "waits for a reviewer's approval")
        text = waiting["text"]
        assert f"tunegate approve {run_id} --reviewer you@example.com" in text
        assert f"tunegate reject {run_id} --reviewer you@example.com" in text
        ui = prefect_server["PREFECT_UI_URL"]
        assert f"Review (the run's page, its review artifact and form): {ui}" in text
        assert f"/runs/flow-run/{run_id}" in text
        assert "Kenji" not in str(webhook.received)  # no record text in any message

        resume_flow_run(
            run_id,
            run_input={"decision": "reject", "reviewer": "rev@example.com", "comment": "Kenji"},
        )
        proc.wait(RUN_SECONDS)
    state = _state(run_id)
    assert state.is_failed()
    assert state.name == "Rejected"  # a decision, not a broken run
    rejected = _wait_for(webhook, "was rejected")
    assert rejected["subject"] == "tunegate: data for tunegate-extractive-qa rejected"
    assert "(by a reviewer): 36 kept, 36 redacted, 0 quarantined;" in rejected["body"]
    assert f"/runs/flow-run/{run_id}" in rejected["body"]
    time.sleep(5)  # the run's Rejected state is no failure: no run-failed message follows
    assert [m["subject"] for m in webhook.received if "ended" in m["body"]] == []
    assert "Kenji" not in str(webhook.received) and "rev@example.com" not in str(webhook.received)


@pytest.mark.slow
def test_deployments_apply_makes_the_configs_automations(
    prefect_server, no_automations_after, webhook, tmp_path: Path
) -> None:
    config = tmp_path / "notify.yaml"
    events = ["run-failed", "approval-waiting"]
    config.write_text(yaml.safe_dump({"notify": {"webhook_url": webhook.url, "events": events}}))
    result = CliRunner().invoke(app, ["deployments", "apply", "-c", str(config)])
    assert result.exit_code == 0, result.output
    assert "created automation tunegate: run-failed" in result.output
    assert "created automation tunegate: approval-waiting" in result.output
    made = [n for n in _automations() if n.startswith("tunegate: ")]
    assert sorted(made) == sorted(automation_name(kind) for kind in events)

    config.write_text(yaml.safe_dump({"notify": {"block": "slack-webhook/nobody"}}))
    result = CliRunner().invoke(app, ["deployments", "apply", "-c", str(config)])
    assert result.exit_code == 2 and "notify.block: no block slack-webhook/nobody" in result.output


_DECIDES = """
from prefect import flow
from prefect.events import emit_event

from platforms.notify import emit_decision, model_resource


@flow(name="decides")
def decide() -> None:
    emit_decision("gate-failed", "m-qa", {"verdict": "cannot-judge", "reasons": ["3 < 30"]})
    emit_decision("promoted", "m-qa", {"version": 4, "endpoint": "http://127.0.0.1:1/v1"})
    emit_decision("rolled-back", "m-qa", {"version": 5, "step": "canary-10"})


decide()
emit_event(  # the monitor flow's event (resource and payload as it emits them)
    event="tunegate.drift.detected",
    resource=model_resource("m-qa"),
    payload={
        "model": "m-qa",
        "version": 4,
        "drifted": ["answer_length", "pii_rate"],
        "since": "2026-11-29T06:00:00Z",
        "until": "2026-11-29T07:00:00Z",
    },
)
"""


@pytest.mark.slow
def test_each_decision_and_drift_event_reaches_the_webhook_with_its_numbers(
    prefect_server, no_automations_after, webhook, tmp_path: Path
) -> None:
    """The messages of tunegate's own events, as the run and the monitor emit them (in a process
    of their own, as a run's are)."""
    apply_notifications(NotifyConfig(webhook_url=webhook.url))
    script = tmp_path / "decides.py"
    script.write_text(_DECIDES)
    env = {**prefect_server, "PYTHONPATH": str(ROOT)}
    with background([sys.executable, str(script)], env, tmp_path / "decides.log") as p:
        assert p.wait(RUN_SECONDS) == 0, (tmp_path / "decides.log").read_text()
    gate = _wait_for(webhook, "did not pass the gate")
    assert gate["subject"] == "tunegate: m-qa candidate cannot-judge"
    assert "nothing was registered: 3 < 30." in gate["body"] and "/runs/flow-run/" in gate["body"]
    promoted = _wait_for(webhook, "is the champion now")
    assert (
        "m-qa version 4 is the champion now, serving at http://127.0.0.1:1/v1." in promoted["body"]
    )
    rolled_back = _wait_for(webhook, "rolled back at step")
    assert rolled_back["subject"] == "tunegate: m-qa version 5 rolled back"
    assert "rolled back at step canary-10;" in rolled_back["body"]
    drift = _wait_for(webhook, "drifted between")
    assert drift["body"] == (
        "m-qa version 4 drifted between 2026-11-29T06:00:00Z and 2026-11-29T07:00:00Z: "
        "answer_length, pii_rate."
    )
