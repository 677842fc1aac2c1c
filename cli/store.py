"""`tunegate store verify`: every dataset in the store checked against its manifest, and every
approval record against its signatures (the store's key, and the reviewer's own when signed)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer
from rich.table import Table

from cli.common import ConfigOpt, SetOpt, console, fail, load_cli_config, print_table

if TYPE_CHECKING:
    from platforms.store import Store
    from tasks.approval_config import ApprovalConfig

store_app = typer.Typer(help="The store's datasets.", no_args_is_help=True)


@store_app.command("verify")
def store_verify(config: ConfigOpt = None, set: SetOpt = None) -> None:
    """Check every finished dataset's files against the sha256 its manifest recorded at write
    time; exit 1 naming each dataset and file that was edited, truncated or deleted."""
    cfg = load_cli_config(config, set)
    store = cfg.open_store()
    table = Table(title=f"datasets in {store.uri}")
    for column in ("stage", "dataset", "files", "result"):
        table.add_column(column)
    bad = 0
    manifests = store.manifests()
    for manifest in manifests:
        problems = store.problems(manifest)
        bad += bool(problems)
        result = "; ".join(problems) if problems else "ok" if manifest.files else "not recorded"
        if manifest.removed and not problems:  # deleted on purpose (ingest.raw_retention)
            result += f" ({', '.join(sorted(manifest.removed))} deleted after approval)"
        table.add_row(manifest.stage, manifest.key[:16], str(len(manifest.files)), result)
    print_table(table)
    bad_records, records = _verify_approvals(store, cfg.approval)
    failures = [
        *([f"{bad} of {len(manifests)} datasets do not match their manifests"] if bad else []),
        *([f"{bad_records} of {records} approval records are not valid"] if bad_records else []),
    ]
    if failures:
        fail("; ".join(failures), 1)
    console.print(f"{len(manifests)} datasets and {records} approval records verified")


def _verify_approvals(store: Store, config: ApprovalConfig) -> tuple[int, int]:
    """Print every approval record that does not verify (edited, signed with another key, a
    reviewer's signature that fails or a key no longer listed); (bad, all)."""
    from platforms.approvals import ApprovalRecord

    key, reviewers = config.signing_key(), config.reviewers()
    uris = store.glob(store.path("approvals", "*", "*.json"))
    bad = 0
    for uri in uris:
        name = store.relative(uri)
        try:
            record = ApprovalRecord.model_validate_json(store.read_text(uri))
        except ValueError:
            problem: str | None = "unreadable"
        else:
            problem = record.problem(key, uri.rsplit("/", 2)[-2], reviewers)
        if problem is not None:
            bad += 1
            console.print(f"[red]approval record {name}: {problem}[/red]")
    return bad, len(uris)


@store_app.command("sign")
def store_sign(config: ConfigOpt = None, set: SetOpt = None) -> None:
    """Sign the manifests of datasets written before tunegate signed them, when their files
    still match the hashes the manifest recorded (you vouch that nobody changed them since);
    any other problem is left for `tunegate store verify` to show."""
    store = load_cli_config(config, set).open_store()
    manifests = store.manifests()
    signed = sum(store.sign(manifest) for manifest in manifests)
    console.print(f"{signed} of {len(manifests)} datasets signed now")
