"""Pausing a flow run for a person's answer in the Prefect UI, with a deadline that answers for them.

The server fails a run whose pause expires, so the flow could not record what the expiry means
itself: a timer resumes the run with the deadline's answer first, and the pause's own timeout
(a grace period later) is a backstop.
"""

from __future__ import annotations

import contextlib
import contextvars
import threading
from typing import Any, TypeVar

from prefect.context import FlowRunContext
from prefect.exceptions import FlowPauseTimeout, NotPausedError
from prefect.flow_runs import pause_flow_run, resume_flow_run
from prefect.input import RunInput

GRACE_SECONDS = 60
Answer = TypeVar("Answer", bound=RunInput)


def ask(
    form: type[Answer],
    answer_at_deadline: dict[str, Any],
    timeout_seconds: int,
    poll_seconds: int,
    initial: dict[str, Any] | None = None,
) -> Answer:
    """Pause this flow run until someone submits `form` (shown with `initial` data, e.g. its
    description), or `timeout_seconds` pass: then the answer is `answer_at_deadline`."""
    timer = _answer_later(timeout_seconds, answer_at_deadline)
    try:
        return pause_flow_run(
            wait_for_input=form.with_initial_data(**(initial or {})),
            timeout=timeout_seconds + GRACE_SECONDS,
            poll_interval=poll_seconds,
        )
    except FlowPauseTimeout:
        return form(**answer_at_deadline)
    finally:
        timer.cancel()


def _answer_later(seconds: int, answer: dict[str, Any]) -> threading.Timer:
    """Resume this flow run with `answer` after `seconds`, unless someone answered already."""
    context = FlowRunContext.get()
    if context is None or context.flow_run is None:
        raise RuntimeError("approval.mode=manual needs a flow run to pause")
    flow_run_id = context.flow_run.id

    def resume() -> None:
        # NotPaused / timed out: a person answered in the meantime and their answer stands.
        with contextlib.suppress(NotPausedError, FlowPauseTimeout):
            resume_flow_run(flow_run_id, run_input=answer)

    timer = threading.Timer(seconds, contextvars.copy_context().run, args=(resume,))
    timer.daemon = True
    timer.start()
    return timer
