"""`tunegate deployments serve|apply`: the `retrain` flow as Prefect deployments (not to be confused
with `tunegate endpoint serve`, which serves a model).

Both build `retrain/nightly` and `retrain/manual` from deployments/prefect.yaml (through
`flows.deployments`), so what is served and what is registered for a work pool agree. Both need a
Prefect API that outlives the command: `prefect server start`, then
`PREFECT_API_URL=http://127.0.0.1:4200/api`.

`tunegate serve` and `tunegate deploy`, their names before, stay for one release as hidden aliases
(`deprecated_alias`) that print where the command went.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer

from cli.common import console, fail

deployments_app = typer.Typer(
    help="The retrain flow's Prefect deployments (retrain/nightly, retrain/manual): serve them "
    "from this process, or apply them to a work pool.",
    no_args_is_help=True,
)

ConfigOpt = Annotated[
    Path | None,
    typer.Option(
        "--config",
        "-c",
        help="Base pipeline config YAML for both deployments (configs/local.yaml).",
    ),
]
CronOpt = Annotated[
    str | None,
    typer.Option(help='Nightly cron schedule (default from prefect.yaml: "0 2 * * *").'),
]
TimezoneOpt = Annotated[
    str | None, typer.Option(help="IANA timezone of the nightly cron (default UTC).")
]
InputOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--input",
        "-i",
        help="What the nightly run reads: file, directory or glob, local or az://; repeat "
        "(default from prefect.yaml: inbox/*.jsonl).",
    ),
]


@deployments_app.command("serve")
def serve(
    config: ConfigOpt = None,
    cron: CronOpt = None,
    timezone: TimezoneOpt = None,
    input: InputOpt = None,
    limit: Annotated[
        int | None, typer.Option(help="Most flow runs this process runs at once.")
    ] = None,
) -> None:
    """Serve retrain/nightly (cron) and retrain/manual (UI form) and run their flow runs; blocks.

    Runs start as subprocesses, from the schedule or from the UI (retrain/manual, Run).

    Ctrl-C stops serving and pauses the nightly schedule.
    """
    from flows.config import ConfigError  # prefect loads here, not for --help
    from flows.deployments import serve_deployments

    try:
        serve_deployments(config=config, cron=cron, timezone=timezone, inputs=input, limit=limit)
    except (ConfigError, ValueError) as exc:
        fail(str(exc))


@deployments_app.command("apply")
def apply(
    config: ConfigOpt = None,
    cron: CronOpt = None,
    timezone: TimezoneOpt = None,
    input: InputOpt = None,
) -> None:
    """Register retrain/nightly (with its drift and new-data trigger), retrain/manual,
    monitor/hourly and watch-inbox/every-minute with the Prefect API and its work pool.

    Creates the process work pool named in prefect.yaml (tunegate-process) if it is missing.
    Runs start in this directory: relative paths (the .tunegate store, the inbox) resolve here.

    Runs need a worker in this environment: prefect worker start --pool tunegate-process

    Also makes the config's `notify:` automations and notification block (docs/review.md).
    """
    from prefect.exceptions import PrefectHTTPStatusError

    from flows.automations import apply_notifications
    from flows.config import ConfigError, load_config
    from flows.deployments import build_deployments, build_watchers

    try:
        deployments = [
            *build_deployments(
                config=config, cron=cron, timezone=timezone, inputs=input, with_work_pool=True
            ),
            *build_watchers(config=config, inputs=input, with_work_pool=True),
        ]
        for pool in sorted({d.work_pool_name for d in deployments if d.work_pool_name}):
            _ensure_process_pool(pool)
        for deployment in deployments:
            deployment_id = deployment.apply()
            console.print(f"deployed {deployment.flow_name}/{deployment.name} ({deployment_id})")
        for change in apply_notifications(load_config(config).notify):
            console.print(change)
    except (ConfigError, ValueError) as exc:
        fail(str(exc))
    except (OSError, PrefectHTTPStatusError) as exc:
        fail(f"cannot reach the Prefect API (PREFECT_API_URL?): {exc}", 1)


def _ensure_process_pool(name: str) -> None:
    """Create the process work pool `name` unless it exists (its default job template)."""
    from prefect import get_client
    from prefect.client.schemas.actions import WorkPoolCreate
    from prefect.exceptions import ObjectNotFound
    from prefect.workers.process import ProcessWorker

    from flows.config import ConfigError

    with get_client(sync_client=True) as client:
        try:
            pool = client.read_work_pool(name)
        except ObjectNotFound:
            client.create_work_pool(
                WorkPoolCreate(
                    name=name,
                    type=ProcessWorker.type,
                    base_job_template=ProcessWorker.get_default_base_job_template(),
                )
            )
            console.print(f"created process work pool {name}")
            return
        if pool.type != ProcessWorker.type:
            raise ConfigError(f"work pool {name} exists with type {pool.type!r}, expected process")


def deprecated_alias(old: str, new: str, command: Callable[..., None]) -> Callable[..., None]:
    """`command` under its old top-level name `tunegate OLD`: same options and exit codes, with a
    one-line note on stderr naming `tunegate deployments NEW` first. Register it hidden."""

    @functools.wraps(command)
    def alias(*args: Any, **kwargs: Any) -> None:
        console.print(
            f"[yellow]`tunegate {old}` is deprecated and goes in the next release: "
            f"use `tunegate deployments {new}`[/yellow]"
        )
        command(*args, **kwargs)

    alias.__doc__ = f"Deprecated: use `tunegate deployments {new}`.\n\n{inspect.getdoc(command)}"
    return alias
