"""`tunegate approve` and `tunegate reject`: a reviewer's answer to a retrain run paused for
approval, sent through the Prefect API; `tunegate review show`: the review they answer, read
from the store (tasks/review.py), as the Prefect `review` artifact shows it."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated, Any, Literal
from uuid import UUID

import typer

from cli.common import ConfigOpt, ExcludeOpt, SetOpt, console, fail, load_cli_config

if TYPE_CHECKING:
    from platforms.manifest import DatasetRef
    from platforms.store import Store

ReviewerOpt = Annotated[str, typer.Option(help="Who decides (kept in the audit record).")]
CommentOpt = Annotated[str, typer.Option(help="Why (kept in the audit record).")]

review_app = typer.Typer(help="The review of screened data.", no_args_is_help=True)


def approve(
    flow_run_id: Annotated[str, typer.Argument(help="The paused retrain flow run id.")],
    reviewer: ReviewerOpt,
    comment: CommentOpt = "",
    exclude: ExcludeOpt = None,
) -> None:
    """Approve the screened data of a paused run (resumes it through the Prefect API)."""
    _resume(flow_run_id, "approve", reviewer, comment, exclude or [])


def reject(
    flow_run_id: Annotated[str, typer.Argument(help="The paused retrain flow run id.")],
    reviewer: ReviewerOpt,
    comment: CommentOpt = "",
) -> None:
    """Reject the screened data of a paused run: it stops before split and training."""
    _resume(flow_run_id, "reject", reviewer, comment, [])


def _resume(
    flow_run_id: str,
    decision: Literal["approve", "reject"],
    reviewer: str,
    comment: str,
    exclude_ids: list[str],
) -> None:
    from prefect.exceptions import FlowPauseTimeout, NotPausedError, ObjectNotFound
    from prefect.flow_runs import resume_flow_run

    answer = {
        "decision": decision,
        "reviewer": reviewer,
        "comment": comment,
        "exclude_ids": exclude_ids,
    }
    try:
        resume_flow_run(UUID(flow_run_id), run_input=answer)
    except ValueError as exc:
        fail(f"{flow_run_id!r} is not a flow run id: {exc}")
    except ObjectNotFound:
        fail(f"no flow run {flow_run_id} on the Prefect API (PREFECT_API_URL?)")
    except (NotPausedError, FlowPauseTimeout, RuntimeError) as exc:  # RuntimeError: input refused
        fail(f"cannot resume {flow_run_id}: {exc}", 1)
    verb = "approved" if decision == "approve" else "rejected"
    console.print(f"{verb} flow run {flow_run_id} as {reviewer}")


@review_app.command("show")
def show(
    what: Annotated[
        str,
        typer.Argument(
            help="A retrain flow run id, or the start of a screened dataset's content hash."
        ),
    ],
    config: ConfigOpt = None,
    set: SetOpt = None,
) -> None:
    """Print the review of screened data: counts, every flagged record as training gets it (what
    it was flagged for) and every quarantined one masked, the values replaced in kept records
    (before and after), and the changes since the model's last approval (`registry.model_name`),
    as the run's `review` artifact in the Prefect UI shows it. A run id is looked up in the store's approval records, then in
    the run's artifacts on the Prefect API (PREFECT_API_URL)."""
    from rich.markdown import Markdown

    from screening.report import ScreenReport
    from tasks.review import review_markdown, review_records
    from tasks.review_changes import compare
    from tasks.review_kept import kept_changes

    cfg = load_cli_config(config, set)
    store = cfg.open_store()
    model = cfg.registry.name_for(cfg.task.value)
    dataset = _screened_for(store, what)
    report = ScreenReport.model_validate_json(store.read_text(f"{dataset.uri}/report.json"))
    markdown = review_markdown(
        dataset,
        report,
        review_records(store, dataset),
        compare(store, dataset, report, model),
        kept_changes(store, dataset),
    )
    typer.echo(_render(Markdown(markdown)), nl=False)


def _render(renderable: Any) -> str:
    """What rich prints for `renderable` on stdout, sized for the terminal (or COLUMNS)."""
    from rich.console import Console

    out = Console(soft_wrap=False)
    with out.capture() as captured:
        out.print(renderable)
    return "".join(line.rstrip() + "\n" for line in captured.get().splitlines())


def _screened_for(store: Store, what: str) -> DatasetRef:
    """The screened dataset `what` names: a flow run's (its approval record, else its review
    artifact on the Prefect API) or the one whose content hash starts with it."""
    from tasks.review import find_screened

    try:
        run_id = UUID(what)
    except ValueError:
        run_id = None
    try:
        if run_id is None:
            return find_screened(store, what)
        found = _hash_of_run(store, str(run_id))
        if found is None:
            fail(
                f"flow run {run_id}: no approval record in {store.uri} names it and the Prefect "
                "API has no review artifact of it (PREFECT_API_URL? the run's --config/--set "
                "store=...?)"
            )
        return find_screened(store, found)
    except ValueError as exc:
        fail(str(exc))


def _hash_of_run(store: Store, run_id: str) -> str | None:
    """The screened dataset's content hash a flow run reviewed: from the store's approval
    records (no API needed), else from the run's `review` artifact on the Prefect API."""
    for uri in store.glob(store.path("approvals", "*", "*.json")):
        record = json.loads(store.read_text(uri))
        if record.get("flow_run_id") == run_id:
            return record["dataset_hash"]
    return _hash_from_api(run_id)


def _hash_from_api(run_id: str) -> str | None:
    """The hash in the run's `review` artifact; None without a Prefect API to ask (no
    PREFECT_API_URL: a temporary server would know no runs) or without the artifact."""
    import httpx
    from prefect import get_client
    from prefect.client.schemas.filters import (
        ArtifactFilter,
        ArtifactFilterKey,
        FlowRunFilter,
        FlowRunFilterId,
        TaskRunFilter,
    )
    from prefect.client.schemas.sorting import ArtifactSort
    from prefect.exceptions import PrefectException
    from prefect.settings import PREFECT_API_URL

    from tasks.review import ARTIFACT_KEY, dataset_hash_in

    if not PREFECT_API_URL.value():
        return None
    try:
        with get_client(sync_client=True) as client:
            found = client.read_artifacts(  # 3.8.8's sync client sends None for unset fields
                artifact_filter=ArtifactFilter(key=ArtifactFilterKey(any_=[ARTIFACT_KEY])),
                flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=[UUID(run_id)])),
                task_run_filter=TaskRunFilter(),
                limit=1,
                offset=0,
                sort=ArtifactSort.CREATED_DESC,
            )
    except (httpx.HTTPError, PrefectException, RuntimeError) as exc:
        console.print(f"[yellow]the Prefect API did not answer: {exc}[/yellow]")
        return None
    return dataset_hash_in(str(found[0].data)) if found else None
