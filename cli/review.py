"""`tunegate approve` and `tunegate reject`: a reviewer's answer to a retrain run paused for
approval, sent through the Prefect API."""

from __future__ import annotations

from typing import Annotated, Any
from uuid import UUID

import typer

from cli.common import ExcludeOpt, console, fail

ReviewerOpt = Annotated[str, typer.Option(help="Who decides (kept in the audit record).")]
CommentOpt = Annotated[str, typer.Option(help="Why (kept in the audit record).")]


def approve(
    flow_run_id: Annotated[str, typer.Argument(help="The paused retrain flow run id.")],
    reviewer: ReviewerOpt,
    comment: CommentOpt = "",
    exclude: ExcludeOpt = None,
) -> None:
    """Approve the screened data of a paused run (resumes it through the Prefect API)."""
    _resume(
        flow_run_id,
        {"approved": True, "reviewer": reviewer, "comment": comment, "exclude_ids": exclude or []},
    )


def reject(
    flow_run_id: Annotated[str, typer.Argument(help="The paused retrain flow run id.")],
    reviewer: ReviewerOpt,
    comment: CommentOpt = "",
) -> None:
    """Reject the screened data of a paused run: it stops before split and training."""
    _resume(
        flow_run_id,
        {"approved": False, "reviewer": reviewer, "comment": comment, "exclude_ids": []},
    )


def _resume(flow_run_id: str, answer: dict[str, Any]) -> None:
    from prefect.exceptions import FlowPauseTimeout, NotPausedError, ObjectNotFound
    from prefect.flow_runs import resume_flow_run

    try:
        resume_flow_run(UUID(flow_run_id), run_input=answer)
    except ValueError as exc:
        fail(f"{flow_run_id!r} is not a flow run id: {exc}")
    except ObjectNotFound:
        fail(f"no flow run {flow_run_id} on the Prefect API (PREFECT_API_URL?)")
    except (NotPausedError, FlowPauseTimeout, RuntimeError) as exc:  # RuntimeError: input refused
        fail(f"cannot resume {flow_run_id}: {exc}", 1)
    verb = "approved" if answer["approved"] else "rejected"
    console.print(f"{verb} flow run {flow_run_id} as {answer['reviewer']}")
