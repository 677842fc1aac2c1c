"""`tunegate monitor <model>`: one window of a served model's traffic against its own data, now;
the result as JSON on stdout (the `monitor` flow's deployment does the same on a schedule)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from cli.common import ConfigOpt, SetOpt, console, fail, load_cli_config


def monitor(
    model: Annotated[
        str | None, typer.Argument(help="Registered model name (default: tunegate-<task>).")
    ] = None,
    since: Annotated[
        str | None,
        typer.Option(
            help="Start of the window, ISO 8601 (default: the last monitor.window_hours)."
        ),
    ] = None,
    until: Annotated[
        str | None, typer.Option(help="End of the window, ISO 8601 (default: now).")
    ] = None,
    report: Annotated[
        Path | None,
        typer.Option(help="Folder for the HTML report (default: <store>/monitoring)."),
    ] = None,
    emit: Annotated[
        bool,
        typer.Option(
            "--emit/--no-emit",
            help="Also publish the result as the monitor flow does: a Prefect event "
            "(tunegate.drift.detected or .clear, which the retrain deployment's trigger "
            "reads), an artifact and the champion's MLflow run.",
        ),
    ] = False,
    fail_on_drift: Annotated[
        bool, typer.Option(help="Exit 1 when the window drifted (for scripts and CI).")
    ] = False,
    config: ConfigOpt = None,
    set: SetOpt = None,
) -> None:
    """Compare one window of the champion's collected, masked traffic (the local endpoint's, or
    with monitor.source=azureml Azure ML's data collector output) with its own screened
    test and training data: input drift (length, vocabulary, out-of-vocabulary words, sentence
    embeddings), output drift (answer length, empty answers, score) and data quality (personal
    data, other languages, malformed requests, failures), each against its threshold
    (monitor.signals). Prints `drift`, `judged` and every signal with its value and threshold."""
    from screening.outputs import traffic_entities
    from tasks.monitor import monitor_model, parse_time, traffic_source

    cfg = load_cli_config(config, set)
    name = model or cfg.registry.name_for(cfg.task.value)
    try:
        window = [parse_time(t) if t else None for t in (since, until)]
    except ValueError as exc:
        fail(f"--since/--until: {exc}")
    backends = cfg.backends()
    store = backends.store
    folder = report or (Path(store.uri) / "monitoring" if store.is_local else None)
    try:
        collected = traffic_source(backends, name, cfg.monitor, cfg.azure)
        run = monitor_model(
            store,
            backends.registry,
            name,
            cfg.monitor,
            traffic_entities(cfg.screen),
            since=window[0],
            until=window[1],
            report_dir=folder,
            storage_options=store.storage_options,
            collected=collected,
        )
    except ValueError as exc:
        fail(str(exc))
    if emit:
        from flows.monitor import publish

        publish(cfg, run)
    print(json.dumps({**run.result.model_dump(mode="json"), "report": run.report}, indent=2))
    if run.report:
        console.print(f"report: {run.report}")
    if fail_on_drift and run.result.drift:
        raise typer.Exit(1)
