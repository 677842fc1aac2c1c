"""One place that turns settings into the platform objects a run uses.

`Backends` holds the store, the Dask client, the training backend, the model registry and the
endpoint backend of one run. It is built once (by `PipelineConfig.backends()` from the flow, or a
CLI command) and handed to the tasks, which never build a platform object themselves. Each
object is made on first use: a run that stops after the split connects to no workspace and a
stage whose output already exists starts no Dask cluster. One Azure ML `MLClient` serves the
registry, the training backend and the endpoint.

Local backends keep their state in a local store (`{store}/jobs`, `{store}/models`,
`{store}/endpoint`); Azure ML backends with an `az://` store keep theirs under `local_cache()`.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from platforms.azureml.config import AzureMLConfig, local_cache
from platforms.compute import DaskConfig, lazy_client
from platforms.store import Store

if TYPE_CHECKING:
    from distributed import Client

    from platforms.endpoint import EndpointBackend
    from platforms.registry import ModelRegistry, ModelVersion
    from platforms.training import TrainingBackend

Kind = Literal["local", "azureml"]


@dataclass(frozen=True)
class BackendSettings:
    """Which backend plays each part; the config field that chose it is named in errors."""

    store: str = ".tunegate"
    storage_options: dict[str, Any] = field(default_factory=dict)
    dask: DaskConfig = field(default_factory=DaskConfig)
    azureml: AzureMLConfig = field(default_factory=AzureMLConfig)
    training: Kind = "local"  # train.backend
    registry: Kind = "local"  # registry.backend
    endpoint: Kind = "local"  # rollout.backend
    endpoint_port: int = 0  # rollout.port: the local endpoint's port (0: a free one)
    endpoint_workers: int = 1  # rollout.workers: scoring processes per local deployment


class Backends:
    """The platform objects of one run, each built on first use and then reused."""

    def __init__(self, settings: BackendSettings) -> None:
        self.settings = settings
        self.store = Store(settings.store, settings.storage_options)

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
    def registry(self) -> ModelRegistry:
        """Where versions and aliases live: the store's JSON index, or Azure ML model assets."""
        if self.settings.registry == "azureml":
            from platforms.azureml.registry import AzureMLRegistry

            return AzureMLRegistry(self.workspace, local_cache() / "models")
        from platforms.registry import LocalRegistry

        return LocalRegistry(self._local_state("registry.backend", "the registry index"))

    @cached_property
    def training(self) -> TrainingBackend:
        """Where the trainer runs: a subprocess here, or a command job on the Azure ML cluster;
        jobs keep their local state (and downloaded models) under `{store}/jobs`."""
        if self.settings.training == "azureml":
            from platforms.azureml.training import AzureMLTrainingBackend

            jobs = self._state_dir("jobs", "jobs")
            return AzureMLTrainingBackend(
                self.workspace,
                self.settings.azureml,
                jobs,
                storage_account=self.settings.storage_options.get("account_name"),
            )
        from platforms.training import LocalTrainingBackend

        return LocalTrainingBackend(self._local_state("train.backend", "the model") / "jobs")

    def open_endpoint(self) -> EndpointBackend:
        """The endpoint backend, the caller's to `close()`: Azure ML's managed online endpoint, or
        the local one under `{store}/endpoint`, started when it is not running."""
        if self.settings.endpoint == "azureml":
            from platforms.azureml.endpoint import AzureMLEndpointBackend

            return AzureMLEndpointBackend(
                self.workspace, self.settings.azureml.endpoint, self._endpoint_state()
            )
        from platforms.endpoint import LocalEndpointBackend, ensure_local_endpoint

        url, key_file = ensure_local_endpoint(self._endpoint_state(), self.settings.endpoint_port)
        return LocalEndpointBackend(url, key_file, self.settings.endpoint_workers)

    def endpoint_lock(self) -> AbstractContextManager[None]:
        """Held by a rollout: one rollout at a time per endpoint (between the processes of this
        machine; Azure ML's own control plane serialises updates across machines)."""
        from platforms.locks import file_lock

        return file_lock(self._endpoint_state() / "rollout.lock", "another run's rollout")

    def _endpoint_state(self) -> Path:
        """Where the endpoint's state is kept on this machine."""
        if self.settings.endpoint == "azureml":
            return self._state_dir("endpoint-azureml", "endpoint")
        return self._local_state("rollout.backend", "the endpoint's state") / "endpoint"

    def champion(self, name: str) -> ModelVersion | None:
        """The `champion` of `name` with its files on this machine (downloaded when remote)."""
        champion = self.registry.alias(name, "champion")
        return None if champion is None else self.files_here(champion)

    def files_here(self, version: ModelVersion) -> ModelVersion:
        """`version` with its `path` on this machine: a local registry's folder as it is, an
        Azure ML model asset downloaded (once) into the local cache."""
        download = getattr(self.registry, "download", None)
        if download is None:
            return version
        return version.model_copy(update={"path": str(download(version))})

    def model_source(self, model_dir: str, training_job: str | None) -> Path | str:
        """What to register: the Azure ML job's own output when both training and the registry
        are on Azure ML (nothing is uploaded again), else the model folder here."""
        on_azure = self.settings.registry == self.settings.training == "azureml"
        if on_azure and training_job:
            from platforms.azureml.entities import job_output

            return job_output(training_job)
        return Path(model_dir)

    def _local_state(self, field_name: str, what: str) -> Path:
        if not self.store.is_local:
            raise ValueError(
                f"{field_name}=local needs a local store ({what} is kept there); "
                f"use {field_name}=azureml"
            )
        return Path(self.store.uri)

    def _state_dir(self, in_store: str, in_cache: str) -> Path:
        """`{store}/{in_store}` for a local store, else `{local_cache()}/{in_cache}`."""
        if self.store.is_local:
            return Path(self.store.uri) / in_store
        return local_cache() / in_cache
