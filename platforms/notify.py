"""Notifications: who hears about a run, and the Prefect events tunegate emits for its decisions.

People are told through Prefect: `tunegate deployments apply` creates one automation per event
kind (flows/automations.py), each sending through a notification block (Slack, Teams, e-mail,
any webhook). Two kinds of event feed them:

- Prefect's own flow-run events: `prefect.flow-run.Failed` / `Crashed` (`run-failed`) and
  `prefect.flow-run.Paused` (`approval-waiting`);
- tunegate's decisions, emitted here where they are made (`emit_decision`): data rejected, gate
  failed, model promoted, rollout rolled back, and the monitor's `tunegate.drift.detected`.

A decision's event concerns the model (`tunegate.model.<name>`); inside a flow run Prefect
relates it to the run, its flow and deployment. Its payload holds counts, hashes, versions and
metric values only, never record text, so no message built from it can leak a record.
"""

from __future__ import annotations

import logging
import re
from typing import Any, Literal, get_args

from prefect.context import FlowRunContext
from prefect.events import emit_event
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

log = logging.getLogger(__name__)
Event = Literal[
    "run-failed",
    "approval-waiting",
    "data-rejected",
    "gate-failed",
    "promoted",
    "rolled-back",
    "drift-detected",
]
EVENTS: tuple[Event, ...] = get_args(Event)
Decision = Literal["data-rejected", "gate-failed", "promoted", "rolled-back"]
DECISION_EVENTS: dict[Decision, str] = {  # the Prefect event name of each tunegate decision
    "data-rejected": "tunegate.data.rejected",
    "gate-failed": "tunegate.gate.failed",
    "promoted": "tunegate.model.promoted",
    "rolled-back": "tunegate.rollout.rolled-back",
}
DRIFT_EVENT = "tunegate.drift.detected"  # emitted by the monitor flow
BLOCK_NAME = "tunegate-notify"  # the Custom Webhook block made from `notify.webhook_url`


class NotifyConfig(BaseModel):
    """Who hears about runs that need attention: a notification block and the events sent."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    webhook_url: str | None = Field(
        None,
        description="Send each message as JSON (`text`, `subject`, `body`) to this URL (a "
        "Slack or Teams incoming webhook, or any HTTP endpoint): `tunegate deployments apply` "
        f"saves it as the Custom Webhook block `{BLOCK_NAME}` (the URL kept as the block's "
        "secret). None, and no `block`: no notifications.",
        pattern=r"^https?://",
    )
    block: str | None = Field(
        None,
        description="An existing Prefect notification block to send through, as "
        "`<block-type-slug>/<block-name>` (e.g. `slack-webhook/ml-alerts`, "
        "`ms-teams-webhook/ml`, `email/oncall`); instead of `webhook_url`.",
    )
    events: list[Event] = Field(
        default_factory=lambda: list(EVENTS), description="Which events are sent."
    )
    timeout_seconds: float = Field(
        10.0, gt=0, le=120, description="The webhook call's timeout (`webhook_url` only)."
    )
    attempts: int | None = Field(
        None,
        ge=1,
        le=10,
        description="No longer used (Prefect's notification action sends once); accepted so "
        "configs written for the earlier webhook still load.",
    )

    @field_validator("block")
    @classmethod
    def _block_reference(cls, value: str | None) -> str | None:
        if value is not None and not re.fullmatch(r"[a-z0-9][a-z0-9-]*/[^/\s]+", value):
            raise ValueError(
                f"expected <block-type-slug>/<block-name> (e.g. slack-webhook/ml-alerts; "
                f"`prefect block ls` lists them), got {value!r}"
            )
        return value

    @model_validator(mode="after")
    def _one_destination(self) -> NotifyConfig:
        if self.webhook_url and self.block:
            raise ValueError(
                "notify.block and notify.webhook_url both set: name one destination (the block, "
                "or the URL tunegate saves as a block)"
            )
        if self.attempts is not None:
            log.warning("notify.attempts is no longer used (Prefect sends each message once)")
        return self

    @property
    def enabled(self) -> bool:
        """Whether any message is sent at all."""
        return bool((self.webhook_url or self.block) and self.events)


def model_resource(model: str) -> dict[str, str]:
    """The Prefect resource a model's events concern (the monitor's drift events use it too)."""
    return {"prefect.resource.id": f"tunegate.model.{model}", "prefect.resource.name": model}


def emit_decision(decision: Decision, model: str, payload: dict[str, Any]) -> str | None:
    """Emit the Prefect event of one of tunegate's decisions about `model`, related to the
    current flow run when there is one; the event's id, or None when events are off (no API).

    `payload` must hold counts, hashes, versions and metric values only: automations put it in
    messages. Emitting never fails the run (Prefect's events worker delivers in the background).
    """
    context = FlowRunContext.get()
    related = []
    if context and context.flow_run:
        run = context.flow_run
        related.append(
            {
                "prefect.resource.id": f"prefect.flow-run.{run.id}",
                "prefect.resource.role": "flow-run",
                "prefect.resource.name": run.name,
            }
        )
    event = emit_event(
        event=DECISION_EVENTS[decision],
        resource=model_resource(model),
        related=related,
        payload={"model": model, **payload},
    )
    if event is None:
        log.debug("no Prefect events client: the %s event of %s was not emitted", decision, model)
        return None
    return str(event.id)


def flow_run_url(run_id: str | None) -> str | None:
    """The flow run's page in the Prefect UI, when a UI URL is configured."""
    from prefect.settings import PREFECT_UI_URL

    base = PREFECT_UI_URL.value()
    return f"{base.rstrip('/')}/runs/flow-run/{run_id}" if base and run_id else None
