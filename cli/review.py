"""`tunegate approve` and `tunegate reject`: a reviewer's answer to a retrain run paused for
approval, sent through the Prefect API; `tunegate review show`: the review they answer, read
from the store (tasks/review.py), as the Prefect `review` artifact shows it."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal
from uuid import UUID

import typer

from cli.common import ConfigOpt, ExcludeOpt, SetOpt, console, fail, load_cli_config

if TYPE_CHECKING:
    from cli.signing import Signed, Signer
    from platforms.datasheet import DataRights
    from platforms.manifest import DatasetRef
    from platforms.store import Store

ReviewerOpt = Annotated[
    str | None,
    typer.Option(
        help="Who decides (kept in the audit record). With --key: your e-mail as the reviewers "
        "file lists you (default: the key's comment, when it is an e-mail)."
    ),
]
CommentOpt = Annotated[str, typer.Option(help="Why (kept in the audit record).")]
KeyOpt = Annotated[
    Path | None,
    typer.Option(
        "--key",
        help="Sign the decision with this SSH private key (ssh-ed25519 or ecdsa-sha2-nistp256, "
        "listed in approval.reviewers_file); an encrypted key asks its passphrase, or reads "
        "TUNEGATE_KEY_PASSPHRASE. With --agent: the .pub of the agent's key to use.",
    ),
]
AgentOpt = Annotated[
    bool, typer.Option("--agent", help="Sign with the key held by ssh-agent (SSH_AUTH_SOCK).")
]
TokenOpt = Annotated[
    str | None,
    typer.Option(
        "--token",
        envvar="TUNEGATE_ENTRA_TOKEN",
        help="Prove who you are with this Entra ID access token (the Entra ID tenant of the reviewers "
        "file): az account get-access-token --scope <audience>/.default",
    ),
]

ANSWER_SECONDS = 60  # how long a command waits to see whether the run took its decision

review_app = typer.Typer(help="The review of screened data.", no_args_is_help=True)


def approve(
    flow_run_id: Annotated[str, typer.Argument(help="The paused retrain flow run id.")],
    reviewer: ReviewerOpt = None,
    comment: CommentOpt = "",
    exclude: ExcludeOpt = None,
    key: KeyOpt = None,
    agent: AgentOpt = False,
    token: TokenOpt = None,
) -> None:
    """Approve the screened data of a paused run (resumes it through the Prefect API). With
    --key, --agent or --token the decision is signed: under approval.require=verified only a
    signed decision of a listed reviewer resumes the run."""
    from cli.signing import Signer  # cryptography loads here

    _resume(flow_run_id, "approve", reviewer, comment, exclude or [], Signer(key, agent, token))


def reject(
    flow_run_id: Annotated[str, typer.Argument(help="The paused retrain flow run id.")],
    reviewer: ReviewerOpt = None,
    comment: CommentOpt = "",
    key: KeyOpt = None,
    agent: AgentOpt = False,
    token: TokenOpt = None,
) -> None:
    """Reject the screened data of a paused run: it stops before split and training."""
    from cli.signing import Signer

    _resume(flow_run_id, "reject", reviewer, comment, [], Signer(key, agent, token))


def _resume(
    flow_run_id: str,
    decision: Literal["approve", "reject"],
    reviewer: str | None,
    comment: str,
    exclude_ids: list[str],
    signer: Signer,
) -> None:
    from prefect.exceptions import FlowPauseTimeout, NotPausedError, ObjectNotFound
    from prefect.flow_runs import resume_flow_run

    try:
        run_id = UUID(flow_run_id)
    except ValueError as exc:
        fail(f"{flow_run_id!r} is not a flow run id: {exc}")
    answer = {"decision": decision, "comment": comment, "exclude_ids": exclude_ids}
    how = ""
    if signer.signs:
        signed = _signed(str(run_id), decision, reviewer, comment, exclude_ids, signer)
        answer |= {"reviewer": signed.reviewer, "proof": signed.proof.model_dump_json()}
        reviewer, how = signed.reviewer, f", signed by {signed.by}"
    elif reviewer is None:
        fail("give --reviewer YOU, or sign the decision with --key ~/.ssh/id_ed25519")
    else:
        answer["reviewer"] = reviewer
    try:
        pause = _pause_key(run_id)
        resume_flow_run(run_id, run_input=answer)
    except ObjectNotFound:
        fail(f"no flow run {flow_run_id} on the Prefect API (PREFECT_API_URL?)")
    except (NotPausedError, FlowPauseTimeout, RuntimeError) as exc:  # RuntimeError: input refused
        fail(f"cannot resume {flow_run_id}: {exc}", 1)
    verb = "approved" if decision == "approve" else "rejected"
    console.print(f"{verb} flow run {flow_run_id} as {reviewer}{how}")
    refused = _asked_again(run_id, pause)
    if refused:
        fail(f"the run did not take this decision and waits again: {'; '.join(refused)}", 1)


def _pause_key(run_id: UUID) -> str | None:
    """The pause the run is in now (it pauses anew when it asks again)."""
    from prefect import get_client

    with get_client(sync_client=True) as client:
        state = client.read_flow_run(run_id).state
    return str(state.state_details.pause_key) if state and state.is_paused() else None


def _asked_again(run_id: UUID, answered: str | None) -> list[str]:
    """Why the run asks again after this answer (the reasons its next pause's form gives: an
    unverified answer under approval.require=verified, a key not listed, one reviewer of two
    needed), or [] once it has taken the decision (its `approval` artifact, or a final state)
    or after ANSWER_SECONDS."""
    from prefect import get_client
    from prefect.input.actions import read_flow_run_input
    from prefect.input.run_input import keyset_from_paused_state

    deadline = time.monotonic() + ANSWER_SECONDS
    with get_client(sync_client=True) as client:
        while time.monotonic() < deadline:
            state = client.read_flow_run(run_id).state
            if state is None or state.is_final() or _decided(client, run_id):
                return []
            if state.is_paused() and str(state.state_details.pause_key) != answered:
                key = keyset_from_paused_state(state)["description"]
                form = str(read_flow_run_input(key, flow_run_id=run_id) or "")
                return re.findall(r"\*\*Asked again:\*\* (.+?)\.\n", form)
            time.sleep(0.5)
    return []


def _decided(client: Any, run_id: UUID) -> bool:
    """Whether the run has recorded its approval decision (the `approval` artifact)."""
    from prefect.client.schemas.filters import (
        ArtifactFilter,
        ArtifactFilterKey,
        FlowRunFilter,
        FlowRunFilterId,
        TaskRunFilter,
    )
    from prefect.client.schemas.sorting import ArtifactSort

    found = client.read_artifacts(  # 3.8.8's sync client sends None for unset fields
        artifact_filter=ArtifactFilter(key=ArtifactFilterKey(any_=["approval"])),
        flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=[run_id])),
        task_run_filter=TaskRunFilter(),
        limit=1,
        offset=0,
        sort=ArtifactSort.CREATED_DESC,
    )
    return bool(found)


def _signed(
    run_id: str,
    decision: str,
    reviewer: str | None,
    comment: str,
    exclude_ids: list[str],
    signer: Signer,
) -> Signed:
    """The decision signed for the data the run reviews (the hash in its `review` artifact)."""
    from cli.signing import SigningFailed, sign_decision

    dataset_hash = _hash_from_api(run_id)
    if dataset_hash is None:
        fail(
            f"cannot sign: the Prefect API has no review of run {run_id} to sign for "
            "(PREFECT_API_URL? is the run paused for approval?)"
        )
    try:
        return sign_decision(
            signer,
            flow_run_id=run_id,
            dataset_hash=dataset_hash,
            decision=decision,
            reviewer=reviewer,
            comment=comment,
            exclude_ids=exclude_ids,
        )
    except SigningFailed as exc:
        fail(str(exc))


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
        kept=kept_changes(store, dataset),
        rights=_rights_decided(store, dataset),
    )
    typer.echo(_render(Markdown(markdown)), nl=False)


def _rights_decided(store: Store, dataset: DatasetRef) -> DataRights | None:
    """The inputs' datasheets the newest decision about the dataset signed (None: undecided,
    or decided before datasheets were kept; a paused run's review artifact shows them)."""
    from platforms.approvals import ApprovalRecord
    from platforms.datasheet import DataRights

    uri = f"{dataset.uri}/approval.json"
    if not store.exists(uri):
        return None
    record = ApprovalRecord.model_validate_json(store.read_text(uri))
    return DataRights(inputs=record.inputs) if record.inputs else None


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
