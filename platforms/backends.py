"""One place that turns settings into the platform objects a run uses.

`Backends` holds the store, the Dask client, the training backend, the model registry and the
endpoint backend of one run. It is built once (by `PipelineConfig.backends()` from the flow, or a
CLI command) and handed to the tasks, which never build a platform object themselves. Each
object is made on first use: a run that stops after the split connects to no workspace and a
stage whose output already exists starts no Dask cluster. One Azure ML `MLClient` serves the
registry, the training backend and the endpoint.

A platform is one row of `PLATFORMS` (a `PlatformKind` and its factories): adding one (SageMaker,
Kubernetes) is a new `Platform` there and its backends in a package of `platforms/`; no stage
module names a platform. Local backends keep their state in a local store (`{store}/jobs`,
`{store}/models`, `{store}/endpoints/{model name}`); Azure ML backends with an `az://` store keep
theirs under `user_cache()`. Every model name has its own endpoint (a local one with its own
folder and port; an Azure ML managed online endpoint named for it unless
`azureml.endpoint.name` says otherwise), so a rollout only ever touches its own model's
deployments.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from platforms.azureml.config import AzureMLConfig
from platforms.compute import DaskConfig, lazy_client
from platforms.store import Store
from trainer.cache import user_cache

if TYPE_CHECKING:
    from distributed import Client

    from platforms.endpoint import CollectedReader, EndpointBackend
    from platforms.model_version import ModelRegistry, ModelVersion
    from platforms.training import TrainingBackend


class PlatformKind(StrEnum):
    """Where a part of a run lives: this machine, or Azure ML. The stage configs' `backend`
    fields (train, evaluate, registry, rollout) take these values; `PLATFORMS` builds each."""

    local = "local"
    azureml = "azureml"


@dataclass(frozen=True)
class BackendSettings:
    """Which backend plays each part; the config field that chose it is named in errors."""

    store: str = ".tunegate"
    storage_options: dict[str, Any] = field(default_factory=dict)
    signing_key: bytes | None = None  # the approval key: signs manifests and version records
    dask: DaskConfig = field(default_factory=DaskConfig)
    azureml: AzureMLConfig = field(default_factory=AzureMLConfig)
    training: PlatformKind = PlatformKind.local  # train.backend
    registry: PlatformKind = PlatformKind.local  # registry.backend
    endpoint: PlatformKind = PlatformKind.local  # rollout.backend
    evaluation: PlatformKind | None = None  # evaluate.backend (None: the training platform's)
    endpoint_port: int = 0  # rollout.port: the local endpoint's port (0: a free one)
    endpoint_workers: int = 1  # rollout.workers: scoring processes per local deployment
    tracking_uri: str | None = None  # tracking.uri (None: the `tracking` platform's own)
    # whose tracking a run without tracking.uri uses (None: the training platform's; a run that
    # trains nothing, until: split, is tracked here and connects to no workspace)
    tracking: PlatformKind | None = None

    def __post_init__(self) -> None:
        for part in ("training", "registry", "endpoint", "evaluation", "tracking"):
            value = getattr(self, part)
            if value is not None:  # a plain string from a caller becomes its kind
                object.__setattr__(self, part, PlatformKind(value))

    def check(self) -> None:
        """Raise a ValueError naming the config fields of a combination no platform runs."""
        if self.evaluation is not None:
            PLATFORMS[self.evaluation].check_evaluation(self)
        if self.tracking_uri is None:
            PLATFORMS[self.tracking or self.training].check_tracking(self)

    @property
    def uses_azureml(self) -> bool:
        """Whether a part of the run (training, evaluation, registry, endpoint, tracking) is on
        Azure ML: whether the config's `azureml` section is the run's at all."""
        parts = (self.training, self.registry, self.endpoint, self.evaluation, self.tracking)
        return PlatformKind.azureml in parts or (self.tracking_uri or "").startswith("azureml:")

    def training_memory(self, trainer_args: dict[str, Any]) -> str | None:
        """The training platform's check that a job with `trainer_args` fits in its GPUs'
        memory: the figures (or why there are none), None where nothing is checked; a
        ValueError naming the field, with what would fit, when it cannot fit."""
        return PLATFORMS[self.training].training_memory(self, trainer_args)

    @property
    def endpoint_on_gpu(self) -> bool:
        """Whether the endpoint's instances have GPUs (serving.gpu follows it)."""
        return PLATFORMS[self.endpoint].serves_on_gpu(self)


class Platform(Protocol):
    """One platform's factories: what `Backends` builds for the parts that live on it."""

    def registry(self, backends: Backends) -> ModelRegistry: ...
    def training(self, backends: Backends) -> TrainingBackend: ...
    def evaluation(self, backends: Backends) -> TrainingBackend: ...
    def open_endpoint(
        self, backends: Backends, model_name: str, collected: CollectedReader | None = None
    ) -> EndpointBackend: ...
    def endpoint_state(self, backends: Backends, model_name: str) -> Path: ...
    def serving(self, backends: Backends, model_name: str) -> dict[str, Any] | None: ...
    def stays_up(self, backends: Backends, model_name: str) -> str: ...
    def model_source(self, backends: Backends, model_dir: str, job: str | None) -> Path | str: ...
    def tracking_uri(self, backends: Backends) -> str: ...
    def check_evaluation(self, settings: BackendSettings) -> None: ...
    def check_tracking(self, settings: BackendSettings) -> None: ...
    def check_base_model(self, model: str | None) -> None: ...
    def serves_on_gpu(self, settings: BackendSettings) -> bool: ...
    def training_memory(
        self, settings: BackendSettings, trainer_args: dict[str, Any]
    ) -> str | None: ...


class LocalPlatform:
    """This machine: state in a local store (`{store}/jobs`, `{store}/models`, and
    `{store}/endpoints/{model name}`, one local endpoint per model)."""

    def registry(self, backends: Backends) -> ModelRegistry:
        from platforms.registry import MlflowRegistry

        state = backends.local_state("registry.backend", "the registry's database")
        key = backends.settings.signing_key
        if backends.settings.tracking_uri:  # tracking.uri: the registry of that MLflow
            return MlflowRegistry(
                backends.settings.tracking_uri,
                key,
                state / "mlflow" / "cache",
                backends.tracking_artifact_root,
            )
        return MlflowRegistry.local(state, key)  # the store's own database, as runs are tracked

    def training(self, backends: Backends) -> TrainingBackend:
        from platforms.training import LocalTrainingBackend

        root = backends.local_state("train.backend", "the model") / "jobs"
        return LocalTrainingBackend(root, backends.store.storage_options)

    def evaluation(self, backends: Backends) -> TrainingBackend:
        """Predictions made in this process (beside training on another platform: nothing is
        trained here, so a remote store is fine)."""
        from platforms.training import LocalTrainingBackend

        return LocalTrainingBackend(
            backends.state_dir("jobs", "jobs"),
            backends.store.storage_options,
            model_of=backends.training.fetch_model,  # its weights, fetched from where it ran
        )

    def open_endpoint(
        self, backends: Backends, model_name: str, collected: CollectedReader | None = None
    ) -> EndpointBackend:
        """`collected` is not read: the local endpoint collects into its own folder."""
        from platforms.endpoint import LocalEndpointBackend, ensure_local_endpoint
        from serving.collect import COLLECTED

        settings = backends.settings
        state = backends.endpoint_state(model_name)
        url, key_file = ensure_local_endpoint(state, settings.endpoint_port)
        return LocalEndpointBackend(url, key_file, settings.endpoint_workers, state / COLLECTED)

    def endpoint_state(self, backends: Backends, model_name: str) -> Path:
        from platforms.endpoint import local_endpoint_dir

        store = backends.local_state("rollout.backend", "the endpoint's state")
        return local_endpoint_dir(store, model_name)

    def stays_up(self, backends: Backends, model_name: str) -> str:
        """The local endpoint outlives the run: the command that stops it."""
        import shlex

        store = backends.local_state("rollout.backend", "the endpoint's state")
        return (
            "the endpoint stays up after this run; `tunegate endpoint stop --model "
            f"{shlex.quote(model_name)} --store {shlex.quote(str(store))}` stops it and its "
            "traffic collector"
        )

    def serving(self, backends: Backends, model_name: str) -> dict[str, Any] | None:
        """What the model's local endpoint serves, read from its folder (none started)."""
        from platforms.endpoint import local_endpoints, served_versions

        if not backends.store.is_local:
            return None
        state = local_endpoints(Path(backends.store.uri)).get(model_name)
        return None if state is None else served_versions(state)

    def model_source(self, backends: Backends, model_dir: str, job: str | None) -> Path | str:
        """The model folder here; a model trained on another platform has its weights fetched
        first (a local registry keeps a copy of them)."""
        return _model_here(backends, model_dir, job)

    def tracking_uri(self, backends: Backends) -> str:
        """The local store's MLflow database (created from a migrated template when missing)."""
        from platforms.tracking import ensure_local_database

        return ensure_local_database(Path(backends.store.uri))

    def check_evaluation(self, settings: BackendSettings) -> None:
        return None  # any platform's model can be evaluated here

    def check_tracking(self, settings: BackendSettings) -> None:
        """A run trained here is tracked in the store's database: a remote store has none."""
        if "://" in settings.store:
            raise ValueError(
                f"tracking.uri is unset and the store {settings.store} is remote: runs trained "
                "here are tracked in a local store's database; set tracking.uri to an MLflow "
                "server (or database URL) this machine reaches"
            )

    def check_base_model(self, model: str | None) -> None:
        """An Azure ML model asset is mounted into Azure ML jobs; nothing here can load it."""
        if (model or "").startswith("azureml:"):
            raise ValueError(
                f"train.model {model} is an Azure ML model asset, which only an Azure ML "
                "job mounts: set train.backend: azureml, or use a Hugging Face id or a local path"
            )

    def serves_on_gpu(self, settings: BackendSettings) -> bool:
        return False  # the local endpoint scores on this machine's CPU

    def training_memory(
        self, settings: BackendSettings, trainer_args: dict[str, Any]
    ) -> str | None:
        return None  # this machine's GPUs (if any) are not in the table of sizes


class AzureMLPlatform:
    """Azure ML: one `MLClient` of `azureml.workspace` for every part; local state (downloaded
    models, job records) under `user_cache()` for an `az://` store."""

    def registry(self, backends: Backends) -> ModelRegistry:
        from platforms.azureml.registry import AzureMLRegistry

        return AzureMLRegistry(
            backends.workspace, user_cache() / "models", backends.settings.azureml.model_type
        )

    def training(self, backends: Backends) -> TrainingBackend:
        from platforms.azureml.training import AzureMLTrainingBackend

        return AzureMLTrainingBackend(
            backends.workspace,
            backends.settings.azureml,
            backends.state_dir("jobs", "jobs"),
            storage_account=backends.store.storage_options.get("account_name"),
        )

    def evaluation(self, backends: Backends) -> TrainingBackend:
        return backends.training  # an evaluation job on the training job's cluster

    def open_endpoint(
        self, backends: Backends, model_name: str, collected: CollectedReader | None = None
    ) -> EndpointBackend:
        from platforms.azureml.endpoint import AzureMLEndpointBackend

        endpoint = backends.settings.azureml.endpoint.for_model(model_name)
        state = backends.endpoint_state(model_name)
        return AzureMLEndpointBackend(
            backends.workspace,
            endpoint,
            state,
            model_type=backends.settings.azureml.model_type,
            collected=collected,
        )

    def endpoint_state(self, backends: Backends, model_name: str) -> Path:
        name = backends.settings.azureml.endpoint.for_model(model_name).name
        return backends.state_dir("endpoint-azureml", "endpoint") / str(name)

    def serving(self, backends: Backends, model_name: str) -> dict[str, Any] | None:
        return None  # asking Azure ML's control plane is `tunegate endpoint status`'s to do

    def stays_up(self, backends: Backends, model_name: str) -> str:
        """A managed online endpoint outlives the run, billed: the command that deletes it."""
        name = backends.settings.azureml.endpoint.for_model(model_name).name
        return (
            f"the Azure ML endpoint {name} stays up (and is billed) after this run; "
            f"`az ml online-endpoint delete --name {name}` deletes it"
        )

    def model_source(self, backends: Backends, model_dir: str, job: str | None) -> Path | str:
        """The training job's own output when it ran on Azure ML too (nothing is uploaded);
        the local folder when versions are MLflow models (built from it, then uploaded)."""
        mlflow = backends.settings.azureml.model_type == "mlflow_model"
        if backends.settings.training is PlatformKind.azureml and job and not mlflow:
            from platforms.azureml.entities import job_output

            return job_output(job)
        return _model_here(backends, model_dir, job)  # an MLflow model is built from its files

    def tracking_uri(self, backends: Backends) -> str:
        """The workspace's own MLflow tracking (`azureml://...`, where its jobs log too), from
        the workspace MLClient reads; MLflow opens it through the azureml-mlflow plugin."""
        workspace = backends.workspace
        return workspace.workspaces.get(workspace.workspace_name).mlflow_tracking_uri

    def check_tracking(self, settings: BackendSettings) -> None:
        return None  # the workspace's tracking takes every run

    def check_evaluation(self, settings: BackendSettings) -> None:
        if settings.training is not PlatformKind.azureml:
            raise ValueError(
                "evaluate.backend 'azureml' runs on the workspace and cluster of "
                "train.backend 'azureml': set train.backend to azureml or evaluate.backend to local"
            )

    def check_base_model(self, model: str | None) -> None:
        return None  # a Hugging Face id, a model catalog asset or a folder uploaded with the job

    def serves_on_gpu(self, settings: BackendSettings) -> bool:
        return settings.azureml.endpoint.gpu

    def training_memory(
        self, settings: BackendSettings, trainer_args: dict[str, Any]
    ) -> str | None:
        from platforms.azureml.memory_check import check_memory

        return check_memory(trainer_args, settings.azureml).message


def _model_here(backends: Backends, model_dir: str, job: str | None) -> Path:
    """The trained model folder on this machine, weights included: a job of another platform
    (whose weights stay where it ran until something here must load or copy them) fetches
    them now, once."""
    if backends.settings.training is PlatformKind.local or not job:
        return Path(model_dir)
    from platforms.training import TrainingJob

    trained = TrainingJob(
        name=job,
        backend=backends.settings.training.value,
        status="completed",  # registered: it passed the gate, so training completed
        output_dir=model_dir,
        log_path=job,
    )
    return backends.training.fetch_model(trained)


PLATFORMS: dict[PlatformKind, Platform] = {
    PlatformKind.local: LocalPlatform(),
    PlatformKind.azureml: AzureMLPlatform(),
}


def check_base_model(kind: PlatformKind, model: str | None) -> None:
    """Raise a ValueError naming train.model when the `kind` platform cannot train from it."""
    PLATFORMS[kind].check_base_model(model)


class Backends:
    """The platform objects of one run, each built on first use and then reused."""

    def __init__(self, settings: BackendSettings) -> None:
        self.settings = settings
        self.store = Store(settings.store, settings.storage_options, settings.signing_key)

    @cached_property
    def compute(self) -> Client:
        """The shared Dask client, started only when a stage really computes."""
        return lazy_client(self.settings.dask)

    @cached_property
    def workspace(self) -> Any:
        """The Azure ML `MLClient` of `azureml.workspace`, shared by every Azure ML backend."""
        from platforms.azureml import client

        return client.connect(self.settings.azureml.workspace)

    @cached_property
    def tracking_uri(self) -> str:
        """Where runs are tracked (and the local registry's models registered): `tracking.uri`,
        else the training platform's (the local store's SQLite database, the Azure ML
        workspace's tracking)."""
        settings = self.settings
        if settings.tracking_uri:
            return settings.tracking_uri
        return PLATFORMS[settings.tracking or settings.training].tracking_uri(self)

    @property
    def tracking_artifact_root(self) -> Path | None:
        """Where a local store's runs keep their files (`{store}/mlflow/artifacts`); None: the
        tracking server's own artifact store."""
        from platforms.tracking import local_artifact_root, local_tracking_uri

        store = Path(self.store.uri)
        if self.store.is_local and self.tracking_uri == local_tracking_uri(store):
            return local_artifact_root(store)
        return None

    @cached_property
    def registry(self) -> ModelRegistry:
        """Where versions and aliases live: MLflow's Model Registry on the store's tracking
        database, or Azure ML model assets."""
        return PLATFORMS[self.settings.registry].registry(self)

    @cached_property
    def training(self) -> TrainingBackend:
        """Where the trainer runs: a subprocess here, or a command job on the Azure ML cluster;
        jobs keep their local state (and downloaded models) under `{store}/jobs`."""
        return PLATFORMS[self.settings.training].training(self)

    @cached_property
    def evaluation(self) -> TrainingBackend:
        """Where base, candidate and champion predict the test split (`evaluate.backend`,
        default the training platform): in this process, or an Azure ML evaluation job."""
        kind = self.settings.evaluation or self.settings.training
        if kind is self.settings.training:
            return self.training
        return PLATFORMS[kind].evaluation(self)

    def open_endpoint(
        self, model_name: str, collected: CollectedReader | None = None
    ) -> EndpointBackend:
        """The endpoint of the model `model_name`, the caller's to `close()`: its Azure ML managed
        online endpoint, or its local one under `{store}/endpoints/{model_name}`, started when it
        is not running. `collected`: where an Azure ML endpoint's traffic is read back (its data
        collector's output), for the live window of a canary step."""
        return PLATFORMS[self.settings.endpoint].open_endpoint(self, model_name, collected)

    def endpoint_lock(self, model_name: str) -> AbstractContextManager[None]:
        """Held by a rollout: one rollout at a time per endpoint (between the processes of this
        machine; Azure ML's own control plane serialises updates across machines)."""
        from platforms.locks import file_lock

        state = self.endpoint_state(model_name)
        return file_lock(state / "rollout.lock", "another run's rollout")

    def endpoint_state(self, model_name: str) -> Path:
        """Where the endpoint of the model `model_name` keeps its state on this machine."""
        return PLATFORMS[self.settings.endpoint].endpoint_state(self, model_name)

    def serving(self, model_name: str) -> dict[str, Any] | None:
        """What the model's endpoint serves (url, port, deployments with version and traffic),
        read without starting anything; None where only the platform's own API can tell."""
        return PLATFORMS[self.settings.endpoint].serving(self, model_name)

    def endpoint_stays_up(self, model_name: str) -> str:
        """That the model's endpoint outlives the run, and the command that stops it."""
        return PLATFORMS[self.settings.endpoint].stays_up(self, model_name)

    def files_here(self, version: ModelVersion) -> ModelVersion:
        """`version` with its `path` on this machine: a local registry's folder as it is, an
        Azure ML model asset downloaded (once) into the local cache."""
        return version.model_copy(update={"path": str(self.registry.download(version))})

    def model_source(self, model_dir: str, training_job: str | None) -> Path | str:
        """What to register: the Azure ML job's own output when both training and the registry
        are on Azure ML (nothing is uploaded again), else the model folder here."""
        return PLATFORMS[self.settings.registry].model_source(self, model_dir, training_job)

    def local_state(self, field_name: str, what: str) -> Path:
        """The local store's folder, where a part living on this machine keeps its state."""
        if not self.store.is_local:
            raise ValueError(
                f"{field_name}=local needs a local store ({what} is kept there); "
                f"use {field_name}=azureml"
            )
        return Path(self.store.uri)

    def state_dir(self, in_store: str, in_cache: str) -> Path:
        """`{store}/{in_store}` for a local store, else `{user_cache()}/{in_cache}`."""
        if self.store.is_local:
            return Path(self.store.uri) / in_store
        return user_cache() / in_cache
