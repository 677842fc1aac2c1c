"""Webhook notifications: delivered, retried when transient, never failing the run."""

from __future__ import annotations

import logging

from platforms.notify import NotifyConfig, send


def test_a_notification_is_posted_as_json(webhook) -> None:
    config = NotifyConfig(webhook_url=webhook.url)
    assert send(config, "gate-failed", "f1 >= 50: 12.00 (required 50.00)", {"f1": 12.0})
    [body] = webhook.received
    assert body["event"] == "gate-failed" and body["details"] == {"f1": 12.0}
    assert body["text"] == "tunegate gate-failed: f1 >= 50: 12.00 (required 50.00)"
    assert body["flow_run_id"] is None  # outside a flow run


def test_server_errors_are_retried_and_refusals_are_not(webhook, caplog) -> None:
    config = NotifyConfig(webhook_url=webhook.url, attempts=3)
    webhook.statuses.extend([503])
    assert send(config, "rolled-back", "rolled back m:2", {})
    assert webhook.events() == ["rolled-back", "rolled-back"]  # 503, then delivered

    webhook.statuses.extend([400])
    with caplog.at_level(logging.WARNING):
        assert not send(config, "rolled-back", "again", {})
    assert len(webhook.received) == 3  # a 400 is not sent again
    assert "could not deliver the rolled-back notification (HTTP 400)" in caplog.text


def test_an_unreachable_webhook_is_a_warning_not_a_failure(caplog) -> None:
    config = NotifyConfig(webhook_url="http://127.0.0.1:9/hook", attempts=1)
    with caplog.at_level(logging.WARNING):
        assert not send(config, "approval-waiting", "waiting", {})
    assert "could not deliver the approval-waiting notification" in caplog.text


def test_only_the_chosen_events_are_sent(webhook) -> None:
    config = NotifyConfig(webhook_url=webhook.url, events=["gate-failed"])
    assert send(config, "approval-waiting", "waiting", {})
    assert webhook.received == []
    assert send(NotifyConfig(), "gate-failed", "no webhook configured", {})
