"""`tunegate azureml export`: what a run would submit to Azure ML, as YAML the `az ml` CLI accepts
(`write_export` is also what `tunegate run --dry-run` writes)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from cli.common import console, load_cli_config

if TYPE_CHECKING:
    from flows.config import PipelineConfig

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
            help="Training data: a split dataset folder in the store (uploaded by `az ml job "
            "create`), or an Azure ML reference. Default: azureml:<azureml.data_asset>@latest."
        ),
    ] = None,
    model_version: Annotated[
        str, typer.Option(help="Model asset version the exported deployment serves.")
    ] = "1",
) -> None:
    """Write compute.yml, job.yml, endpoint.yml and deployment.yml; no credentials needed."""
    write_export(load_cli_config(config, set), out, data, model_version)


def write_export(
    cfg: PipelineConfig, out: Path, data: str | None, model_version: str = "1"
) -> None:
    """Export what a run with `cfg` submits; `data` is a split folder or an Azure ML reference."""
    import os

    from platforms.azureml.entities import account_of
    from platforms.azureml.export import export
    from platforms.blob import is_azure
    from platforms.training import TrainSpec
    from tasks.train import job_name

    data_ref = data or f"azureml:{cfg.azureml.data_asset}@latest"
    name = f"tunegate-{cfg.task.value}-train"
    if data and (is_azure(data) or Path(data).is_dir()):  # a split dataset in the store
        split = cfg.open_store().dataset_at(data if is_azure(data) else str(Path(data).resolve()))
        name, data_ref = job_name(split, cfg.train), split.uri
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
    try:
        written = export(
            cfg.azureml.model_copy(update={"endpoint": endpoint}),
            spec,
            out,
            data=data_ref,
            model=f"azureml:{cfg.azureml.model_name}:{model_version}",
            storage_account=cfg.azure.account_name
            or account_of(os.environ.get(cfg.azure.connection_string_env)),
        )
    except ValueError as error:
        console.print(f"[red]{error}[/]")
        raise typer.Exit(2) from None
    for kind, path in written.items():
        typer.echo(f"{kind:<10} {path}")
    environments = ("environment", "serving-environment", "serving-environment-gpu")
    first = "".join(
        f"az ml {'environment' if kind in environments else kind} create -f {kind}.yml && "
        for kind in (*environments, "datastore")
        if kind in written
    )
    typer.echo(
        f"submit: cd {out} && {first}az ml compute create -f compute.yml && "
        "az ml job create -f job.yml"
    )
    typer.echo(
        "then, once the job has completed: az ml job create -f evaluate-job.yml; to serve its "
        "registered model: az ml online-endpoint create -f endpoint.yml && "
        "az ml online-deployment create -f deployment.yml --all-traffic"
    )
