"""AzureMLConfig: the workspace, compute, environments, launcher and endpoint for the Azure ML platform.

Nothing secret lives here: authentication is `DefaultAzureCredential` (managed identity, Azure CLI
login, environment service principal), and the workspace comes from this config or a
`config.json` downloaded from the portal.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator

from platforms.azureml import cuda_lines, vm_sizes
from platforms.azureml.four_bit import check_4bit
from platforms.azureml.job_config import JobConfig

# Azure ML's curated Hugging Face image: usable by naming it (environment.asset); its pinned
# transformers/peft are older than the trainer's, so the default is the tunegate environment
# (platforms/azureml/environment.py) built from constraints.txt.
CURATED_ENV = "azureml://registries/azureml/environments/acft-hf-nlp-gpu/labels/latest"


# How a version is registered and deployed (`AzureMLConfig.model_type`)
ModelType = Literal["custom_model", "mlflow_model"]


class WorkspaceConfig(BaseModel):
    """Which workspace: ids here, or a portal `config.json` (ids here win)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    subscription_id: str | None = Field(None, description="Azure subscription id.")
    resource_group: str | None = Field(None, description="Resource group of the workspace.")
    workspace_name: str | None = Field(None, description="Azure ML workspace name.")
    config_file: str | None = Field(
        None, description="A workspace config.json (from the portal); used for missing ids."
    )

    def resolved(self) -> tuple[str, str, str]:
        """(subscription, resource group, workspace); ValueError naming what is missing."""
        found = {}
        if self.config_file:
            path = Path(self.config_file)
            try:
                found = json.loads(path.read_text())
            except (OSError, ValueError) as exc:
                raise ValueError(f"azureml.workspace.config_file {path}: {exc}") from None
        ids = (
            self.subscription_id or found.get("subscription_id"),
            self.resource_group or found.get("resource_group"),
            self.workspace_name or found.get("workspace_name"),
        )
        names = ("subscription_id", "resource_group", "workspace_name")
        missing = [f"azureml.workspace.{n}" for n, v in zip(names, ids, strict=True) if not v]
        if missing:
            raise ValueError(
                f"{', '.join(missing)} not set: set them in the config or point "
                "azureml.workspace.config_file at the workspace's config.json"
            )
        return ids  # type: ignore[return-value]


class EnvironmentConfig(BaseModel):
    """The container a job or deployment runs in: the tunegate environment (none set: built
    from constraints.txt's pins, see platforms/azureml/environment.py), or one of asset, image
    or build_context."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    asset: str | None = Field(
        None,
        description="A registered environment: azureml:name:version or an azureml://registries/ "
        "URI (e.g. the curated azureml://registries/azureml/environments/acft-hf-nlp-gpu/labels/"
        "latest). None of asset, image, build_context: the tunegate environment.",
    )
    image: str | None = Field(None, description="A Docker image to run (with conda_file optional).")
    conda_file: str | None = Field(None, description="conda.yaml layered on `image`.")
    build_context: str | None = Field(
        None,
        description="A folder with a Dockerfile that Azure ML builds (20+ min the first time).",
    )

    @model_validator(mode="after")
    def _one_source(self) -> EnvironmentConfig:
        sources = [s for s in (self.asset, self.image, self.build_context) if s]
        if len(sources) > 1:
            raise ValueError("set only one of asset, image or build_context")
        if self.conda_file and not self.image:
            raise ValueError("conda_file needs image (the base it is layered on)")
        return self


class ComputeConfig(BaseModel):
    """The training cluster; created when missing."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    name: str = Field("tunegate-gpu", description="Compute cluster name.")
    size: str = Field("Standard_NC24ads_A100_v4", description="VM size of each node.")
    min_nodes: int = Field(0, ge=0, description="Nodes kept warm (0: scale to zero).")
    max_nodes: int = Field(2, ge=1, description="Most nodes the cluster scales to.")
    tier: Literal["dedicated", "low_priority"] = Field(
        "dedicated", description="low_priority is cheaper and can be preempted."
    )
    idle_seconds: int = Field(900, ge=0, description="Idle time before a node scales down.")

    @field_validator("size")
    @classmethod
    def _current(cls, size: str) -> str:
        vm_sizes.check_current(size)  # a retired size: its replacement named
        return size


class LaunchConfig(BaseModel):
    """How the trainer starts on each node."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    instance_count: int = Field(1, ge=1, le=256, description="Nodes the job runs on.")
    gpus_per_node: int = Field(1, ge=1, le=16, description="GPUs (processes) per node.")
    launcher: Literal["accelerate", "torchrun"] = Field(
        "accelerate",
        description="accelerate: one process per node starts `accelerate launch` with the "
        "accelerate config (rank from $NODE_RANK); torchrun: Azure ML's PyTorch distribution "
        "starts gpus_per_node processes per node.",
    )
    accelerate_config: str = Field(
        "ddp",
        description="A launcher config from trainer/configs/ (ddp, fsdp, deepspeed_zero1..3, "
        "*_offload, single); used when launcher is accelerate.",
    )
    timeout_minutes: int = Field(24 * 60, ge=1, description="The job is cancelled after this.")


class EndpointConfig(BaseModel):
    """The managed online endpoint and the deployments a rollout creates."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    name: str | None = Field(
        None,
        description="Endpoint name (unique in the Azure region). Unset: one endpoint per "
        "registered model name, named for it (registry.model_name, default tunegate-<task>), so "
        "a rollout never touches another model's deployments.",
        pattern=r"^[A-Za-z][A-Za-z0-9-]{2,31}$",
    )
    instance_type: str = Field("Standard_DS3_v2", description="VM size of each deployment.")
    instance_count: int = Field(1, ge=1, description="Instances per deployment.")
    environment: EnvironmentConfig = Field(
        default_factory=EnvironmentConfig,
        description="The serving container (default: the tunegate-serving environment, with "
        "Azure ML's inference server).",
    )
    initial_delay_seconds: int = Field(
        600, ge=10, description="Probe delay: model loading takes minutes; short delays kill it."
    )
    request_timeout_ms: int = Field(
        90_000, ge=1000, le=180_000, description="Per-request limit (generation is slow)."
    )
    max_concurrent_requests: int = Field(4, ge=1, description="Requests per instance at once.")
    dtype: Literal["auto", "bfloat16", "float16", "float32"] = Field(
        "auto",
        description="The model's dtype on a GPU instance (auto: bfloat16 where the GPU has it "
        "natively, compute capability 8.0+, else float16); a CPU instance scores in float32.",
    )
    device_map: Literal["auto", "single"] = Field(
        "auto",
        description="On a GPU instance with several GPUs, auto spreads the model over them "
        "(transformers' device_map='auto': a 70B model's 141 GB of bf16 weights on 8 x 80 GB), "
        "single puts it whole on the first; the evaluation job places its models the same way "
        "on its node (trainer/spread.py).",
    )
    load_in_4bit: bool = Field(
        False,
        description="Load the weights in 4 bits (bitsandbytes NF4) on the GPU, a quarter of "
        "bf16's memory, for the deployment and the evaluation job; bitsandbytes is not in "
        "tunegate's environments: set azureml.endpoint.environment and azureml.environment to "
        "images that have it.",
    )
    workers: int = Field(
        1,
        ge=1,
        le=32,
        description="Scoring processes per instance (the inference server's WORKER_COUNT), each "
        "loading the model: more than 1 only when an instance holds that many copies.",
    )
    app_insights: bool = Field(
        True,
        description="Application Insights for the deployment (requests, latency, failures and "
        "the scoring script's logs in the workspace's App Insights).",
    )
    collect: bool = Field(
        True,
        description="Data collection: every request and answer, masked by the screen's "
        "recognizers in the scoring script before it is collected, into the deployment's "
        "model_inputs and model_outputs collections (the workspace's blob store).",
    )
    collect_sample_rate: float = Field(
        1.0,
        gt=0.0,
        le=1.0,
        description="Share of requests collected (data_collector.sampling_rate).",
    )

    @field_validator("instance_type")
    @classmethod
    def _current(cls, instance_type: str) -> str:
        vm_sizes.check_current(instance_type)  # a retired size: its replacement named
        return instance_type

    @property
    def gpu(self) -> bool:
        """Whether `instance_type` is an NVIDIA GPU size (the NC, ND and NV families)."""
        return is_gpu_instance(self.instance_type)

    def for_model(self, model_name: str) -> EndpointConfig:
        """This config with its `name` set: the one given, else `model_name`'s endpoint."""
        return self if self.name else self.model_copy(update={"name": endpoint_name(model_name)})


def endpoint_name(model_name: str) -> str:
    """An Azure ML endpoint name for a registered model name: 3-32 letters, digits and hyphens,
    starting with a letter (the model name itself when it fits; a long one is cut and keeps a
    hash of the whole, so two names never share an endpoint)."""
    name = re.sub(r"[^A-Za-z0-9-]", "-", model_name)
    if not name[:1].isalpha():
        name = f"m-{name}"
    if len(name) > 32 or name != model_name:  # changed or cut: a hash keeps names apart
        digest = hashlib.sha256(model_name.encode()).hexdigest()[:8]
        name = f"{name[:23].rstrip('-')}-{digest}"
    return name.ljust(3, "0")


def is_gpu_instance(instance_type: str) -> bool:
    """Whether an Azure VM size has NVIDIA GPUs: the NC and ND families, and NV but for NVv4
    (`Standard_NV*as_v4`, AMD, as is the NG family: neither torch's CUDA build nor
    onnxruntime-gpu drives those)."""
    size = instance_type.lower()
    return re.match(r"^standard_n[cd]", size) is not None or (
        size.startswith("standard_nv") and not size.endswith("as_v4")
    )


class AzureMLConfig(BaseModel):
    """Everything the Azure ML platform needs; unused while every backend is local."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    workspace: WorkspaceConfig = Field(default_factory=WorkspaceConfig, description="Workspace.")
    experiment: str = Field("tunegate", description="Experiment the training jobs are filed in.")
    compute: ComputeConfig = Field(default_factory=ComputeConfig, description="Training cluster.")
    environment: EnvironmentConfig = Field(
        default_factory=EnvironmentConfig,
        description="The training container (default: the tunegate environment).",
    )
    launch: LaunchConfig = Field(default_factory=LaunchConfig, description="Distribution.")
    job: JobConfig = Field(
        default_factory=JobConfig,
        description="The training job's variables, hub token and base model input.",
    )
    datastore: str | None = Field(
        None,
        description="Datastore over the store's container, for az:// split datasets (none: the "
        "container's name, - as _). Checked to be over that container.",
        pattern=r"^[A-Za-z0-9_]+$",
    )
    create_datastore: bool = Field(
        True,
        description="Create the datastore when missing (credential-less: jobs read with their "
        "identity); false: a missing one is an error.",
    )
    datastore_account: str | None = Field(
        None,
        description="Storage account of the store's container, for creating the datastore "
        "(none: the account of AZURE_STORAGE_CONNECTION_STRING's connection string; the export "
        "also takes azure.account_name).",
    )
    data_asset: str = Field("tunegate-split", description="Data asset name of split datasets.")
    model_name: str = Field("tunegate", description="Model asset name of trained versions.")
    model_type: ModelType = Field(
        "custom_model",
        description="How versions are registered and deployed. custom_model: the model folder, "
        "deployed with tunegate's scoring script and serving environment; mlflow_model: the "
        "folder as an MLflow pyfunc model (serving/mlflow_model.py), built and uploaded from "
        "the local files (an export: written by the evaluation job, registered from its "
        "mlflow_model output), deployed without scoring script or environment (Azure ML builds "
        "them from the model's MLmodel and requirements).",
    )
    endpoint: EndpointConfig = Field(default_factory=EndpointConfig, description="Serving.")

    @field_validator("launch")
    @classmethod
    def _launch_fits_compute(cls, launch: LaunchConfig, info: ValidationInfo) -> LaunchConfig:
        """No more nodes than the cluster scales to, no more GPUs per node than its size has."""
        compute = info.data.get("compute")
        if compute is not None:  # else compute itself was refused
            vm_sizes.check_launch(compute, launch)
        return launch

    @model_validator(mode="after")
    def _cuda_runs_on_the_gpus(self) -> AzureMLConfig:
        """tunegate's environments run on the GPUs they are given: the training cluster's and a
        GPU deployment's (an environment the config names itself is its own to match)."""
        if not _names_source(self.environment):
            cuda_lines.check_runs(
                self.compute.size,
                cuda_lines.TRAINING_ENV,
                "azureml.compute.size",
                "azureml.environment",
            )
        if self.endpoint.gpu and not _names_source(self.endpoint.environment):
            cuda_lines.check_runs(
                self.endpoint.instance_type,
                cuda_lines.GPU_SERVING_ENV,
                "azureml.endpoint.instance_type",
                "azureml.endpoint.environment",
            )
        return self

    @model_validator(mode="after")
    def _four_bits_where_they_load(self) -> AzureMLConfig:
        check_4bit(self)
        return self


def _names_source(environment: EnvironmentConfig) -> bool:
    return bool(environment.asset or environment.image or environment.build_context)
