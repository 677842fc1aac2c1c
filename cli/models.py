"""`tunegate models list|show` (registered models, versions, aliases, lineage) and
`tunegate rollback` (the previous champion served again)."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table

from cli.common import ConfigOpt, SetOpt, fail, load_cli_config, print_endpoint, print_table

models_app = typer.Typer(help="Registered models.", no_args_is_help=True)


def rollback(
    name: Annotated[
        str | None, typer.Argument(help="Registered model name (default: tunegate-<task>).")
    ] = None,
    config: ConfigOpt = None,
    set: SetOpt = None,
) -> None:
    """Serve the previous champion again at 100% and move the champion alias back to it."""
    from tasks.rollout import roll_back_to_previous, timeline_markdown

    cfg = load_cli_config(config, set)
    backends = cfg.backends()
    backend = backends.open_endpoint()
    try:
        record = roll_back_to_previous(
            backend, backends.registry, name or cfg.registry.name_for(cfg.task.value)
        )
    except ValueError as exc:
        fail(str(exc))
    finally:
        backend.close()
    print(timeline_markdown(record))
    print_endpoint(record.endpoint)


@models_app.command("list")
def models_list(config: ConfigOpt = None, set: SetOpt = None) -> None:
    """Registered models, their versions and aliases."""
    registry = load_cli_config(config, set).backends().registry
    table = Table(title="models")
    for column in ("model", "version", "aliases", "created", "metrics"):
        table.add_column(column)
    for name in registry.names():
        aliases = registry.aliases(name)
        for v in registry.versions(name):
            tags = ", ".join(a for a, n in aliases.items() if n == v.version)
            shown = ", ".join(f"{k}={val:.1f}" for k, val in v.metrics.items())
            table.add_row(name, str(v.version), tags, v.created_at, shown)
    print_table(table)


@models_app.command("show")
def models_show(
    name: Annotated[str, typer.Argument(help="Registered model name.")],
    version: Annotated[
        str, typer.Argument(help="Version number or alias (champion, challenger).")
    ] = "champion",
    config: ConfigOpt = None,
    set: SetOpt = None,
) -> None:
    """One model version with its lineage, as JSON."""
    registry = load_cli_config(config, set).backends().registry
    try:
        found = (
            registry.get(name, int(version)) if version.isdigit() else registry.alias(name, version)
        )
    except KeyError as exc:
        found, message = None, str(exc)
    else:
        message = f"{name} has no {version!r}"
    if found is None:
        fail(message)
    print(found.model_dump_json(indent=2))
