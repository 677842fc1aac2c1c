"""`tunegate endpoint list|stop`: the local endpoints' processes.

A rollout leaves its model's local endpoint running after the run (a detached `tunegate endpoint
serve`, with its traffic collector, platforms/endpoint.py), so a model keeps serving; these are
how a person sees which are up and stops one. The next rollout of the model starts it again on
the same port, with the same deployments and traffic.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from cli.common import console, fail, print_table
from cli.endpoint import DEFAULT_STORE, ModelOpt, StoreOpt


def endpoint_list(store: StoreOpt = DEFAULT_STORE) -> None:
    """Every model's local endpoint in the store: its address, whether it runs (and its pid),
    and what it serves."""
    from platforms.endpoint import endpoint_process, local_endpoints, served_versions

    found = local_endpoints(store)
    if not found:
        console.print(f"no local endpoint in {store}: a rollout starts one per model")
        return
    table = Table(title=f"local endpoints of {store}", title_justify="left")
    for column in ("model", "address", "process", "serves"):
        table.add_column(column)
    for name, folder in found.items():
        served = served_versions(folder)
        pid = endpoint_process(folder)
        running = f"running (pid {pid})" if pid else "stopped"
        serves = ", ".join(
            f"{d} {info['version']} {info['traffic']}%" for d, info in served["deployments"].items()
        )
        table.add_row(name, served["url"] or "", running, serves)
    print_table(table)


def endpoint_stop(
    store: StoreOpt = DEFAULT_STORE,
    model: ModelOpt = None,
    every: Annotated[
        bool, typer.Option("--all", help="Stop every local endpoint of the store.")
    ] = False,
) -> None:
    """Stop a model's local endpoint and its traffic collector (their deployments and traffic
    are kept: the model's next rollout, or `tunegate endpoint serve`, starts it again)."""
    from platforms.endpoint import endpoint_process, local_endpoints, stop_local_endpoint

    found = local_endpoints(store)
    chosen = _chosen(found, store, model, every)
    for name, folder in chosen.items():
        pid = endpoint_process(folder)
        if pid is None:
            console.print(f"the endpoint of {name} was not running")
            continue
        stop_local_endpoint(folder)
        console.print(f"stopped the endpoint of {name} (pid {pid}) and its traffic collector")


def _chosen(found: dict[str, Path], store: Path, model: str | None, every: bool) -> dict[str, Path]:
    """The endpoints meant: --model's, every one with --all, else the store's only one."""
    known = ", ".join(found) or "none yet"
    if model is not None:
        if model not in found:
            fail(f"no local endpoint of model {model!r} in {store} (endpoints: {known})")
        return {model: found[model]}
    if every or len(found) == 1:
        return found
    if not found:
        fail(f"no local endpoint in {store}: a rollout starts one per model")
    fail(f"{store} has {len(found)} local endpoints ({known}): give --model NAME, or --all")
