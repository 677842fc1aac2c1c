"""Notifications: a webhook call when a run needs a person or something went wrong.

Events: `approval-waiting` (a run paused for a reviewer), `gate-failed` (a candidate was not
registered) and `rolled-back` (a rollout undid itself). The body is JSON: `event`, `message`,
`flow_run_id`, `ui_url` (the run in the Prefect UI when one is configured), `details` and `at`.
Messages and details hold counts, hashes and masked text only, never raw records.

Delivery is retried (a webhook is a network call: transient failures are expected) and a final
failure is logged as a warning naming the event: a notification that could not be sent never
fails the retraining run it reports on.
"""

from __future__ import annotations

import logging
import time
from datetime import UTC, datetime
from typing import Any, Literal

import httpx
from prefect.context import FlowRunContext
from pydantic import BaseModel, ConfigDict, Field

log = logging.getLogger(__name__)
Event = Literal["approval-waiting", "gate-failed", "rolled-back"]
EVENTS: tuple[Event, ...] = ("approval-waiting", "gate-failed", "rolled-back")


class NotifyConfig(BaseModel):
    """Who hears about runs that need attention."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    webhook_url: str | None = Field(
        None,
        description="POST a JSON message here (Slack/Teams incoming webhook, or any HTTP "
        "endpoint); none: no notifications.",
        pattern=r"^https?://",
    )
    events: list[Event] = Field(
        default_factory=lambda: list(EVENTS), description="Which events are sent."
    )
    attempts: int = Field(3, ge=1, le=10, description="Delivery attempts before giving up.")
    timeout_seconds: float = Field(10.0, gt=0, le=120, description="Per attempt.")


def notification(event: Event, message: str, details: dict[str, Any]) -> dict[str, Any]:
    """The JSON body of one notification, for the current flow run when there is one."""
    context = FlowRunContext.get()
    run_id = str(context.flow_run.id) if context and context.flow_run else None
    return {
        "event": event,
        "message": message,
        "flow_run_id": run_id,
        "ui_url": flow_run_url(run_id),
        "details": details,
        "at": datetime.now(UTC).isoformat(timespec="seconds"),
        "text": f"tunegate {event}: {message}",  # what Slack and Teams show
    }


def send(config: NotifyConfig, event: Event, message: str, details: dict[str, Any]) -> bool:
    """Deliver one notification; True when the webhook accepted it (or none is configured)."""
    if config.webhook_url is None or event not in config.events:
        return True
    body = notification(event, message, details)
    for attempt in range(1, config.attempts + 1):
        try:
            response = httpx.post(config.webhook_url, json=body, timeout=config.timeout_seconds)
        except httpx.TransportError as exc:
            problem = f"{type(exc).__name__}"
        else:
            if response.is_success:
                return True
            problem = f"HTTP {response.status_code}"
            if response.status_code < 500 and response.status_code != 429:
                break  # the webhook refused this message: sending it again will not help
        if attempt < config.attempts:
            time.sleep(min(2 ** (attempt - 1), 10))
    log.warning("could not deliver the %s notification (%s); the run goes on", event, problem)
    return False


def flow_run_url(run_id: str | None) -> str | None:
    """The flow run's page in the Prefect UI, when a UI URL is configured."""
    from prefect.settings import PREFECT_UI_URL

    base = PREFECT_UI_URL.value()
    return f"{base.rstrip('/')}/runs/flow-run/{run_id}" if base and run_id else None
