"""The `retrain` flow's two Prefect deployments, `retrain/nightly` and `retrain/manual`.

Both are read from `deployments/prefect.yaml`, so the deployments `tunegate deployments serve`
serves and the work-pool deployments `tunegate deployments apply` registers are the same: the yaml
holds the names, schedule, tags and the nightly overrides (approval `auto-if-clean`, the inbox to
read); a pipeline config file is the base, and `cron`, `timezone` and `inputs` override the
nightly run. Parameters are stored as the full validated config, so the UI form opens filled in.

`deployments/serve.py` is the runnable script around `serve_deployments` (`python
deployments/serve.py`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from prefect.deployments.runner import RunnerDeployment
from prefect.schedules import Cron, Schedule
from prefect.types.entrypoint import EntrypointType

from flows.config import ConfigError, PipelineConfig, load_config, validate_config

PREFECT_YAML = Path(__file__).resolve().parents[1] / "deployments" / "prefect.yaml"
NIGHTLY = "nightly"
MANUAL = "manual"


@dataclass(frozen=True)
class DeploymentSpec:
    """One entry of prefect.yaml's `deployments:`, the fields tunegate uses."""

    name: str
    description: str
    tags: list[str]
    schedules: list[dict[str, Any]]
    config_overrides: dict[str, Any]
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
        if entry.get("entrypoint") != "flows.retrain.retrain":
            raise ConfigError(
                f"{path}: deployment {entry.get('name')!r} must have entrypoint "
                "flows.retrain.retrain (the only flow tunegate deploys)"
            )
        pool = entry.get("work_pool") or {}
        specs[entry["name"]] = DeploymentSpec(
            name=entry["name"],
            description=" ".join(str(entry.get("description", "")).split()),
            tags=list(entry.get("tags") or []),
            schedules=list(entry.get("schedules") or []),
            config_overrides=(entry.get("parameters") or {}).get("config") or {},
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

    `config` is the base pipeline config (defaults when None); `cron`, `timezone` and `inputs`
    override the nightly schedule and inbox. With `with_work_pool` the deployments target the
    work pool named in prefect.yaml (for `tunegate deployments apply`); without, they are for
    `serve_deployments`.

    A process worker starts each run in a temporary directory unless told otherwise, where the
    relative `store` (.tunegate) and inbox would be lost; pooled deployments therefore run in this
    process's working directory, as `serve` runs them in its own.
    """
    from flows.retrain import retrain

    specs = read_specs(prefect_yaml)
    base = load_config(config)
    nightly_inputs = {"ingest": {"inputs": list(inputs)}} if inputs else {}
    job_variables = {"working_dir": str(Path.cwd())} if with_work_pool else None
    deployments = []
    for spec in (specs[NIGHTLY], specs[MANUAL]):
        overrides = spec.config_overrides
        if spec.name == NIGHTLY:
            overrides = _merge(overrides, nightly_inputs)
        params = _parameters(base, overrides)
        schedules = [_schedule(s, cron, timezone) for s in spec.schedules]
        if spec.name == NIGHTLY and not schedules:
            raise ConfigError(f"{prefect_yaml}: retrain/nightly needs a cron schedule")
        deployments.append(
            retrain.to_deployment(
                spec.name,
                schedules=schedules,
                parameters=params,
                description=spec.description,
                tags=spec.tags,
                work_pool_name=spec.work_pool if with_work_pool else None,
                work_queue_name=spec.work_queue if with_work_pool else None,
                job_variables=job_variables,
                entrypoint_type=EntrypointType.MODULE_PATH,
            )
        )
    return deployments


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


def _parameters(base: PipelineConfig, overrides: dict[str, Any]) -> dict[str, Any]:
    merged = _merge(base.model_dump(mode="json", exclude_unset=True), overrides)
    return {"config": validate_config(merged).model_dump(mode="json")}


def _merge(base: dict[str, Any], overrides: dict[str, Any]) -> dict[str, Any]:
    """Nested dict merge; overrides win, sections merge key by key."""
    out = dict(base)
    for key, value in overrides.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out
