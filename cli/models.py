"""`tunegate models list|show|promote` (registered models, versions, aliases, lineage) and
`tunegate rollback` (the previous champion served again)."""

from __future__ import annotations

import json
from contextlib import suppress
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.table import Table

from cli.common import (
    ConfigOpt,
    SetOpt,
    console,
    fail,
    load_cli_config,
    print_endpoint,
    print_table,
    run_stage,
)
from platforms.model_version import NEEDS_RETRAIN

if TYPE_CHECKING:
    from platforms.model_version import ModelVersion

models_app = typer.Typer(help="Registered models.", no_args_is_help=True)


def rollback(
    name: Annotated[
        str | None, typer.Argument(help="Registered model name (default: tunegate-<task>).")
    ] = None,
    config: ConfigOpt = None,
    set: SetOpt = None,
) -> None:
    """Serve the previous champion again at 100% and move the champion alias back to it."""
    from platforms.endpoint import ForeignDeployments
    from tasks.rollout import roll_back_to_previous, timeline_markdown

    cfg = load_cli_config(config, set)
    backends = cfg.backends()
    name = name or cfg.registry.name_for(cfg.task.value)
    backend = backends.open_endpoint(name)  # the model's own endpoint
    try:
        record = roll_back_to_previous(backend, backends.registry, name)
    except (ValueError, ForeignDeployments) as exc:
        fail(str(exc))
    finally:
        backend.close()
    print(timeline_markdown(record))
    print_endpoint({**record.endpoint, "stays_up": backends.endpoint_stays_up(name)})


@models_app.command("list")
def models_list(config: ConfigOpt = None, set: SetOpt = None) -> None:
    """Registered models, their versions and aliases, and which version serves where (each
    model's own endpoint: its deployment, traffic and address). One table per model, titled
    with its name, so a long name is never cut to fit 80 columns."""
    backends = load_cli_config(config, set).backends()
    registry = backends.registry
    names = run_stage(registry.names)  # an unreachable tracking database exits 2 naming it
    if not names:
        console.print("no registered models yet")
    for name in names:
        aliases = registry.aliases(name)
        serving = backends.serving(name)
        table = Table(title=name, title_justify="left", title_style="bold")
        for column in ("version", "aliases", "serves", "created", "metrics"):
            table.add_column(column)
        # a version whose record was edited exits 2 naming it
        for v in run_stage(lambda name=name: registry.versions(name)):
            tags = ", ".join(a for a, n in aliases.items() if n == v.version)
            shown = "\n".join(f"{k} {val:.1f}" for k, val in v.metrics.items())
            where = serves(serving, f"{name}:{v.version}")
            table.add_row(str(v.version), tags, where, _when(v.created_at), shown)
        print_table(table)
        for notice in champion_notices(registry, name, serving):
            console.print(f"[yellow]{notice}[/yellow]", markup=True, highlight=False)


def champion_notices(registry: Any, name: str, serving: dict[str, Any] | None) -> list[str]:
    """What is off about `name@champion`: moved or removed outside tunegate (against the
    history tunegate keeps on the versions), or not the version its running endpoint serves."""
    from platforms.model_version import alias_notice, serving_differs

    live = [
        info["version"]
        for info in ((serving or {}).get("deployments") or {}).values()
        if info["traffic"] == 100 and (serving or {}).get("live")
    ]
    champion = registry.aliases(name).get("champion")
    differs = serving_differs(name, champion, next(iter(live), None))
    if differs:
        differs += (
            f": the next rollout serves the champion; `tunegate rollback {name}` serves the "
            "previous one"
        )
    return [n for n in (alias_notice(registry, name), differs) if n]


def _when(created_at: str) -> str:
    """`2026-11-24T16:50:12+00:00` as `2026-11-24 16:50` (UTC, as registered)."""
    return created_at[:16].replace("T", " ")


def serves(serving: dict[str, Any] | None, label: str) -> str:
    """Where the version `label` serves: its deployment and traffic on its model's endpoint
    (`blue 100% @ :8123`, `(stopped)` when that endpoint is not running), else empty."""
    if not serving:
        return ""
    found = [
        f"{d} {info['traffic']}%"
        for d, info in serving["deployments"].items()
        if info["version"] == label
    ]
    if not found:
        return ""
    port = f" @ :{serving['port']}" if serving.get("port") else ""
    return ", ".join(found) + port + ("" if serving["live"] else " (stopped)")


@models_app.command("show")
def models_show(
    name: Annotated[str, typer.Argument(help="Registered model name.")],
    version: Annotated[
        str, typer.Argument(help="Version number or alias (champion, challenger).")
    ] = "champion",
    card: Annotated[
        bool,
        typer.Option(
            "--card",
            help="Print the version's model card (its model folder's README.md, Markdown) "
            "instead of its record.",
        ),
    ] = False,
    config: ConfigOpt = None,
    set: SetOpt = None,
) -> None:
    """One model version with its lineage, as JSON; or its model card (`--card`). A version
    marked `needs-retrain` (an erasure removed data it was trained on) says so first."""
    from tasks.model_card import with_notices

    backends = load_cli_config(config, set).backends()
    registry = backends.registry
    run_stage(registry.names)
    found = find_version(registry, name, version)
    tags = registry.tags(found.name, found.version)
    for notice in champion_notices(registry, name, backends.serving(name)):  # on stderr
        console.print(f"[yellow]{notice}[/yellow]", highlight=False)
    if card:
        print(with_notices(model_card_of(registry, found), tags), end="")
    else:
        shown = found.model_dump_json(indent=2)
        if NEEDS_RETRAIN in tags:  # the registry's mark first, then the record as registered
            record = json.loads(shown)
            shown = json.dumps({NEEDS_RETRAIN: tags[NEEDS_RETRAIN], **record}, indent=2)
        print(shown)


def model_card_of(registry: Any, version: ModelVersion) -> str:
    """The card registered with `version` (its files checked first); for a version registered
    before cards, one built now from its record (without what only the run knew: the screening
    report and the split's counts)."""
    from tasks.model_card import card_of_folder, model_card

    folder = run_stage(lambda: registry.download(version))  # a changed file exits 2 naming it
    text = card_of_folder(folder)
    if text is not None:
        return text
    from trainer.modeling import MODEL_INFO

    info_file = folder / MODEL_INFO
    info = json.loads(info_file.read_text()) if info_file.is_file() else {}
    report = version.lineage.evaluation
    task = info.get("task") or (report.task if report else "unknown")
    base = info.get("base_model", "unknown")
    adapter = bool(info.get("adapter"))
    return model_card(version.name, task, base, version.lineage, adapter=adapter)


@models_app.command("promote")
def models_promote(
    name: Annotated[str, typer.Argument(help="Registered model name.")],
    version: Annotated[int, typer.Argument(help="The version to point the alias at.")],
    alias: Annotated[
        str, typer.Option(help="champion (what evaluations compare with) or challenger.")
    ] = "champion",
    config: ConfigOpt = None,
    set: SetOpt = None,
) -> None:
    """Point an alias at a version by hand (the registry keeps the alias's history, which
    `tunegate rollback` reads). The endpoint is not changed: the next rollout serves it."""
    from platforms.model_version import ALIASES

    if alias not in ALIASES:
        fail(f"--alias must be one of {', '.join(ALIASES)}, got {alias!r}")
    registry = load_cli_config(config, set).backends().registry
    run_stage(registry.names)
    chosen = find_version(registry, name, str(version))
    registry.set_alias(name, alias, chosen.version)
    console.print(f"{name}@{alias} = version {chosen.version}")


def find_version(registry: Any, name: str, ref: str) -> ModelVersion:
    """Version `ref` of `name`: a version number or an alias (champion, challenger). One that is
    not there exits 2 naming what is (the versions and aliases of `name`, or the registered
    names), so the next try can be the right one."""
    found = None
    if ref.isdigit():
        with suppress(KeyError):
            found = registry.get(name, int(ref))
    else:
        found = registry.alias(name, ref)
    if found is not None:
        return found
    versions = [str(v.version) for v in registry.versions(name)]
    if not versions:
        names = ", ".join(registry.names()) or "none yet"
        fail(
            f"no model named {name!r} is registered (registered: {names}); see tunegate models list"
        )
    aliases = ", ".join(f"@{a} = {v}" for a, v in sorted(registry.aliases(name).items()))
    what = f"version {ref}" if ref.isdigit() else f"alias @{ref}"
    fail(
        f"{name} has no {what}: its versions are {', '.join(versions)}; "
        f"its aliases {aliases or 'none'}"
    )
