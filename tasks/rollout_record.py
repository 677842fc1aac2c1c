"""What a rollout did: its events in order (each step's replayed and live numbers with them), the
record it returns, and the table a person reads in the Prefect artifact and `tunegate models`."""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from tasks.canary_live import LiveVerdict, live_markdown
from tasks.rollout_policy import StepDecision

log = logging.getLogger(__name__)


class RolloutEvent(BaseModel):
    """One action of the rollout, with the traffic it left and what decided it."""

    model_config = ConfigDict(frozen=True)
    at: str
    action: str
    traffic: dict[str, int]
    message: str = ""
    decision: StepDecision | None = None
    live: LiveVerdict | None = None  # the step's live window (tasks/canary_live.py)


class RolloutRecord(BaseModel):
    """What the rollout did, step by step, and where it left the endpoint."""

    model_config = ConfigDict(frozen=True)
    version: str
    outcome: Literal["promoted", "rolled-back", "unchanged"]
    new_deployment: str | None
    previous_deployment: str | None
    events: list[RolloutEvent]
    endpoint: dict[str, Any]

    def live_windows(self) -> list[str]:
        """One line per step judged on live traffic: its action, verdict and both sides'
        numbers (the run summary's; every number is in `events`)."""
        return [f"{e.action}: {live_markdown(e.live)}" for e in self.events if e.live is not None]


class Timeline:
    """The rollout's events in order, each stamped with the time it happened."""

    def __init__(self) -> None:
        self.events: list[RolloutEvent] = []

    def add(self, action: str, traffic: dict[str, int], message: str = "", **kw: Any) -> None:
        at = datetime.now(UTC).isoformat(timespec="seconds")
        shares = ", ".join(f"{k} {v}%" for k, v in traffic.items())
        log.info("rollout: %s (%s)%s", action, shares, f": {message}" if message else "")
        self.events.append(
            RolloutEvent(at=at, action=action, traffic=traffic, message=message, **kw)
        )


def timeline_markdown(record: RolloutRecord) -> str:
    """The events as a markdown table: each step's replayed numbers ("compared": candidate vs
    live deployment), its live window (challenger vs champion) and the reasons."""
    lines = [
        f"### Rollout of {record.version}: {record.outcome}",
        "",
        "| time | action | traffic | compared | live window | note |",
        "|---|---|---|---|---|---|",
    ]
    for e in record.events:
        compared = ""
        if e.decision is not None:
            d = e.decision
            compared = (
                f"errors {d.candidate.error_rate:.3f} vs {d.live.error_rate:.3f} "
                f"(limit {d.error_rate_limit:.3f}); p95 {d.candidate.p95_ms or 0:.0f} ms vs "
                f"{d.live.p95_ms or 0:.0f} ms (limit {d.p95_limit_ms or 0:.0f}); "
                f"{d.candidate.requests} requests"
            )
        traffic = ", ".join(f"{k} {v}%" for k, v in e.traffic.items())
        live = live_markdown(e.live)
        lines.append(f"| {e.at} | {e.action} | {traffic} | {compared} | {live} | {e.message} |")
    return "\n".join(lines)
