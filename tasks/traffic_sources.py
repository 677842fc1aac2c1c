"""Where the monitor reads a served model's collected traffic (`monitor.source`): one row of
`TRAFFIC_SOURCES` a place, each finding the models served there and reading a model's records
in the shape the local collector writes them (`serving/collect.py`).

- `local`: the model's local endpoint folder, `{store}/endpoints/{model}/collected/`;
- `azureml`: Azure ML's data collector output of the model's managed online endpoint on Blob
  storage (tasks/monitor_azure.py; its root: tasks/collector_root.py).

A rollout on Azure ML reads the same output for its canary steps' live windows
(`endpoint_traffic`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, NamedTuple, Protocol

from platforms.backends import Backends
from platforms.blob import AzureStorageConfig
from platforms.endpoint import CollectedReader
from serving.collect import COLLECTED, read_records
from tasks.collector_root import AzureCollectedConfig, azure_collected


class CollectedTraffic(Protocol):
    """A served model's collected records, and what reading them found."""

    source: str

    def records(self, since: datetime, until: datetime) -> Iterator[dict[str, Any]]: ...
    def read_counts(self) -> dict[str, int]: ...


@dataclass
class LocalCollected:
    """A local endpoint's `collected/` folder (every record; the monitor keeps the window's):
    `folder`, else the one of `model`'s endpoint in the store at `store_uri`, found when read."""

    folder: Path | None = None
    store_uri: str = ""
    model: str = ""
    source: str = "local"

    def records(self, since: datetime, until: datetime) -> Iterator[dict[str, Any]]:
        """Every collected record (ValueError at once when the model has no local endpoint)."""
        return read_records(self.folder or _endpoint_folder(self.store_uri, self.model))

    def read_counts(self) -> dict[str, int]:
        return {}


def _endpoint_folder(store_uri: str, model: str) -> Path:
    from platforms.endpoint import local_endpoints

    folders = local_endpoints(Path(store_uri))
    if model not in folders:
        raise ValueError(
            f"no local endpoint of {model} in {store_uri} (endpoints: "
            f"{', '.join(folders) or 'none yet'}): a rollout starts one, or set "
            "monitor.source=azureml to read an Azure ML deployment's collected data"
        )
    return folders[model] / COLLECTED


class TrafficSource(NamedTuple):
    """The models served at a place (given the config's own model) and one model's traffic."""

    served: Callable[[Backends, str], list[str]]
    traffic: Callable[[Backends, str, AzureCollectedConfig, AzureStorageConfig], CollectedTraffic]
    # a rollout on this platform's endpoint reads its live windows here (not where the endpoint
    # reads its own records back)
    read_back: bool = False


def _local_served(backends: Backends, own_model: str) -> list[str]:
    from platforms.endpoint import local_endpoints

    return list(local_endpoints(Path(backends.store.uri)))


def _local(
    backends: Backends, model: str, _: AzureCollectedConfig, __: AzureStorageConfig
) -> CollectedTraffic:
    return LocalCollected(store_uri=backends.store.uri, model=model)


def _azureml(
    backends: Backends, model: str, config: AzureCollectedConfig, azure: AzureStorageConfig
) -> CollectedTraffic:
    endpoint = backends.settings.azureml.endpoint
    return azure_collected(config, model, endpoint, azure, lambda: backends.workspace)


TRAFFIC_SOURCES: dict[str, TrafficSource] = {
    "local": TrafficSource(_local_served, _local),
    # one endpoint a model on Azure ML: the config's model is the one its folders belong to
    "azureml": TrafficSource(lambda backends, own_model: [own_model], _azureml, read_back=True),
}


def endpoint_traffic(
    backends: Backends, model: str, config: AzureCollectedConfig, azure: AzureStorageConfig
) -> CollectedReader | None:
    """Where a rollout reads `model`'s endpoint traffic back for its live windows when it is
    collected away from the endpoint: on Azure ML, its data collector's output (the window's
    hours only, no baseline before them); None for the local endpoint, which reads its own."""
    source = TRAFFIC_SOURCES[backends.settings.endpoint]  # rollout.backend: where it serves
    if not source.read_back:
        return None
    window_only = config.model_copy(update={"baseline_hours": 0.0})
    return source.traffic(backends, model, window_only, azure).records
