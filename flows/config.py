"""PipelineConfig: every stage's config in one validated model.

Loaded from YAML, overridden from the command line (`--set screen.toxicity.threshold=0.9`) and
used as the `retrain` flow's parameter (`tunegate run`). Unknown keys and bad values are rejected
with the field's dotted name before any work starts.

`RetrainRequest` is the few fields a person fills in on a deployment's form in the Prefect UI
(inputs, approval mode, config file, `--set` overrides); `RetrainRequest.config()`
turns it into a PipelineConfig through the same `load_config` as `tunegate run --set`.
"""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from platforms.approvals import ApprovalMode
from platforms.azureml.config import AzureMLConfig
from platforms.backends import Backends, BackendSettings, PlatformKind
from platforms.blob import AzureStorageConfig, storage_options
from platforms.compute import DaskConfig
from platforms.hashing import sha256_text, stable_json
from platforms.notify import NotifyConfig
from platforms.store import Store
from platforms.tracking import TrackingConfig
from screening.config import ScreenConfig
from tasks.approval_config import ApprovalConfig
from tasks.evaluate import EvaluateConfig
from tasks.ingest import IngestConfig
from tasks.monitor import MonitorConfig
from tasks.records import ColumnMap, TaskType
from tasks.register import RegisterConfig
from tasks.rollout import RolloutConfig
from tasks.serving_choice import ServingConfig
from tasks.split import SplitConfig
from tasks.train import TrainConfig
from trainer.taskspec import task_spec


class ConfigError(ValueError):
    """A config that cannot run; the message names every offending field."""


class PipelineConfig(BaseModel):
    """Everything a `retrain` run needs, stage by stage."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    task: TaskType = Field(TaskType.extractive_qa, description="What the model learns.")
    store: str = Field(
        ".tunegate",
        description="Where datasets, reports and audit records live: a directory or "
        "az://container/prefix.",
    )
    columns: ColumnMap = Field(default_factory=ColumnMap, description="Input column names.")
    azure: AzureStorageConfig = Field(
        default_factory=AzureStorageConfig, description="Credentials for az:// paths."
    )
    azureml: AzureMLConfig = Field(
        default_factory=AzureMLConfig,
        description="Azure ML workspace, compute and endpoint (used by backends set to azureml).",
    )
    dask: DaskConfig = Field(default_factory=DaskConfig, description="Where data stages run.")
    ingest: IngestConfig = Field(default_factory=IngestConfig, description="What to read.")
    screen: ScreenConfig = Field(default_factory=ScreenConfig, description="PII/secret screen.")
    approval: ApprovalConfig = Field(default_factory=ApprovalConfig, description="Human gate.")
    split: SplitConfig = Field(default_factory=SplitConfig, description="Train/val/test split.")
    train: TrainConfig = Field(default_factory=TrainConfig, description="Fine-tuning.")
    evaluate: EvaluateConfig = Field(default_factory=EvaluateConfig, description="The gate.")
    registry: RegisterConfig = Field(default_factory=RegisterConfig, description="Registry.")
    rollout: RolloutConfig = Field(default_factory=RolloutConfig, description="Rollout.")
    serving: ServingConfig = Field(
        default_factory=ServingConfig, description="The runtime the endpoint serves with."
    )
    notify: NotifyConfig = Field(
        default_factory=NotifyConfig, description="Webhook for runs that need attention."
    )
    tracking: TrackingConfig = Field(
        default_factory=TrackingConfig,
        description="Where every run is tracked in MLflow (parameters, curves, metrics, reports).",
    )
    monitor: MonitorConfig = Field(
        default_factory=MonitorConfig,
        description="Watching what was deployed: the monitor's window, signals and thresholds, "
        "and the cool-down of the retrain runs drift and new data start.",
    )
    until: Literal["split", "register", "rollout"] = Field(
        "rollout",
        description="Last stage to run: split stops after the data half, register before the "
        "endpoint.",
    )

    @field_validator("store")
    @classmethod
    def _store_is_a_folder(cls, store: str) -> str:
        if "://" not in store and os.path.exists(store) and not os.path.isdir(store):
            raise ValueError(f"{store!r} is a file; give a directory (or az://container/prefix)")
        return store

    @model_validator(mode="before")
    @classmethod
    def _input_profiles(cls, data: Any) -> Any:
        """An `ingest.inputs` entry given as a mapping with a `profile`: that input's entry of
        `screen.profiles` (the rest of the mapping is its datasheet)."""
        ingest = data.get("ingest") if isinstance(data, dict) else None
        inputs = ingest.get("inputs") if isinstance(ingest, dict) else None
        if not isinstance(inputs, list) or not any(
            isinstance(e, dict) and "profile" in e for e in inputs
        ):
            return data
        screen = dict(data.get("screen") or {})
        profiles = dict(screen.get("profiles") or {})
        entries = []
        for entry in inputs:
            if isinstance(entry, dict) and "profile" in entry:
                entry = dict(entry)
                profile = entry.pop("profile")
                path = entry.get("path")
                if isinstance(path, str) and profiles.get(path, profile) != profile:
                    raise ValueError(
                        f"screen.profiles gives {path!r} the profile {profiles[path]!r} and its "
                        f"ingest.inputs entry {profile!r}: say it once"
                    )
                if isinstance(path, str):
                    profiles[path] = profile
            entries.append(entry)
        return {
            **data,
            "ingest": {**ingest, "inputs": entries},
            "screen": {**screen, "profiles": profiles},
        }

    @model_validator(mode="after")
    def _group_key_fits_task(self) -> PipelineConfig:
        field, allowed = self.split.group_key, task_spec(self.task).group_keys
        if field is not None and field not in allowed:
            raise ValueError(
                f"split.group_key {field!r} is not a text field of {self.task.value} records; "
                f"use one of {sorted(allowed)}"
            )
        return self

    @model_validator(mode="after")
    def _platforms_fit_together(self) -> PipelineConfig:
        self.backend_settings().check()
        return self

    @property
    def served_with(self) -> ServingConfig:
        """`serving`, with `gpu` set when the rollout deploys to GPU instances."""
        on_gpu = self.backend_settings().endpoint_on_gpu
        return self.serving.model_copy(update={"gpu": self.serving.gpu or on_gpu})

    @model_validator(mode="after")
    def _int8_serves_on_cpus(self) -> PipelineConfig:
        if self.serving.runtime == "onnx-int8" and self.served_with.gpu:
            where = (
                "serving.gpu instances"
                if self.serving.gpu
                else f"azureml.endpoint.instance_type {self.azureml.endpoint.instance_type!r}, "
                "a GPU size"
            )
            raise ValueError(
                f"serving.runtime 'onnx-int8' on {where}: its int8 arithmetic is ONNX Runtime's "
                "CPU kernel; use onnx, torch or auto, or a CPU instance type"
            )
        return self

    @property
    def promotes_at_registration(self) -> bool:
        """Whether register moves `champion`: not when a rollout follows (it moves the alias
        with the traffic, once the new version serves)."""
        return self.registry.promote and self.until != "rollout"

    @property
    def content_hash(self) -> str:
        """sha256 of the validated config: a registered version's lineage names it."""
        return sha256_text(stable_json(self.model_dump(mode="json")))

    def open_store(self) -> Store:
        """The store, its manifests signed and checked with the approval key."""
        return Store(
            self.store, storage_options(self.store, self.azure), self.approval.signing_key()
        )

    def backend_settings(self) -> BackendSettings:
        """Which platform plays each part, from the stage configs' `backend` fields (the store's
        credentials are looked up by `backends()`, when a run needs them)."""
        local_store = "://" not in self.store or self.store.startswith("file://")
        return BackendSettings(
            store=self.store,
            dask=self.dask,
            azureml=self.azureml,
            training=self.train.backend,
            registry=self.registry.backend,
            endpoint=self.rollout.backend,
            evaluation=self.evaluate.backend,
            endpoint_port=self.rollout.port,
            endpoint_workers=self.rollout.workers,
            tracking_uri=self.tracking.uri,
            # a run that trains nothing is tracked in the store, never in a workspace
            tracking=PlatformKind.local if self.until == "split" and local_store else None,
        )

    def backends(self) -> Backends:
        """The run's platform objects (store, Dask, training, registry, endpoint), each built on
        first use by `platforms/backends.py`: the one place that turns this config into them."""
        credentials = storage_options(self.store, self.azure)
        key = self.approval.signing_key()
        return Backends(
            replace(self.backend_settings(), storage_options=credentials, signing_key=key)
        )


def load_config(path: Path | None = None, overrides: list[str] | None = None) -> PipelineConfig:
    """Read YAML (optional), apply `key.path=value` overrides, validate; ConfigError on problems."""
    data: dict[str, Any] = {}
    if path is not None:
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        except UnicodeDecodeError:
            raise ConfigError(
                f"cannot read config {path}: it is not UTF-8 text (a binary file, or another "
                "encoding): save it as UTF-8 YAML"
            ) from None
        except (OSError, yaml.YAMLError) as exc:
            raise ConfigError(f"cannot read config {path}: {exc}") from None
        if not isinstance(data, dict):
            raise ConfigError(f"{path}: the top level must be a mapping of sections")
    for override in overrides or []:
        _apply_override(data, override)
    return validate_config(data)


def validate_config(data: dict[str, Any]) -> PipelineConfig:
    try:
        return PipelineConfig.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(format_errors(exc)) from None


def format_errors(exc: ValidationError) -> str:
    """One line per problem (one problem: one line), each starting with the dotted field name."""
    lines = []
    for error in exc.errors():
        where = ".".join(str(p) for p in error["loc"]) or "config"
        message = error["msg"].removeprefix("Value error, ")
        if error["type"] == "extra_forbidden":
            message = "unknown field (check the spelling; see configs/local.yaml)"
        # A check of a section that names the field itself (azureml.launch.gpus_per_node ...)
        lines.append(message if message.startswith(f"{where}.") else f"{where}: {message}")
    if len(lines) == 1:
        return f"invalid config: {lines[0]}"
    return "invalid config:\n  " + "\n  ".join(lines)


def _apply_override(data: dict[str, Any], override: str) -> None:
    if "=" not in override:
        raise ConfigError(f"--set {override!r}: expected key.path=value")
    dotted, raw = override.split("=", 1)
    keys = [k for k in dotted.strip().split(".") if k]
    if not keys:
        raise ConfigError(f"--set {override!r}: empty key")
    node = data
    for k in keys[:-1]:
        child = node.setdefault(k, {})
        if not isinstance(child, dict):
            raise ConfigError(f"--set {override!r}: {k} is not a section")
        node = child
    node[keys[-1]] = yaml.safe_load(raw) if raw.strip() else None


class RetrainRequest(BaseModel):
    """A retrain run asked for from a deployment's form: what to read, who approves, which
    config. Everything else (the model's name: `registry.model_name=...`) comes from the config
    file and the overrides. Five fields, one line of description each at 1280 px, and no
    description of the whole in the schema (the UI would spend three lines on it): the form
    fits a screen under Prefect's own run name."""

    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        json_schema_extra=lambda schema: schema.pop("description", None),
    )
    inputs: list[str] = Field(
        default_factory=list,
        title="Inputs",
        description="Files, folders or globs, local or az:// (inbox/*.jsonl); empty: the config "
        "file's. Nothing new in them ends the run Completed.",
    )
    approval: ApprovalMode = Field(
        ApprovalMode.manual,
        title="Approval",
        description="manual: a person approves (UI or tunegate approve); auto: by policy; "
        "auto-if-clean: by policy unless the screen flags something.",
    )
    overrides: list[str] = Field(
        default_factory=list,
        title="Overrides",
        description="Config fields to change, one key=value each, as tunegate run --set takes "
        "them (train.epochs=2).",
    )
    config_file: str = Field(
        "",
        title="Config file",
        description="Pipeline config YAML on the machine that runs the flow (configs/local.yaml); "
        "empty: the built-in defaults.",
    )
    reason: str = Field(
        "",
        title="Reason",
        description="Why the run starts; filled in by the drift and new-data triggers. Empty: "
        "the schedule or a person.",
    )

    def config(self) -> PipelineConfig:
        """The config file with the overrides, then the form's own fields, applied as
        `tunegate run --set` applies them; ConfigError (naming the field) when it cannot run."""
        given = field_overrides(
            {
                "ingest.inputs": self.inputs or None,
                "approval.mode": self.approval.value,
            }
        )
        path = Path(self.config_file) if self.config_file.strip() else None
        return load_config(path, [*self.overrides, *given])


def field_overrides(fields: dict[str, Any]) -> list[str]:
    """`key.path=value` overrides (values as JSON) for the fields given (None: not given): how
    a command's options and a deployment form's fields join the `--set` ones."""
    return [f"{k}={json.dumps(v)}" for k, v in fields.items() if v is not None]
