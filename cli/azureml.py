"""`tunegate azureml export`: what a run would submit to Azure ML, as YAML the `az ml` CLI accepts
(`write_export` is also what `tunegate run --dry-run` writes)."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from cli.common import console, fail, load_cli_config

if TYPE_CHECKING:
    from flows.config import PipelineConfig
    from platforms.azureml.monitoring import MonitorSpec
    from platforms.manifest import DatasetRef
    from tasks.monitor import MonitorConfig

azureml_app = typer.Typer(
    help="Azure ML: export the training job, compute, endpoint and deployment a run submits.",
    no_args_is_help=True,
)


@azureml_app.command("export")
def export_command(
    config: Annotated[
        Path | None, typer.Option("--config", "-c", help="Pipeline config YAML.")
    ] = None,
    set: Annotated[
        list[str] | None, typer.Option("--set", help="Override a field: key.path=value.")
    ] = None,
    out: Annotated[Path, typer.Option(help="Folder for the YAML files and staged code.")] = Path(
        "azureml-export"
    ),
    data: Annotated[
        str | None,
        typer.Option(
            help="Training data: a split dataset folder (local or az://; data.yml registers it "
            "as the data asset the jobs read), or an Azure ML reference (azureml:...). Default: "
            "azureml:<azureml.data_asset>@latest."
        ),
    ] = None,
    model_version: Annotated[
        str, typer.Option(help="Model asset version the exported deployment serves.")
    ] = "1",
) -> None:
    """Write the Azure ML files of a run and print the commands that submit them, in order;
    no credentials needed. Run by hand, they skip the approval and the gate."""
    write_export(load_cli_config(config, set), out, data, model_version)


def check_gpu_memory(cfg: PipelineConfig) -> None:
    """Print the training job's memory per GPU against its GPUs' (platforms/azureml/
    memory_check.py); exit 2, saying what would fit, when it cannot fit; a model or size the
    estimate does not know is a warning."""
    from platforms.azureml.memory_check import check_memory

    try:
        found = check_memory(cfg.train.trainer_args(cfg.task.value), cfg.azureml)
    except ValueError as error:
        fail(str(error))
    if found.estimate is None:
        console.print(f"[yellow]{found.message}[/]")
    else:
        console.print(found.message)


def write_export(
    cfg: PipelineConfig,
    out: Path,
    data: str | None,
    model_version: str = "1",
    check_memory: bool = True,
) -> None:
    """Export what a run with `cfg` submits; `data` is a split folder or an Azure ML reference.
    Prints the files and the next steps (also written to `steps.sh`); a mistake in the config
    or the data, or a job that cannot fit in its GPUs' memory (`check_gpu_memory`, unless
    `check_memory` is false: the caller checked), exits 2 with one line."""
    import os

    from platforms.azureml.datastores import account_of
    from platforms.azureml.entities import data_version
    from platforms.azureml.export import BANNER, export, next_steps, workspace_flags
    from platforms.training import TrainSpec
    from tasks.train import job_name, job_name_for

    split = _split(cfg, data) if data and not _is_reference(data) else None
    if check_memory:  # after the data's one line, when it cannot be read
        check_gpu_memory(cfg)
    if split is None:
        data_ref, version = data or f"azureml:{cfg.azureml.data_asset}@latest", None
        name = job_name_for(data_ref, cfg.task.value, cfg.train)
    else:
        data_ref, version = split.uri, data_version(split.content_hash)
        name = job_name(split, cfg.train)  # the job `tunegate run` submits for this split
    args = cfg.train.trainer_args(cfg.task.value)
    spec = TrainSpec(name=name, data_dir=data_ref, args=args)
    env = cfg.azureml.environment
    model = args.get("model")
    if model and model.startswith("packaged:") and (env.asset or env.image or env.build_context):
        console.print(
            f"[yellow]train.model is {model}: that model ships in a pip package the "
            "configured container may not have (the tunegate environment has it).[/]"
        )
    endpoint = cfg.azureml.endpoint.for_model(cfg.registry.name_for(cfg.task.value))
    azureml = cfg.azureml.model_copy(update={"endpoint": endpoint})
    try:
        written = export(
            azureml,
            spec,
            out,
            data=data_ref,
            model=f"azureml:{cfg.azureml.model_name}:{model_version}",
            storage_account=cfg.azure.account_name
            or account_of(os.environ.get(cfg.azure.connection_string_env)),
            data_version=version,
            screen=cfg.screen.model_dump(mode="json"),
            monitor=monitor_spec(cfg.monitor),
        )
    except ValueError as error:
        fail(str(error))
    for kind, path in written.items():
        typer.echo(f"{kind:<10} {path}")
    flags, missing = workspace_flags(cfg.azureml.workspace)
    if missing:
        console.print(f"[yellow]{missing}; the commands below say <resource-group>.[/]")
    steps = next_steps(written, azureml, name, flags)
    banner = textwrap.wrap(BANNER, 96)
    typer.echo("\n".join(["", *(f"# {line}" for line in banner), f"cd {out}", *steps]))
    script = out / "steps.sh"
    header = ["#!/usr/bin/env bash", *(f"# {line}" for line in banner), "set -euo pipefail"]
    script.write_text("\n".join([*header, 'cd "$(dirname "$0")"', *steps, ""]))
    typer.echo(f"(also in {script})")


def monitor_spec(monitor: MonitorConfig) -> MonitorSpec:
    """Azure ML's monitoring schedule from the local monitor's config: its cron, its window (in
    whole days), `monitor.alert_emails`, and the thresholds with an Azure counterpart:
    `input_length` → data drift (numerical), `score` → prediction drift (numerical), both by the
    same test (Wasserstein, PSI, Jensen-Shannon or KS); `malformed_requests` → data quality's data
    type error rate. Azure's defaults for the rest: its signals read columns, and the vocabulary,
    embedding and rate signals have no column test to map to."""
    from platforms.azureml.monitoring import MonitorSpec, drift_metric, window_days

    length, score = monitor.signals.input_length, monitor.signals.score
    quality = monitor.signals.malformed_requests
    return MonitorSpec(
        schedule=monitor.schedule,
        window_days=window_days(monitor.window_hours),
        alert_emails=tuple(monitor.alert_emails),
        input_drift=drift_metric(length.method, length.threshold, length.enabled),
        prediction_drift=drift_metric(score.method, score.threshold, score.enabled),
        data_type_error_rate=quality.threshold if quality.enabled else None,
    )


def _is_reference(data: str) -> bool:
    """An Azure ML reference (data asset, datastore path) or a URL: the job reads it as is."""
    return data.startswith(("azureml:", "https://", "http://"))


def _split(cfg: PipelineConfig, data: str) -> DatasetRef:
    """The split dataset at `data` (a folder here, or az:// read with the config's azure
    credentials), verified; exits 2 with one line when it cannot be read, is no split, or is a
    split of another task than the config's."""
    from azure.core.exceptions import AzureError

    from platforms.blob import check_sign_in, is_azure, storage_options
    from platforms.store import Store

    if not is_azure(data) and not Path(data).is_dir():
        fail(
            f"--data {data}: no such folder; give a split dataset folder of the store "
            "(datasets/split/<key>), an az:// one, or an Azure ML reference (azureml:...)"
        )
    where = data if is_azure(data) else str(Path(data).resolve())
    try:
        check_sign_in(where, cfg.azure)
        store = Store(where, storage_options(where, cfg.azure), cfg.approval.signing_key())
        split = store.dataset_at(where)
    except (ValueError, OSError, AzureError) as error:
        reason = (str(error).strip().splitlines() or [type(error).__name__])[0]
        fail(f"--data {data}: cannot read the split: {reason}")
    if split.stage != "split":
        fail(f"--data {data} is a {split.stage} dataset, not a split one (datasets/split/<key>)")
    if split.task != cfg.task.value:
        fail(
            f"--data {data} is a split of {split.task} records, but the config's task is "
            f"{cfg.task.value}: export a split of {cfg.task.value} records, or set task: "
            f"{split.task}"
        )
    return split
