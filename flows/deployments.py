"""The `retrain` flow's two Prefect deployments, `retrain/nightly` and `retrain/manual`.

Both are read from `deployments/prefect.yaml`, so the deployments `tunegate deployments serve`
serves and the work-pool deployments `tunegate deployments apply` registers are the same: the yaml
holds the names, schedule, tags and each deployment's `request` (the nightly one's approval
`auto-if-clean` and inbox); `--config` becomes the request's config file, and `cron`, `timezone`
and `inputs` override the nightly run.

Both run `flows.retrain.retrain_request`, whose one parameter is the small `RetrainRequest`
(inputs, approval, config file, `--set` overrides): the form the Prefect UI shows
fits one screen, and a run loads its config when it starts, as `tunegate run --set` does.

The nightly deployment also carries the loop's trigger: a `tunegate.drift.detected` event of
its model (the monitor flow's) or a `tunegate.data.arrived` one (the inbox watcher's) starts a
run, its `reason` saying which, at most once per `monitor.cooldown_hours` per model (a Reactive
trigger fires on the first event, then waits out its window). `build_watchers` adds the two
flows that emit them: `monitor/hourly` (on `monitor.schedule`) and `watch-inbox/every-minute`
(the nightly request's inputs).

`deployments/serve.py` is the runnable script around `serve_deployments` (`python
deployments/serve.py`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import yaml
from prefect.deployments.runner import RunnerDeployment
from prefect.events import DeploymentEventTrigger
from prefect.schedules import Cron, Interval, Schedule
from prefect.types.entrypoint import EntrypointType
from pydantic import ValidationError

from flows.config import ConfigError, RetrainRequest, format_errors, load_config
from flows.inbox import DATA_ARRIVED
from flows.monitor import DRIFT_DETECTED, MonitorRequest
from platforms.notify import model_resource

PREFECT_YAML = Path(__file__).resolve().parents[1] / "deployments" / "prefect.yaml"
NIGHTLY = "nightly"
MANUAL = "manual"
ENTRYPOINT = "flows.retrain.retrain_request"
# What a triggered run records as its reason, from the event that started it.
REASON = (
    "{% if event.event == '"
    + DRIFT_DETECTED
    + "' %}drift: {{ event.payload.drifted | join(', ') }}"
    " (v{{ event.payload.version }}, {{ event.payload.since }} to {{ event.payload.until }})"
    "{% else %}new data: {{ event.payload.uris | join(', ') }}{% endif %}"
)


@dataclass(frozen=True)
class DeploymentSpec:
    """One entry of prefect.yaml's `deployments:`, the fields tunegate uses."""

    name: str
    description: str
    tags: list[str]
    schedules: list[dict[str, Any]]
    request: dict[str, Any]
    work_pool: str | None
    work_queue: str | None


def read_specs(path: Path = PREFECT_YAML) -> dict[str, DeploymentSpec]:
    """The deployments declared in prefect.yaml, by name; ConfigError when one is malformed."""
    try:
        data = yaml.safe_load(path.read_text()) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from None
    specs = {}
    for entry in data.get("deployments") or []:
        if entry.get("entrypoint") != ENTRYPOINT:
            raise ConfigError(
                f"{path}: deployment {entry.get('name')!r} must have entrypoint "
                f"{ENTRYPOINT} (the only flow tunegate deploys)"
            )
        pool = entry.get("work_pool") or {}
        specs[entry["name"]] = DeploymentSpec(
            name=entry["name"],
            description=" ".join(str(entry.get("description", "")).split()),
            tags=list(entry.get("tags") or []),
            schedules=list(entry.get("schedules") or []),
            request=(entry.get("parameters") or {}).get("request") or {},
            work_pool=pool.get("name"),
            work_queue=pool.get("work_queue_name"),
        )
    missing = {NIGHTLY, MANUAL} - set(specs)
    if missing:
        raise ConfigError(f"{path}: no deployment named {', '.join(sorted(missing))}")
    return specs


def build_deployments(
    *,
    config: Path | None = None,
    cron: str | None = None,
    timezone: str | None = None,
    inputs: list[str] | None = None,
    with_work_pool: bool = False,
    prefect_yaml: Path = PREFECT_YAML,
) -> list[RunnerDeployment]:
    """`retrain/nightly` and `retrain/manual` as RunnerDeployments.

    `config` becomes each deployment's `RetrainRequest.config_file` (absolute, so a worker
    finds it; the built-in defaults when None) and is checked now, with the request's
    overrides, so a config that cannot run is refused before anything is registered. `cron`,
    `timezone` and `inputs` override the nightly schedule and inbox. With `with_work_pool` the
    deployments target the work pool named in prefect.yaml (for `tunegate deployments apply`);
    without, they are for `serve_deployments`.

    A process worker starts each run in a temporary directory unless told otherwise, where the
    relative `store` (.tunegate) and inbox would be lost; pooled deployments therefore run in this
    process's working directory, as `serve` runs them in its own.
    """
    from flows.retrain import retrain_request

    specs = read_specs(prefect_yaml)
    config_file = {"config_file": str(config.resolve())} if config is not None else {}
    job_variables = {"working_dir": str(Path.cwd())} if with_work_pool else None
    deployments = []
    for spec in (specs[NIGHTLY], specs[MANUAL]):
        fields = {**spec.request, **config_file}
        if spec.name == NIGHTLY and inputs:
            fields["inputs"] = list(inputs)
        request = _request(prefect_yaml, spec.name, fields)
        schedules = [_schedule(s, cron, timezone) for s in spec.schedules]
        if spec.name == NIGHTLY and not schedules:
            raise ConfigError(f"{prefect_yaml}: retrain/nightly needs a cron schedule")
        triggers = _retrain_triggers(request) if spec.name == NIGHTLY else []
        deployments.append(
            retrain_request.to_deployment(
                spec.name,
                schedules=schedules,
                parameters={"request": request.model_dump(mode="json")},
                description=spec.description,
                tags=spec.tags,
                triggers=triggers,
                work_pool_name=spec.work_pool if with_work_pool else None,
                work_queue_name=spec.work_queue if with_work_pool else None,
                job_variables=job_variables,
                entrypoint_type=EntrypointType.MODULE_PATH,
            )
        )
    return deployments


def _retrain_triggers(request: RetrainRequest) -> list[DeploymentEventTrigger]:
    """A run of the request's model when its monitor finds drift or its inbox gets new files,
    at most one per `monitor.cooldown_hours`; the run's reason says which event started it."""
    config = request.config()
    model = config.registry.name_for(config.task.value)
    parameters = request.model_dump(mode="json")
    parameters["reason"] = {"__prefect_kind": "jinja", "template": REASON}
    return [
        DeploymentEventTrigger(
            name=f"retrain {model} on drift or new data",
            description="tunegate: the monitor's drift and the inbox watcher's new files start "
            f"a run, at most one per {config.monitor.cooldown_hours:g} h (monitor.cooldown_hours).",
            expect={DRIFT_DETECTED, DATA_ARRIVED},
            match=model_resource(model) | {"prefect.resource.name": model},
            posture="Reactive",
            threshold=1,
            within=timedelta(hours=config.monitor.cooldown_hours),
            parameters={"request": parameters},
        )
    ]


def build_watchers(
    *,
    config: Path | None = None,
    inputs: list[str] | None = None,
    with_work_pool: bool = False,
    prefect_yaml: Path = PREFECT_YAML,
) -> list[RunnerDeployment]:
    """`monitor/hourly` (the monitor flow on `monitor.schedule`, every served model) and
    `watch-inbox/every-minute` (new files of the nightly request's inputs), the flows whose
    events the nightly deployment's trigger reads."""
    from flows.inbox import watch_inbox
    from flows.monitor import monitor

    specs = read_specs(prefect_yaml)
    config_file = {"config_file": str(config.resolve())} if config is not None else {}
    nightly = {**specs[NIGHTLY].request, **config_file}
    if inputs:
        nightly["inputs"] = list(inputs)
    request = _request(prefect_yaml, NIGHTLY, nightly)
    watched = MonitorRequest(config_file=request.config_file, overrides=list(request.overrides))
    schedule = request.config().monitor.schedule
    pool = specs[NIGHTLY].work_pool if with_work_pool else None
    queue = specs[NIGHTLY].work_queue if with_work_pool else None
    job_variables = {"working_dir": str(Path.cwd())} if with_work_pool else None
    common: dict[str, Any] = {
        "work_pool_name": pool,
        "work_queue_name": queue,
        "job_variables": job_variables,
        "entrypoint_type": EntrypointType.MODULE_PATH,
        "tags": ["tunegate", "loop"],
    }
    return [
        monitor.to_deployment(
            "hourly",
            schedules=[Cron(schedule, timezone="UTC")],
            parameters={"request": watched.model_dump(mode="json")},
            description="Every served model's traffic against its own data; drift starts a "
            "retrain run (retrain/nightly's trigger).",
            **common,
        ),
        watch_inbox.to_deployment(
            "every-minute",
            schedules=[Interval(timedelta(minutes=1))],
            parameters={"request": request.model_dump(mode="json")},
            description="New files in the nightly run's inputs start a retrain run.",
            **common,
        ),
    ]


def _request(path: Path, name: str, fields: dict[str, Any]) -> RetrainRequest:
    """The deployment's request from prefect.yaml (and the command's options), its config
    loaded once so that a bad file or override is refused now, not at 02:00."""
    try:
        request = RetrainRequest.model_validate(fields)
    except ValidationError as exc:
        raise ConfigError(f"{path}: retrain/{name}: {format_errors(exc)}") from None
    if "approval" not in fields:  # not named in prefect.yaml: the form opens on the file's mode
        path = Path(request.config_file) if request.config_file else None
        mode = load_config(path, list(request.overrides)).approval.mode
        request = request.model_copy(update={"approval": mode})
    request.config()
    return request


def serve_deployments(
    config: Path | None = None,
    cron: str | None = None,
    timezone: str | None = None,
    inputs: list[str] | None = None,
    limit: int | None = None,
) -> None:
    """Register both deployments and run their flow runs in subprocesses of this one; blocks."""
    from prefect import serve

    serve(
        *build_deployments(config=config, cron=cron, timezone=timezone, inputs=inputs),
        *build_watchers(config=config, inputs=inputs),
        limit=limit,
    )


def _schedule(entry: dict[str, Any], cron: str | None, timezone: str | None) -> Schedule:
    if "cron" not in entry:
        raise ConfigError(f"only cron schedules are supported in prefect.yaml, got {entry}")
    return Cron(
        cron or entry["cron"],
        timezone=timezone or entry.get("timezone") or "UTC",
        active=entry.get("active", True),
    )
