"""What an Azure ML job uses from the workspace, found or created there: the compute cluster
(checked against the configured size and the region's offer), the datastore over the store's
container, the split as a Data asset versioned by its content hash, and a base model asset's
input type.

`WorkspaceAssets` is a part of `AzureMLTrainingBackend` (platforms/azureml/training.py), which
sets the client, config and storage account these read.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

from azure.core.exceptions import HttpResponseError, ResourceNotFoundError

from platforms.azureml import base_model, datastores, entities, vm_sizes
from platforms.azureml.client import retrying
from platforms.azureml.config import AzureMLConfig
from platforms.blob import is_azure

log = logging.getLogger(__name__)


class WorkspaceAssets:
    """The cluster, datastore, Data and model assets of the workspace a backend submits to."""

    client: Any
    config: AzureMLConfig
    storage_account: str | None

    def _ensure_compute(self) -> None:
        """The configured cluster: checked against the workspace's cluster of that name (same
        size and tier, enough nodes), else against the sizes its region offers, and created."""
        compute, launch = self.config.compute, self.config.launch
        try:
            found = retrying(
                lambda: self.client.compute.get(compute.name), f"get compute {compute.name}"
            )
        except ResourceNotFoundError:
            found = None
        if found is not None:
            vm_sizes.check_existing(found, compute, launch)
            return
        self._check_size_offered()
        cluster = entities.compute_cluster(compute)
        retrying(
            lambda: self.client.compute.begin_create_or_update(cluster).result(),
            f"create compute {compute.name}",
        )

    def _check_size_offered(self) -> None:
        """The workspace region's VM sizes (`list_sizes`), when this identity may list them: a
        size it does not offer, or with fewer GPUs than the launch asks, is an error naming the
        field; a refused or failed listing leaves the check to the service."""
        try:
            region = retrying(
                lambda: self.client.workspaces.get(self.client.workspace_name).location,
                "get workspace",
            )
            sizes = retrying(
                lambda: list(
                    self.client.compute.list_sizes(location=region, compute_type="AmlCompute")
                ),
                "list VM sizes",
            )
        except HttpResponseError as error:
            log.warning("cannot list the workspace's VM sizes (%s): size not checked", error.reason)
            return
        vm_sizes.check_offered(sizes, self.config.compute, self.config.launch, str(region))

    def _model_type(self, model: str | None) -> base_model.ModelType | None:
        """The input type of a model asset: configured, or (auto) a workspace model's own type,
        asked of the workspace; a model catalog's is mlflow_model. None: not an asset."""
        if model is None or not base_model.is_model_asset(model):
            return None
        configured = self.config.job.model_input_type
        if configured != "auto" or base_model.is_catalog_model(model):
            return base_model.default_type(model, configured)
        reference = model.removeprefix("azureml:")
        version: str | None = None
        label: str | None = None
        if "@" in reference:
            name, label = reference.split("@", 1)
        else:
            name, version = reference.split(":", 1)
        try:
            found = retrying(
                lambda: self.client.models.get(name, version=version, label=label),
                f"get model {reference}",
            )
        except ResourceNotFoundError:
            raise ValueError(
                f"train.model {model}: no such model in workspace "
                f"{self.config.workspace.workspace_name or 'of azureml.workspace'}"
            ) from None
        return "mlflow_model" if found.type == "mlflow_model" else "custom_model"

    def _ensure_datastore(self, uri: str) -> str:
        """The datastore over the store's container: found (and checked to be over it), or
        created credential-less when azureml.create_datastore allows; a ValueError naming the
        field to set otherwise."""
        container = datastores.container_of(uri)
        name = datastores.datastore_name(uri, self.config.datastore)
        account = (
            self.config.datastore_account
            or self.storage_account
            or datastores.account_of(os.environ.get("AZURE_STORAGE_CONNECTION_STRING"))
        )
        try:
            found = retrying(lambda: self.client.datastores.get(name), f"get datastore {name}")
        except ResourceNotFoundError:
            found = None
        if found is not None:
            datastores.check_datastore(found, container, account)
            return name
        if not self.config.create_datastore:
            raise ValueError(
                f"azureml.datastore {name} does not exist in the workspace: create it over "
                f"container {container} (`tunegate azureml export` writes datastore.yml), set "
                "azureml.datastore to one that is, or set azureml.create_datastore: true"
            )
        if account is None:
            raise ValueError(
                f"the datastore {name} over container {container} does not exist and the "
                "storage account is unknown: set azureml.datastore_account (the account of the "
                "store's container)"
            )
        datastore = datastores.blob_datastore(name, account, container)
        retrying(
            lambda: self.client.datastores.create_or_update(datastore), f"create datastore {name}"
        )
        return name

    def _data_input(self, data_dir: str) -> str:
        """An Azure ML reference for the split dataset: a Data asset versioned by content hash."""
        if data_dir.startswith(("azureml:", "https://", "http://")):
            return data_dir
        name = self.config.data_asset
        if is_azure(data_dir):
            source = datastores.datastore_uri(data_dir, self._ensure_datastore(data_dir))
            version = _hash_of(data_dir, default=source.rstrip("/").rsplit("/", 1)[-1])
        else:
            source = data_dir
            version = _hash_of(data_dir, default=Path(data_dir).name)
        try:
            retrying(lambda: self.client.data.get(name, version=version), f"get data {name}")
        except ResourceNotFoundError:
            asset = entities.data_asset(name, version, source, f"tunegate split {version}")
            retrying(lambda: self.client.data.create_or_update(asset), f"register data {name}")
        return f"azureml:{name}:{version}"


def _hash_of(data_dir: str, default: str) -> str:
    """The split's content hash from its manifest (the dataset folder name when unreadable)."""
    import fsspec

    try:
        with fsspec.open(data_dir.rstrip("/") + "/manifest.json", "r") as f:
            return entities.data_version(str(json.load(f)["content_hash"]))
    except (OSError, KeyError, ValueError):
        return entities.data_version(default)
