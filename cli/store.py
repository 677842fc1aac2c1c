"""`tunegate store verify`: every dataset in the store checked against its manifest."""

from __future__ import annotations

import typer
from rich.table import Table

from cli.common import ConfigOpt, SetOpt, console, fail, load_cli_config, print_table

store_app = typer.Typer(help="The store's datasets.", no_args_is_help=True)


@store_app.command("verify")
def store_verify(config: ConfigOpt = None, set: SetOpt = None) -> None:
    """Check every finished dataset's files against the sha256 its manifest recorded at write
    time; exit 1 naming each dataset and file that was edited, truncated or deleted."""
    store = load_cli_config(config, set).open_store()
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
    if bad:
        fail(f"{bad} of {len(manifests)} datasets do not match their manifests", 1)
    console.print(f"{len(manifests)} datasets verified")


@store_app.command("sign")
def store_sign(config: ConfigOpt = None, set: SetOpt = None) -> None:
    """Sign the manifests of datasets written before tunegate signed them, when their files
    still match the hashes the manifest recorded (you vouch that nobody changed them since);
    any other problem is left for `tunegate store verify` to show."""
    store = load_cli_config(config, set).open_store()
    manifests = store.manifests()
    signed = sum(store.sign(manifest) for manifest in manifests)
    console.print(f"{signed} of {len(manifests)} datasets signed now")
