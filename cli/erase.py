"""`tunegate erase`: a person's record out of every dataset of the store, the models trained on
it marked `needs-retrain`, and (`--retrain`) the retrain that leaves it out (tasks/erasure.py)."""

from __future__ import annotations

import getpass
from pathlib import Path
from typing import Annotated

import typer

from cli.common import ConfigOpt, SetOpt, console, fail, load_cli_config, run_stage


def erase(
    id: Annotated[
        list[str] | None, typer.Option("--id", help="The record's id (as ingested); repeat.")
    ] = None,
    value: Annotated[
        str | None,
        typer.Option(
            "--value",
            help="A value the record holds (an e-mail, a name): searched for in every text of "
            "the raw and screened records; never written anywhere (the audit keeps a keyed hash).",
        ),
    ] = None,
    by: Annotated[
        str | None, typer.Option(help="Who asks for the erasure, for the audit (default: you).")
    ] = None,
    retrain: Annotated[
        bool,
        typer.Option(
            "--retrain",
            help="Then start a retrain on the same inputs; it leaves the erased records out.",
        ),
    ] = False,
    config: ConfigOpt = None,
    set: SetOpt = None,
) -> None:
    """Erase a record from every dataset of the store (raw, screened, split; rewritten as new
    signed versions, no old copy kept), mark every model version trained on it `needs-retrain`
    and write the audit under the store's erasures/. Exit 2 without --id or --value."""
    if bool(id) == bool(value):
        fail("give the record's id (--id, repeatable) or a value it holds (--value), not both")
    from tasks.erasure import erase_records

    cfg = load_cli_config(config, set)
    backends = cfg.backends()
    done = run_stage(
        lambda: erase_records(
            backends.store,
            backends.registry,
            ids=list(id or []),
            value=value,
            by=by or getpass.getuser(),
            retrain=retrain,
        )
    )
    record = done.record
    for dataset in record.datasets:
        rows = ", ".join(f"{t} {n}" for t, n in dataset.rows.items())
        console.print(f"erased from {dataset.stage} dataset {dataset.uri}: {rows}")
    if not record.datasets:
        console.print("no dataset of the store holds that record")
    for model in record.models:
        console.print(f"marked {model} needs-retrain")
    for source in done.sources:
        console.print(
            f"[yellow]{source} may still hold it: remove it there (later runs leave the erased "
            "ids out)[/yellow]"
        )
    print(record.model_dump_json(indent=2))
    if retrain:
        _retrain(config, set, done.sources, record.erasure_id)


def _retrain(config: Path | None, set: list[str] | None, sources: list[str], erasure: str) -> None:
    """The retrain on the config's inputs (else on the inputs the erased data was read from)."""
    from flows.retrain import retrain

    given = load_cli_config(config, set, **{"ingest.inputs": None})
    if not given.ingest.inputs:
        if not sources:
            fail("--retrain: the config names no inputs and no erased dataset recorded its own")
        given = load_cli_config(config, set, **{"ingest.inputs": sources})
    state = retrain(given, reason=f"erasure {erasure}", return_state=True)
    result = state.result(raise_on_failure=False)
    if hasattr(result, "model_dump_json"):
        print(result.model_dump_json(indent=2))
    if not state.is_completed():
        fail(f"retrain {state.type.value.lower()}: {state.message}", 1)
    console.print(f"retrain completed: {state.message}")
