"""register: a registry version with its lineage; the `challenger` alias (and `champion`).

Lineage answers "where did this model come from": the dataset hashes of every stage, the approval
record, the evaluation report, the flow run, the code version and the config hash.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from prefect import task
from prefect.artifacts import create_markdown_artifact
from prefect.cache_policies import NONE
from pydantic import BaseModel, ConfigDict, Field

from platforms.registry import LocalRegistry, ModelVersion
from platforms.store import Store

_ROOT = Path(__file__).resolve().parents[1]


class RegisterConfig(BaseModel):
    """Where and under which name models are registered."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    model_name: str | None = Field(
        None, description="Registered model name (default: tunegate-<task>).", pattern=r"^[\w.-]+$"
    )
    promote: bool = Field(
        True,
        description="Make a passing candidate the champion at registration. Set false when a "
        "rollout stage moves the champion alias with the traffic.",
    )

    def name_for(self, task_type: str) -> str:
        return self.model_name or f"tunegate-{task_type}"


def registry_for(store: Store) -> LocalRegistry:
    if not store.is_local:
        raise ValueError("the local registry needs a local store")
    return LocalRegistry(Path(store.uri))


def code_version() -> str:
    """The git commit of this checkout, or 'unknown' outside a repository."""
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=_ROOT,
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        )
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return out.stdout.strip()


def run_register(
    store: Store,
    name: str,
    model_dir: str,
    metrics: dict[str, float],
    lineage: dict[str, Any],
    promote: bool,
) -> ModelVersion:
    registry = registry_for(store)
    version = _already_registered(registry, name, lineage.get("training_job"))
    if version is None:
        version = registry.register(
            name, Path(model_dir), metrics, {**lineage, "code_version": code_version()}
        )
    registry.set_alias(name, "challenger", version.version)
    if promote:
        registry.set_alias(name, "champion", version.version)
    return version


@task(name="register", cache_policy=NONE)
def register_task(
    store: Store,
    name: str,
    model_dir: str,
    metrics: dict[str, float],
    lineage: dict[str, Any],
    promote: bool,
) -> ModelVersion:
    """Register the candidate with its lineage."""
    version = run_register(store, name, model_dir, metrics, lineage, promote)
    create_markdown_artifact(
        key="model-version",
        markdown=f"### {version.name} v{version.version}\n\n"
        + "\n".join(
            f"- **{k}**: `{v}`" for k, v in version.lineage.items() if not isinstance(v, dict)
        ),
    )
    return version


def _already_registered(
    registry: LocalRegistry, name: str, training_job: str | None
) -> ModelVersion | None:
    """The version a finished training job was registered as before (a re-run over the same
    data and config trains nothing new, so it registers nothing new)."""
    if training_job is None:
        return None
    for existing in registry.versions(name):
        if existing.lineage.get("training_job") == training_job:
            return existing
    return None


def champion_of(store: Store, name: str) -> ModelVersion | None:
    return registry_for(store).alias(name, "champion")
