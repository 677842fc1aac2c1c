"""`tunegate run` (the whole retrain flow) and `tunegate ingest|screen|split` (one data stage each,
chained over dataset directories)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer
from rich.table import Table

from cli.azureml import check_gpu_memory, write_export
from cli.common import (
    ConfigOpt,
    ExcludeOpt,
    InputOpt,
    SetOpt,
    console,
    fail,
    load_cli_config,
    print_endpoint,
    print_table,
    run_stage,
)
from cli.stopping import RunStop
from platforms.tracking import LOCAL_UI

if TYPE_CHECKING:
    from flows.config import PipelineConfig
    from platforms.manifest import DatasetRef


def run(
    config: ConfigOpt = None,
    input: InputOpt = None,
    approval: Annotated[
        str | None, typer.Option(help="Approval mode: manual, auto or auto-if-clean.")
    ] = None,
    set: SetOpt = None,
    summary: Annotated[Path | None, typer.Option(help="Write the run summary JSON here.")] = None,
    sample_n: Annotated[int, typer.Option(help="Sample size when no input is given.")] = 600,
    dry_run: Annotated[
        Path | None,
        typer.Option(
            help="Run the data stages only, then write the Azure ML job, compute, endpoint and "
            "deployment YAML for the split into this folder instead of training."
        ),
    ] = None,
) -> None:
    """Run the retrain flow. With no input, generate sample data first.

    Ctrl-C or SIGTERM stops the run, its training job and Prefect's temporary server within
    seconds, and still writes the --summary (status: cancelled)."""
    with RunStop(summary) as stop:
        _run(stop, config, input, approval, set, summary, sample_n, dry_run)


def _run(
    stop: RunStop,
    config: Path | None,
    input: list[str] | None,
    approval: str | None,
    set: list[str] | None,
    summary: Path | None,
    sample_n: int,
    dry_run: Path | None,
) -> None:
    cfg = load_cli_config(config, set, **{"ingest.inputs": input, "approval.mode": approval})
    _check_memory(cfg, dry_run is not None)
    if dry_run is not None:
        cfg = cfg.model_copy(update={"until": "split"})
    if not cfg.ingest.inputs:
        sample_path = _ensure_sample(cfg, sample_n)
        cfg = cfg.model_copy(
            update={"ingest": cfg.ingest.model_copy(update={"inputs": [str(sample_path)]})}
        )
    from flows.retrain import retrain
    from flows.summary import STOPS
    from tasks.ingest_inputs import expand_inputs

    run_stage(
        lambda: expand_inputs(cfg.ingest.inputs, cfg.azure, cfg.task)
    )  # a bad path exits 2 here

    try:
        state = retrain(cfg, return_state=True)
    except STOPS:
        _cancelled(stop)
    if stop.stopped:  # Prefect ended the flow on the signal without raising it
        _cancelled(stop)
    result = state.result(raise_on_failure=False)
    if summary is not None and hasattr(result, "model_dump_json"):
        summary.parent.mkdir(parents=True, exist_ok=True)
        summary.write_text(result.model_dump_json(indent=2))
    if hasattr(result, "stages"):
        _print_summary(result)
    if getattr(result, "endpoint", None):
        print_endpoint(result.endpoint)
    if not state.is_completed():
        unusable = getattr(result, "status", None) == "no-usable-records"
        fail(f"retrain {state.type.value.lower()}: {state.message}", 2 if unusable else 1)
    if dry_run is not None:
        write_export(cfg, dry_run, result.stages["split"].details["uri"], check_memory=False)


def _check_memory(cfg: PipelineConfig, exported: bool) -> None:
    """A training job that cannot fit in its GPUs' memory exits 2 before any stage runs: the
    exported Azure ML job's (--dry-run), else the training platform's (none for local)."""
    if exported:
        check_gpu_memory(cfg)
        return
    settings = cfg.backend_settings()
    memory = run_stage(lambda: settings.training_memory(cfg.train.trainer_args(cfg.task.value)))
    if memory:
        console.print(memory)


def _cancelled(stop: RunStop) -> NoReturn:
    stop.write_summary()
    console.print(f"retrain cancelled ({stop.signum.name}): what it finished is kept")
    raise typer.Exit(stop.exit_code)


def _ensure_sample(cfg: PipelineConfig, n: int) -> Path:
    from samples.generate import check_task, generate_sample, write_sample

    try:
        check_task(cfg.task.value)
    except ValueError as exc:
        fail(str(exc))
    path = Path(cfg.store) / "samples" / f"{cfg.task.value}-{n}.jsonl"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        write_sample(generate_sample(cfg.task.value, n), path)
        console.print(f"generated {n} sample lines at {path}")
    return path


def _print_summary(summary: Any) -> None:
    table = Table(title=f"retrain {summary.status}")
    for column in ("stage", "status", "seconds", "details"):
        table.add_column(column)
    for stage, s in summary.stages.items():
        details = ", ".join(f"{k}={v}" for k, v in s.details.items() if k != "content_hash")
        table.add_row(stage, s.status, f"{s.seconds:.1f}", details)
    print_table(table, console)  # a long path wraps, never cut with "…"
    if summary.evaluation:
        from flows.summary import gate_line

        console.print(gate_line(summary.evaluation))
    if getattr(summary, "tracking_run", None):
        console.print(f"MLflow run: {_link(summary.tracking_run)}", soft_wrap=True)
    if getattr(summary, "model_version_url", None):
        console.print(f"MLflow model version: {_link(summary.model_version_url)}", soft_wrap=True)
    if str(getattr(summary, "tracking_run", "")).startswith(LOCAL_UI):
        console.print(f"(served at {LOCAL_UI} by `tunegate ui`)")


def _link(address: str) -> str:
    """An address a terminal shows as a link (rich's hyperlink markup, the address itself
    printed whole so a terminal without links still shows it)."""
    if not address.startswith(("http://", "https://")):
        return address
    return f"[link={address}]{address}[/link]"


def ingest(config: ConfigOpt = None, input: InputOpt = None, set: SetOpt = None) -> None:
    """Read, validate and deduplicate inputs into an ingest dataset; print its manifest."""
    from platforms.compute import shared_client
    from tasks.ingest import quarantine_reasons, run_ingest

    cfg = load_cli_config(config, set, **{"ingest.inputs": input})
    store = cfg.open_store()
    ref = run_stage(
        lambda: run_ingest(
            shared_client(cfg.dask),
            store,
            cfg.task,
            cfg.columns,
            cfg.ingest,
            cfg.azure,
            cfg.dask.partition_rows,
        )
    )
    print(ref.model_dump_json(indent=2))
    _exit_without_records(ref, quarantine_reasons(store, ref))


def screen(
    dataset: Annotated[str, typer.Argument(help="An ingest dataset directory.")],
    config: ConfigOpt = None,
    set: SetOpt = None,
) -> None:
    """Screen an ingest dataset for PII, secrets and toxicity; print the report."""
    from platforms.compute import shared_client
    from screening.report import report_markdown
    from tasks.screen import run_screen

    cfg = load_cli_config(config, set)
    store = cfg.open_store()
    ref, report = run_stage(
        lambda: run_screen(
            shared_client(cfg.dask), store, store.dataset_at(dataset), cfg.screen, cfg.azure
        )
    )
    console.print(report_markdown(report))
    print(ref.model_dump_json(indent=2))
    _exit_without_records(ref, report.quarantine_reasons)


def split(
    dataset: Annotated[str, typer.Argument(help="A screen dataset directory.")],
    config: ConfigOpt = None,
    set: SetOpt = None,
    exclude: ExcludeOpt = None,
) -> None:
    """Split a screened dataset into train / validation / test."""
    from platforms.compute import shared_client
    from tasks.split import run_split

    cfg = load_cli_config(config, set)
    store = cfg.open_store()
    ref = run_stage(
        lambda: run_split(
            shared_client(cfg.dask), store, store.dataset_at(dataset), cfg.split, exclude or []
        )
    )
    print(ref.model_dump_json(indent=2))


def _exit_without_records(dataset: DatasetRef, reasons: dict[str, int]) -> None:
    """A stage command whose dataset kept no record exits 2 saying why (its top reasons)."""
    from tasks.records import NoUsableRecords, require_records

    try:
        require_records(dataset, reasons)
    except NoUsableRecords as exc:
        fail(str(exc))  # exit 2, as `tunegate run` over the same input
