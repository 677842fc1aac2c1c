"""Where Azure ML's data collector writes, for the monitor (`monitor.azureml`): its root, a
datastore path or an `az://` URI, resolved to the Blob URI of the model's endpoint folder and
the credentials to read it with (tasks/monitor_azure.py reads it).

The default root is the collector's own: `modelDataCollector` on the workspace's default
datastore, `workspaceblobstore` (Microsoft Learn, "Collect production data from models for
real-time inferencing").
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from platforms.azureml.config import EndpointConfig
from platforms.blob import AZURE_SCHEMES, AzureStorageConfig, storage_options
from tasks.monitor_azure import AzureCollected

DATASTORE_PREFIX = "azureml://datastores/"
DEFAULT_ROOT = "azureml://datastores/workspaceblobstore/paths/modelDataCollector"


class AzureCollectedConfig(BaseModel):
    """Where the monitor reads an Azure ML deployment's collected traffic (monitor.source:
    azureml)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    path: str = Field(
        DEFAULT_ROOT,
        description="The data collector's root: azureml://datastores/<datastore>/paths/<path> "
        "(the workspace's default is modelDataCollector on workspaceblobstore) or "
        "az://<container>/<path>; the endpoint's folders are under it.",
    )
    endpoint: str | None = Field(
        None,
        description="The endpoint's folder under path; unset: the model's Azure ML endpoint "
        "(azureml.endpoint.name, else the one named for the model).",
    )
    deployments: list[str] = Field(
        default_factory=list,
        description="Deployments read; empty: every deployment folder of the endpoint.",
    )
    baseline_hours: float = Field(
        48.0,
        ge=0,
        description="Hours before the window also read, for the score reference (the version's "
        "latest answer scores before the window).",
    )

    @field_validator("path")
    @classmethod
    def _where(cls, path: str) -> str:
        if not path.startswith((DATASTORE_PREFIX, *AZURE_SCHEMES)):
            raise ValueError(
                f"{path!r} is not a Blob location: give azureml://datastores/<datastore>/paths/"
                "<path> or az://<container>/<path>"
            )
        if path.startswith(DATASTORE_PREFIX) and "/paths/" not in path:
            raise ValueError(f"{path!r} names no path: azureml://datastores/<name>/paths/<path>")
        return path.rstrip("/")


def blob_root(
    path: str, datastore: Callable[[str], tuple[str, str | None]]
) -> tuple[str, str | None]:
    """(`az://<container>/<path>`, the storage account or None) of a collector root; a
    datastore URI is resolved through `datastore(name) -> (container, account)`."""
    if not path.startswith(DATASTORE_PREFIX):
        return path, None
    name, _, rest = path.removeprefix(DATASTORE_PREFIX).partition("/paths/")
    container, account = datastore(name)
    return f"az://{container}/{rest.strip('/')}".rstrip("/"), account


def azure_collected(
    config: AzureCollectedConfig,
    model: str,
    endpoint: EndpointConfig,
    azure: AzureStorageConfig,
    workspace: Callable[[], Any],
) -> AzureCollected:
    """The collected traffic of `model`'s Azure ML endpoint; a datastore root is resolved
    through the workspace (`workspace()`: its MLClient), read with `azure`'s credentials (a
    connection string), else the datastore's account through DefaultAzureCredential."""

    def datastore(name: str) -> tuple[str, str | None]:
        from azure.core.exceptions import ResourceNotFoundError

        try:
            found = workspace().datastores.get(name)
        except ResourceNotFoundError:
            raise ValueError(
                f"the workspace has no datastore {name} (monitor.azureml.path): name the one the "
                "data collector writes to (workspaceblobstore unless the deployment's "
                "data_collector says otherwise)"
            ) from None
        container = getattr(found, "container_name", None)
        if not container:
            raise ValueError(
                f"datastore {name} (monitor.azureml.path) is not a Blob container: the data "
                "collector writes to a Blob datastore; name that one, or give az://<container>/"
                "<path>"
            )
        return container, getattr(found, "account_name", None)

    root, account = blob_root(config.path, datastore)
    if account and not azure.account_name:
        azure = azure.model_copy(update={"account_name": account})
    name = config.endpoint or endpoint.for_model(model).name
    return AzureCollected(
        uri=f"{root}/{name}",
        storage_options=storage_options(root, azure),
        deployments=tuple(config.deployments),
        baseline_hours=config.baseline_hours,
    )
