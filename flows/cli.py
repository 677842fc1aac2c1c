"""The `tunegate` command line: run the flow, run one stage, make sample data, approve or reject."""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
from pathlib import Path
from typing import Annotated, Any
from uuid import UUID

os.environ.setdefault("TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS", "")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")  # offline: no telemetry

import typer
import yaml
from rich.console import Console
from rich.table import Table

from flows.azureml_cli import azureml_app
from flows.config import ConfigError, PipelineConfig, load_config
from flows.deploy_cli import deploy, serve
from flows.endpoint_cli import endpoint_app

app = typer.Typer(
    help="tunegate: retrain language models safely (screened data, human approval, gates).",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
data_app = typer.Typer(help="Sample data.", no_args_is_help=True)
models_app = typer.Typer(help="Registered models.", no_args_is_help=True)
config_app = typer.Typer(help="Inspect the pipeline config.", no_args_is_help=True)
app.add_typer(data_app, name="data")
app.add_typer(config_app, name="config")
app.add_typer(models_app, name="models")
app.add_typer(endpoint_app, name="endpoint")
app.add_typer(azureml_app, name="azureml")
app.command("serve")(serve)
app.command("deploy")(deploy)
console = Console(stderr=True, soft_wrap=True)

ConfigOpt = Annotated[
    Path | None, typer.Option("--config", "-c", help="Pipeline config YAML (configs/local.yaml).")
]
SetOpt = Annotated[
    list[str] | None,
    typer.Option("--set", help="Override a config field: --set screen.toxicity.threshold=0.9"),
]
InputOpt = Annotated[
    list[str] | None,
    typer.Option("--input", "-i", help="Input file, directory or glob (local or az://); repeat."),
]


def _config(path: Path | None, overrides: list[str] | None, **fields: Any) -> PipelineConfig:
    extra = [f"{k}={json.dumps(v)}" for k, v in fields.items() if v is not None]
    try:
        return load_config(path, [*(overrides or []), *extra])
    except ConfigError as exc:
        console.print(f"[red]{exc}[/red]")
        raise typer.Exit(2) from None


@app.command()
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
    """Run the retrain flow. With no input, generate sample data first."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _exit_on_sigterm)
    cfg = _config(config, set, **{"ingest.inputs": input, "approval.mode": approval})
    if dry_run is not None:
        cfg = cfg.model_copy(update={"until": "split"})
    if not cfg.ingest.inputs:
        sample_path = _ensure_sample(cfg, sample_n)
        cfg = cfg.model_copy(
            update={"ingest": cfg.ingest.model_copy(update={"inputs": [str(sample_path)]})}
        )
    from flows.retrain import retrain

    state = retrain(cfg, return_state=True)
    result = state.result(raise_on_failure=False)
    if summary is not None and hasattr(result, "model_dump_json"):
        summary.parent.mkdir(parents=True, exist_ok=True)
        summary.write_text(result.model_dump_json(indent=2))
    if hasattr(result, "stages"):
        _print_summary(result)
    if getattr(result, "endpoint", None):
        _print_endpoint(result.endpoint)
    if not state.is_completed():
        console.print(f"[red]retrain {state.name.lower()}: {state.message}[/red]")
        raise typer.Exit(1)
    if dry_run is not None:
        from flows.azureml_cli import write_export

        write_export(cfg, dry_run, result.stages["split"].details["uri"])


def _exit_on_sigterm(signum: int, frame: Any) -> None:
    """A terminated run exits like an interrupted one, so exit handlers run: Prefect's temporary
    API server stops with it (a run killed by the signal left that server running)."""
    raise SystemExit(128 + signum)


def _ensure_sample(cfg: PipelineConfig, n: int) -> Path:
    from samples.generate import generate_sample, write_sample

    if cfg.task.value not in ("extractive-qa", "summarization"):
        console.print("[red]sample data exists for extractive-qa and summarization only[/red]")
        raise typer.Exit(2)
    path = Path(cfg.store) / "samples" / f"{cfg.task.value}-{n}.jsonl"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        write_sample(generate_sample(cfg.task.value, n), path)
        console.print(f"generated {n} sample lines at {path}")
    return path


def _print_endpoint(endpoint: dict[str, Any]) -> None:
    traffic = ", ".join(f"{k} {v}%" for k, v in endpoint["traffic"].items())
    console.print(f"endpoint {endpoint['url']}  ({traffic}; key in {endpoint['key_file']})")
    example = endpoint.get("example")
    if example:
        console.print(
            f"curl -s {endpoint['url']}/score -H 'Content-Type: application/json' "
            f'-H "Authorization: Bearer $(cat {endpoint["key_file"]})" '
            f"-d '{json.dumps(example['request'])}'"
        )
        console.print(f"→ {json.dumps(example['response'])}")


def _print_summary(summary: Any) -> None:
    table = Table(title=f"retrain {summary.status}")
    for column in ("stage", "status", "seconds", "details"):
        table.add_column(column)
    for stage, s in summary.stages.items():
        details = ", ".join(f"{k}={v}" for k, v in s.details.items() if k != "content_hash")
        table.add_row(stage, s.status, f"{s.seconds:.1f}", details)
    console.print(table)


@app.command()
def ingest(config: ConfigOpt = None, input: InputOpt = None, set: SetOpt = None) -> None:
    """Read, validate and deduplicate inputs into an ingest dataset; print its manifest."""
    from platforms.compute import shared_client
    from tasks.ingest import run_ingest

    cfg = _config(config, set, **{"ingest.inputs": input})
    ref = _stage(
        lambda: run_ingest(
            shared_client(cfg.dask),
            cfg.open_store(),
            cfg.task,
            cfg.columns,
            cfg.ingest,
            cfg.azure,
            cfg.dask.partition_rows,
        )
    )
    print(ref.model_dump_json(indent=2))


@app.command()
def screen(
    dataset: Annotated[str, typer.Argument(help="An ingest dataset directory.")],
    config: ConfigOpt = None,
    set: SetOpt = None,
) -> None:
    """Screen an ingest dataset for PII, secrets and toxicity; print the report."""
    from platforms.compute import shared_client
    from tasks.screen import report_markdown, run_screen

    cfg = _config(config, set)
    store = cfg.open_store()
    ref, report = _stage(
        lambda: run_screen(shared_client(cfg.dask), store, store.dataset_at(dataset), cfg.screen)
    )
    console.print(report_markdown(report))
    print(ref.model_dump_json(indent=2))


@app.command()
def split(
    dataset: Annotated[str, typer.Argument(help="A screen dataset directory.")],
    config: ConfigOpt = None,
    set: SetOpt = None,
    exclude: Annotated[
        list[str] | None, typer.Option(help="Record id to leave out; repeat.")
    ] = None,
) -> None:
    """Split a screened dataset into train / validation / test."""
    from platforms.compute import shared_client
    from tasks.split import run_split

    cfg = _config(config, set)
    store = cfg.open_store()
    ref = _stage(
        lambda: run_split(
            shared_client(cfg.dask), store, store.dataset_at(dataset), cfg.split, exclude or []
        )
    )
    print(ref.model_dump_json(indent=2))


def _stage(fn: Any) -> Any:
    try:
        return fn()
    except (ValueError, FileNotFoundError) as exc:
        console.print(f"[red]{exc}[/red]")
        raise typer.Exit(2) from None


ReviewerOpt = Annotated[str, typer.Option(help="Who decides (kept in the audit record).")]
CommentOpt = Annotated[str, typer.Option(help="Why (kept in the audit record).")]


@app.command()
def approve(
    flow_run_id: Annotated[str, typer.Argument(help="The paused retrain flow run id.")],
    reviewer: ReviewerOpt,
    comment: CommentOpt = "",
    exclude: Annotated[
        list[str] | None, typer.Option(help="Record id to leave out; repeat.")
    ] = None,
) -> None:
    """Approve the screened data of a paused run (resumes it through the Prefect API)."""
    _resume(
        flow_run_id,
        {"approved": True, "reviewer": reviewer, "comment": comment, "exclude_ids": exclude or []},
    )


@app.command()
def reject(
    flow_run_id: Annotated[str, typer.Argument(help="The paused retrain flow run id.")],
    reviewer: ReviewerOpt,
    comment: CommentOpt = "",
) -> None:
    """Reject the screened data of a paused run: it stops before split and training."""
    _resume(
        flow_run_id,
        {"approved": False, "reviewer": reviewer, "comment": comment, "exclude_ids": []},
    )


def _resume(flow_run_id: str, answer: dict[str, Any]) -> None:
    from prefect.exceptions import FlowPauseTimeout, NotPausedError, ObjectNotFound
    from prefect.flow_runs import resume_flow_run

    try:
        resume_flow_run(UUID(flow_run_id), run_input=answer)
    except ValueError as exc:
        console.print(f"[red]{flow_run_id!r} is not a flow run id: {exc}[/red]")
        raise typer.Exit(2) from None
    except ObjectNotFound:
        console.print(f"[red]no flow run {flow_run_id} on the Prefect API (PREFECT_API_URL?)[/red]")
        raise typer.Exit(2) from None
    except (NotPausedError, FlowPauseTimeout, RuntimeError) as exc:  # RuntimeError: input refused
        console.print(f"[red]cannot resume {flow_run_id}: {exc}[/red]")
        raise typer.Exit(1) from None
    verb = "approved" if answer["approved"] else "rejected"
    console.print(f"{verb} flow run {flow_run_id} as {answer['reviewer']}")


@data_app.command("sample")
def data_sample(
    task: Annotated[str, typer.Option(help="extractive-qa or summarization.")] = "extractive-qa",
    n: Annotated[int, typer.Option(help="Number of lines (valid, duplicate and broken).")] = 600,
    out: Annotated[Path, typer.Option(help="Output file: .jsonl, .csv or .parquet.")] = Path(
        "sample.jsonl"
    ),
    seed: Annotated[int, typer.Option(help="Same seed, same bytes.")] = 0,
) -> None:
    """Generate support-ticket records with planted PII, secrets, toxicity and broken lines."""
    from samples.generate import generate_sample, write_sample

    try:
        sample = generate_sample(task, n, seed)
    except ValueError as exc:
        console.print(f"[red]{exc}[/red]")
        raise typer.Exit(2) from None
    out.parent.mkdir(parents=True, exist_ok=True)
    write_sample(sample, out)
    console.print(
        f"wrote {len(sample.lines)} lines to {out}: {sum(sample.malformed.values())} malformed, "
        f"{sample.duplicate_count} duplicates, {sample.blank_lines} blank"
    )


@config_app.command("show")
def config_show(config: ConfigOpt = None, set: SetOpt = None) -> None:
    """Print the validated config with every default filled in."""
    cfg = _config(config, set)
    yaml.safe_dump(cfg.model_dump(mode="json"), sys.stdout, sort_keys=False)


@config_app.command("schema")
def config_schema() -> None:
    """Print the JSON schema of the config (what the Prefect UI form is built from)."""
    print(json.dumps(PipelineConfig.model_json_schema(), indent=2))


@app.command()
def metrics(
    task: Annotated[str, typer.Option(help="extractive-qa or summarization.")],
    predictions: Annotated[Path, typer.Option(help='JSONL of {"id", "prediction"}.')],
    references: Annotated[
        Path, typer.Option(help="Records of the task's schema: JSONL, or a dataset directory.")
    ],
) -> None:
    """Score a predictions file offline with the same metric code as the gate; print JSON."""
    from tasks.evaluate import score
    from trainer.data import read_split

    try:
        preds = {str(row["id"]): row["prediction"] for row in _jsonl(predictions)}
        if references.is_dir():
            tables = [t for t in ("test", "validation", "train") if (references / t).is_dir()]
            records = [r for t in tables for r in read_split(references, t)]
        else:
            records = list(_jsonl(references))
        missing = [str(r["id"]) for r in records if str(r["id"]) not in preds]
        if missing:
            raise ValueError(f"{len(missing)} references have no prediction, e.g. {missing[:3]}")
        values, _ = score(task, [preds[str(r["id"])] for r in records], records)
    except (ValueError, KeyError, OSError) as exc:
        console.print(f"[red]{exc}[/red]")
        raise typer.Exit(2) from None
    print(json.dumps(values, indent=2))


def _jsonl(path: Path) -> Any:
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        if line.strip():
            try:
                yield json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path}:{number}: not JSON ({exc.msg})") from None


@app.command()
def rollback(
    name: Annotated[
        str | None, typer.Argument(help="Registered model name (default: tunegate-<task>).")
    ] = None,
    config: ConfigOpt = None,
    set: SetOpt = None,
) -> None:
    """Serve the previous champion again at 100% and move the champion alias back to it."""
    from tasks.register import registry_for
    from tasks.rollout import endpoint_for, roll_back_to_previous, timeline_markdown

    cfg = _config(config, set)
    store = cfg.open_store()
    backend = endpoint_for(store, cfg.rollout, cfg.azureml)
    try:
        record = roll_back_to_previous(
            backend,
            registry_for(store, cfg.registry, cfg.azureml),
            name or cfg.registry.name_for(cfg.task.value),
        )
    except ValueError as exc:
        console.print(f"[red]{exc}[/red]")
        raise typer.Exit(2) from None
    finally:
        backend.close()
    print(timeline_markdown(record))
    _print_endpoint(record.endpoint)


@models_app.command("list")
def models_list(config: ConfigOpt = None, set: SetOpt = None) -> None:
    """Registered models, their versions and aliases."""
    from tasks.register import registry_for

    cfg = _config(config, set)
    registry = registry_for(cfg.open_store(), cfg.registry, cfg.azureml)
    table = Table(title="models")
    for column in ("model", "version", "aliases", "created", "metrics"):
        table.add_column(column)
    for name in registry.names():
        aliases = registry.aliases(name)
        for v in registry.versions(name):
            tags = ", ".join(a for a, n in aliases.items() if n == v.version)
            shown = ", ".join(f"{k}={val:.1f}" for k, val in v.metrics.items())
            table.add_row(name, str(v.version), tags, v.created_at, shown)
    Console(soft_wrap=True).print(table)


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
    from tasks.register import registry_for

    cfg = _config(config, set)
    registry = registry_for(cfg.open_store(), cfg.registry, cfg.azureml)
    try:
        found = (
            registry.get(name, int(version)) if version.isdigit() else registry.alias(name, version)
        )
    except KeyError as exc:
        found, message = None, str(exc)
    else:
        message = f"{name} has no {version!r}"
    if found is None:
        console.print(f"[red]{message}[/red]")
        raise typer.Exit(2)
    print(found.model_dump_json(indent=2))


if __name__ == "__main__":
    app()
