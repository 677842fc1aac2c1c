"""The `monitor` flow: watch what was deployed. For each served model, one window of its
champion's collected traffic against the champion's own data (tasks/monitor.py), then:

- a Prefect event, `tunegate.drift.detected` (the drifted signals, the window, the version) or
  `tunegate.drift.clear`, on the resource `tunegate.model.<name>`: the retrain deployment's
  trigger starts a run from the first (flows/deployments.py, with a cool-down);
- a Prefect artifact (the signals against their thresholds) and the HTML report, also logged
  in the champion's MLflow run (`monitoring/`, with each signal's value as a metric).

`tunegate monitor <model>` runs the same window from the command line and prints the result as
JSON; the `monitor` deployment runs this flow on `monitor.schedule` (hourly).
"""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Any

from prefect import flow
from prefect.artifacts import create_markdown_artifact
from prefect.events import emit_event
from pydantic import BaseModel, ConfigDict, Field

from flows.config import PipelineConfig, load_config
from platforms.notify import model_resource
from screening.outputs import traffic_entities
from tasks.drift_signals import DriftResult
from tasks.monitor import MonitorRun, monitor_task, parse_time
from tasks.monitor import served_models as find_served

log = logging.getLogger(__name__)
DRIFT_DETECTED = "tunegate.drift.detected"
DRIFT_CLEAR = "tunegate.drift.clear"
REPORTS = "monitoring"  # in the store, and in the champion's MLflow run


class MonitorRequest(BaseModel):
    """Which models the monitor reads, from when, with which config."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    models: list[str] = Field(
        default_factory=list,
        title="Models",
        description="Registered model names; empty: every model with a champion and an endpoint.",
    )
    since: str = Field(
        "",
        title="Since",
        description="Start of the window (ISO 8601); empty: the last monitor.window_hours.",
    )
    overrides: list[str] = Field(
        default_factory=list,
        title="Overrides",
        description="Config fields to change, key=value (monitor.min_requests=50).",
    )
    config_file: str = Field(
        "", title="Config file", description="Pipeline config YAML; empty: the defaults."
    )

    def config(self) -> PipelineConfig:
        path = Path(self.config_file) if self.config_file.strip() else None
        return load_config(path, list(self.overrides))


def served_models(config: PipelineConfig) -> list[str]:
    """Registered models with a champion served where monitor.source reads (locally: every
    model with an endpoint folder; on Azure ML: the config's model, registry.model_name)."""
    own = config.registry.name_for(config.task.value)
    return find_served(config.backends(), config.monitor, own)


def drift_event(result: DriftResult, report: str | None) -> dict[str, Any] | None:
    """The event a judged window emits (None when it was not judged): its name and payload."""
    if not result.judged:
        return None
    payload: dict[str, Any] = {
        "model": result.model,
        "version": result.version,
        "since": result.since,
        "until": result.until,
        "requests": result.requests,
        "drifted": result.drifted,
        "signals": {
            s.name: {"value": s.value, "threshold": s.threshold}
            | ({} if s.chance is None else {"chance": s.chance})
            for s in result.signals
            if s.drift
        },
        "report": report,
    }
    return {"event": DRIFT_DETECTED if result.drift else DRIFT_CLEAR, "payload": payload}


def publish(config: PipelineConfig, run: MonitorRun) -> None:
    """The result as a Prefect event and artifact, and in the champion's MLflow run."""
    result = run.result
    event = drift_event(result, run.report)
    if event is not None:
        emit_event(
            event=event["event"], resource=model_resource(result.model), payload=event["payload"]
        )
    create_markdown_artifact(
        key=_artifact_key(result.model),
        markdown=result_markdown(result, run.report),
        description=f"monitor: {result.model} v{result.version}, {result.reason}",
    )
    if run.report is not None and result.judged:
        _log_to_mlflow(config, result, Path(run.report))


def result_markdown(result: DriftResult, report: str | None) -> str:
    """The signals against their thresholds, drifted first, as a markdown table."""
    verdict = "**DRIFT**" if result.drift else ("no drift" if result.judged else "not judged")
    lines = [
        f"# {result.model} v{result.version}: {verdict}",
        "",
        f"{result.reason}. Window {result.since} → {result.until}: {result.requests} requests, "
        f"{result.reference_records} reference records.",
        "",
        "| signal | kind | value | threshold | result |",
        "|---|---|---|---|---|",
    ]
    for s in sorted(result.signals, key=lambda s: not s.drift):
        value = "-" if s.value is None else f"{s.value:g}"
        mark = "**drift**" if s.drift else "ok"
        # a domain classifier's AUC must also beat chance at the window's size
        limit = f"{s.threshold:g}" + ("" if s.chance is None else f", chance {s.chance:g}")
        lines.append(f"| {s.name} | {s.kind} | {value} | {limit} | {mark} |")
    if report:
        lines += ["", f"Report with plots: `{report}`"]
    return "\n".join(lines)


def _artifact_key(model: str) -> str:
    return "monitor-" + re.sub(r"[^a-z0-9-]+", "-", model.lower()).strip("-")


def _log_to_mlflow(config: PipelineConfig, result: DriftResult, report: Path) -> None:
    """The report and each signal's value (a metric whose step is the window's end, in hours
    since the epoch) in the MLflow run that trained the champion."""
    from datetime import datetime

    from platforms.tracking import client

    backends = config.backends()
    champion = backends.registry.alias(result.model, "champion")
    run_id = champion.lineage.tracking_run_id if champion else None
    if not run_id:
        return
    mlflow = client(backends.tracking_uri())
    mlflow.log_artifact(run_id, str(report), REPORTS)
    step = int(datetime.fromisoformat(result.until).timestamp() // 3600)
    for s in result.signals:
        if s.value is not None:
            mlflow.log_metric(run_id, f"monitor.{s.name}", s.value, step=step)
    mlflow.log_metric(run_id, "monitor.drift", float(result.drift), step=step)


@flow(name="monitor", flow_run_name="monitor", log_prints=True)
def monitor(request: MonitorRequest | None = None) -> list[DriftResult]:
    """Watch every served model (or the request's): one window each, an event, a report."""
    request = request or MonitorRequest()
    config = request.config()
    backends = config.backends()
    store = backends.store
    since = parse_time(request.since) if request.since.strip() else None
    entities = traffic_entities(config.screen)
    report_dir = Path(store.uri) / REPORTS if store.is_local else None
    results = []
    for model in request.models or served_models(config):
        run = monitor_task(
            backends,
            model,
            config.monitor,
            entities,
            since=since,
            report_dir=report_dir,
            azure=config.azure,
        )
        publish(config, run)
        log.info("monitor %s v%s: %s", model, run.result.version, run.result.reason)
        results.append(run.result)
    return results
