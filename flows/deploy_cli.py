"""`tunegate serve` and `tunegate deploy`: the `retrain` flow as Prefect deployments.

Both build `retrain/nightly` and `retrain/manual` from deployments/prefect.yaml (through
deployments/serve.py), so what is served and what is registered for a work pool agree. Both need a
Prefect API that outlives the command: `prefect server start`, then
`PREFECT_API_URL=http://127.0.0.1:4200/api`.
"""

from __future__ import annotations

import importlib.util
import sys
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Annotated

import typer
from rich.console import Console

from flows.config import ConfigError

_SERVE_PY = Path(__file__).resolve().parents[1] / "deployments" / "serve.py"
console = Console(stderr=True, soft_wrap=True)

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


@cache
def _deployments_module() -> ModuleType:
    """deployments/serve.py, loaded by path: `deployments/` is a folder of files, not a package."""
    spec = importlib.util.spec_from_file_location("tunegate_deployments_serve", _SERVE_PY)
    if spec is None or spec.loader is None:
        raise ConfigError(f"cannot load {_SERVE_PY}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


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
    module = _deployments_module()
    try:
        module.serve_deployments(
            config=config, cron=cron, timezone=timezone, inputs=input, limit=limit
        )
    except (ConfigError, ValueError) as exc:
        console.print(f"[red]{exc}[/red]")
        raise typer.Exit(2) from None


def deploy(
    config: ConfigOpt = None,
    cron: CronOpt = None,
    timezone: TimezoneOpt = None,
    input: InputOpt = None,
) -> None:
    """Register retrain/nightly and retrain/manual with the Prefect API and its work pool.

    Creates the process work pool named in prefect.yaml (tunegate-process) if it is missing.
    Runs start in this directory: relative paths (the .tunegate store, the inbox) resolve here.

    Runs need a worker in this environment: prefect worker start --pool tunegate-process
    """
    from prefect.exceptions import PrefectHTTPStatusError

    module = _deployments_module()
    try:
        deployments = module.build_deployments(
            config=config, cron=cron, timezone=timezone, inputs=input, with_work_pool=True
        )
        for pool in sorted({d.work_pool_name for d in deployments if d.work_pool_name}):
            _ensure_process_pool(pool)
        for deployment in deployments:
            deployment_id = deployment.apply()
            console.print(f"deployed retrain/{deployment.name} ({deployment_id})")
    except (ConfigError, ValueError) as exc:
        console.print(f"[red]{exc}[/red]")
        raise typer.Exit(2) from None
    except (OSError, PrefectHTTPStatusError) as exc:
        console.print(f"[red]cannot reach the Prefect API (PREFECT_API_URL?): {exc}[/red]")
        raise typer.Exit(1) from None


def _ensure_process_pool(name: str) -> None:
    """Create the process work pool `name` unless it exists (its default job template)."""
    from prefect import get_client
    from prefect.client.schemas.actions import WorkPoolCreate
    from prefect.exceptions import ObjectNotFound
    from prefect.workers.process import ProcessWorker

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
