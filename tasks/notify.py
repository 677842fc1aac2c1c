"""notify: the flow's task that tells people about a run (see platforms/notify.py)."""

from __future__ import annotations

from typing import Any

from prefect import task
from prefect.cache_policies import NONE

from platforms.notify import Event, NotifyConfig, send


@task(name="notify", cache_policy=NONE)
def notify_task(config: NotifyConfig, event: Event, message: str, details: dict[str, Any]) -> bool:
    """Tell people about this run (webhook); a failed delivery never fails the run."""
    return send(config, event, message, details)
