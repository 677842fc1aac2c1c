"""The retrain flow's notifications as Prefect automations, made by `tunegate deployments apply`.

One automation per event kind of `notify.events` (platforms/notify.py), named `tunegate: <kind>`
and tagged `tunegate`; each sends through one notification block: the block `notify.block`
names, or the Custom Webhook block `tunegate-notify` saved from `notify.webhook_url`. Applying
again updates each automation in place and deletes those of kinds no longer configured (and any
duplicate of a name), so there is always at most one of each.

Messages are Jinja templates Prefect renders when an automation fires (`{{ event }}`,
`{{ flow_run }}`); they hold run names, ids, links, counts, hashes, versions and metric values,
never record text. A failed run's state message is cut at its first colon: the stage or the
decision, not an exception's text (which may quote a record).
"""

from __future__ import annotations

from dataclasses import dataclass
from uuid import UUID

from prefect import get_client
from prefect.automations import AutomationCore, EventTrigger, Posture, SendNotification
from prefect.blocks.notifications import CustomWebhookNotificationBlock
from prefect.exceptions import ObjectNotFound

from flows.config import ConfigError
from platforms.notify import BLOCK_NAME, DECISION_EVENTS, DRIFT_EVENT, EVENTS, Event, NotifyConfig

FLOW_NAME = "retrain"
TAG = "tunegate"
_RUN = "{{ flow_run.name }} ({{ flow_run.id }})"
_LINK = "{{ flow_run|ui_url }}"
_MODEL = "{{ event.payload.model }}"


@dataclass(frozen=True)
class Message:
    """What one automation listens for and says."""

    expect: tuple[str, ...]
    subject: str
    body: str
    of_the_flow: bool  # a Prefect flow-run event: only the retrain flow's runs


MESSAGES: dict[Event, Message] = {
    "run-failed": Message(
        ("prefect.flow-run.Failed", "prefect.flow-run.Crashed"),
        "tunegate: retrain run {{ flow_run.name }} {{ event.resource['prefect.state-name'] }}",
        f"The retrain run {_RUN} ended {{{{ event.resource['prefect.state-name'] }}}}: "
        "{{ (event.resource['prefect.state-message'] or 'no message').split(':')[0] }}.\n"
        f"Run: {_LINK}",
        True,
    ),
    "approval-waiting": Message(
        ("prefect.flow-run.Paused",),
        "tunegate: {{ flow_run.name }} waits for approval",
        f"The retrain run {_RUN} waits for a reviewer's approval of its screened data.\n"
        f"Review (the run's page, its review artifact and form): {_LINK}\n"
        "Approve: tunegate approve {{ flow_run.id }} --reviewer you@example.com\n"
        "Reject: tunegate reject {{ flow_run.id }} --reviewer you@example.com "
        '--comment "why"\n'
        "Where reviewers sign (approval.require=verified): add --key ~/.ssh/id_ed25519 "
        "instead of --reviewer",
        True,
    ),
    "data-rejected": Message(
        (DECISION_EVENTS["data-rejected"],),
        f"tunegate: data for {_MODEL} rejected",
        f"The screened data {{{{ event.payload.dataset_hash[:16] }}}} for {_MODEL} was rejected "
        "(by {{ event.payload.decided_by }}): {{ event.payload.kept }} kept, "
        "{{ event.payload.redacted }} redacted, {{ event.payload.quarantined }} quarantined; "
        f"nothing was split or trained.\nRun: {_LINK}",
        False,
    ),
    "gate-failed": Message(
        (DECISION_EVENTS["gate-failed"],),
        f"tunegate: {_MODEL} candidate {{{{ event.payload.verdict }}}}",
        f"The candidate of {_MODEL} did not pass the gate ({{{{ event.payload.verdict }}}}), "
        "nothing was registered: {{ event.payload.reasons | join('; ') }}.\n"
        f"Run: {_LINK}",
        False,
    ),
    "promoted": Message(
        (DECISION_EVENTS["promoted"],),
        f"tunegate: {_MODEL} version {{{{ event.payload.version }}}} promoted",
        f"{_MODEL} version {{{{ event.payload.version }}}} is the champion now"
        "{% if event.payload.endpoint %}, serving at {{ event.payload.endpoint }}{% endif %}.\n"
        f"Run: {_LINK}",
        False,
    ),
    "rolled-back": Message(
        (DECISION_EVENTS["rolled-back"],),
        f"tunegate: {_MODEL} version {{{{ event.payload.version }}}} rolled back",
        f"The rollout of {_MODEL} version {{{{ event.payload.version }}}} rolled back at step "
        "{{ event.payload.step }}; the champion serves as before.\n"
        f"Run: {_LINK}",
        False,
    ),
    "drift-detected": Message(
        (DRIFT_EVENT,),
        f"tunegate: {_MODEL} drifted",
        f"{_MODEL} version {{{{ event.payload.version }}}} drifted between "
        "{{ event.payload.since }} and {{ event.payload.until }}: "
        "{{ event.payload.drifted | join(', ') }}.",
        False,
    ),
}


def automation_name(kind: Event) -> str:
    return f"{TAG}: {kind}"


def automation(kind: Event, block_id: UUID, flow_name: str = FLOW_NAME) -> AutomationCore:
    """The automation that sends `kind`'s message through the block `block_id`."""
    message = MESSAGES[kind]
    if message.of_the_flow:
        match = {"prefect.resource.id": "prefect.flow-run.*"}
        related = {"prefect.resource.role": "flow", "prefect.resource.name": flow_name}
    else:
        match, related = {"prefect.resource.id": "tunegate.model.*"}, {}
    return AutomationCore(
        name=automation_name(kind),
        description=f"tunegate's {kind} notification (made by `tunegate deployments apply`)",
        tags=[TAG],
        trigger=EventTrigger(
            expect=set(message.expect),
            match=match,
            match_related=related,
            posture=Posture.Reactive,
            threshold=1,
        ),
        actions=[
            SendNotification(block_document_id=block_id, subject=message.subject, body=message.body)
        ],
    )


def notification_block(config: NotifyConfig) -> UUID | None:
    """The id of the block messages go through: `notify.block`'s (it must exist), or the Custom
    Webhook block saved (again) from `notify.webhook_url`; None when neither is set."""
    if config.block:
        slug, name = config.block.split("/", 1)
        with get_client(sync_client=True) as client:
            try:
                return client.read_block_document_by_name(name, slug).id
            except ObjectNotFound:
                raise ConfigError(
                    f"notify.block: no block {config.block} on the Prefect API: create it (UI, "
                    "Blocks) or name an existing one as <block-type-slug>/<block-name>"
                ) from None
    if config.webhook_url:
        block = CustomWebhookNotificationBlock(
            name="tunegate",
            url="{{webhook_url}}",  # the URL holds its token: kept among the block's secrets
            secrets={"webhook_url": config.webhook_url},
            json_data={
                "text": "{{subject}}\n{{body}}",
                "subject": "{{subject}}",
                "body": "{{body}}",
            },
            timeout=config.timeout_seconds,
        )
        return block.save(BLOCK_NAME, overwrite=True)
    return None


def apply_notifications(config: NotifyConfig, flow_name: str = FLOW_NAME) -> list[str]:
    """Create or update one automation per configured event kind and delete tunegate's others;
    returns a line per change, for the command's output."""
    block_id = notification_block(config) if config.enabled else None
    wanted = set(config.events) if block_id is not None else set()
    done = []
    with get_client(sync_client=True) as client:
        for kind in EVENTS:
            name = automation_name(kind)
            existing = [a.id for a in client.read_automations_by_name(name)]
            if kind not in wanted:
                for old in existing:
                    client.delete_automation(old)
                    done.append(f"removed automation {name} ({old})")
                continue
            new = automation(kind, block_id, flow_name)
            if not existing:
                done.append(f"created automation {name} ({client.create_automation(new)})")
                continue
            keep, *extra = existing
            for old in extra:
                client.delete_automation(old)
            client.update_automation(keep, new)
            done.append(f"updated automation {name} ({keep})")
    return done
