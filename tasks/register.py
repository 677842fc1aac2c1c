"""register: a registry version with its lineage; the `challenger` alias (and `champion`).

Lineage answers "where did this model come from": the dataset hashes of every stage, the approval
record, the evaluation report, the flow run, the code version and the config hash.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any, Literal

from prefect import task
from prefect.artifacts import create_markdown_artifact
from prefect.cache_policies import NONE
from pydantic import BaseModel, ConfigDict, Field

from platforms.azureml.config import AzureMLConfig, local_cache
from platforms.registry import LocalRegistry, ModelRegistry, ModelVersion
from platforms.store import Store

_ROOT = Path(__file__).resolve().parents[1]


class RegisterConfig(BaseModel):
    """Where and under which name models are registered."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    model_name: str | None = Field(
        None, description="Registered model name (default: tunegate-<task>).", pattern=r"^[\w.-]+$"
    )
    backend: Literal["local", "azureml"] = Field(
        "local",
        description="local: a folder and JSON index in the store; azureml: model assets in the "
        "azureml section's workspace (aliases as tags).",
    )
    promote: bool = Field(
        True,
        description="Make a passing candidate the champion at registration. Set false when a "
        "rollout stage moves the champion alias with the traffic.",
    )

    def name_for(self, task_type: str) -> str:
        return self.model_name or f"tunegate-{task_type}"


def registry_for(
    store: Store, config: RegisterConfig | None = None, azureml: AzureMLConfig | None = None
) -> ModelRegistry:
    """The configured registry (local unless `registry.backend` is azureml)."""
    if config is not None and config.backend == "azureml":
        from platforms.azureml import client
        from platforms.azureml.registry import AzureMLRegistry

        settings = azureml or AzureMLConfig()
        return AzureMLRegistry(client.connect(settings.workspace), local_cache() / "models")
    if not store.is_local:
        raise ValueError("registry.backend=local needs a local store; use registry.backend=azureml")
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
    config: RegisterConfig | None = None,
    azureml: AzureMLConfig | None = None,
) -> ModelVersion:
    registry = registry_for(store, config, azureml)
    # A re-run over the same data and config trains nothing new: the registry returns the
    # version its training job was registered as.
    version = registry.register(
        name,
        _source(registry, model_dir, lineage),
        metrics,
        {**lineage, "code_version": code_version()},
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
    config: RegisterConfig | None = None,
    azureml: AzureMLConfig | None = None,
) -> ModelVersion:
    """Register the candidate with its lineage."""
    version = run_register(store, name, model_dir, metrics, lineage, promote, config, azureml)
    create_markdown_artifact(
        key="model-version",
        markdown=f"### {version.name} v{version.version}\n\n"
        + "\n".join(
            f"- **{k}**: `{v}`" for k, v in version.lineage.items() if not isinstance(v, dict)
        ),
    )
    return version


def _source(registry: ModelRegistry, model_dir: str, lineage: dict[str, Any]) -> Path | str:
    """What to register: an Azure ML job's own output when the job ran there (no re-upload)."""
    job = lineage.get("training_job")
    on_azure = not isinstance(registry, LocalRegistry)
    if on_azure and job and lineage.get("training_backend") == "azureml":
        from platforms.azureml.entities import job_output

        return job_output(job)
    return Path(model_dir)


def champion_of(
    store: Store,
    name: str,
    config: RegisterConfig | None = None,
    azureml: AzureMLConfig | None = None,
) -> ModelVersion | None:
    """The champion with its files on this machine (downloaded from Azure ML when needed)."""
    registry = registry_for(store, config, azureml)
    champion = registry.alias(name, "champion")
    download = getattr(registry, "download", None)
    if champion is None or download is None:
        return champion
    return champion.model_copy(update={"path": str(download(champion))})
