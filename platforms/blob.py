"""Azure Blob access for `az://container/path` URIs: credentials come from the environment.

A connection string (Azurite, or a storage account key) is read from an environment variable,
never from a config file; without one, `DefaultAzureCredential` is used (managed identity,
Azure CLI login, environment service principal) with the configured account name.
"""

from __future__ import annotations

import os
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

AZURE_SCHEMES = ("az://", "abfs://", "abfss://")


class AzureStorageConfig(BaseModel):
    """How `az://` paths authenticate. Secrets stay in the environment, not in this config."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    connection_string_env: str = Field(
        "AZURE_STORAGE_CONNECTION_STRING",
        description="Environment variable holding a storage connection string (used first).",
    )
    account_name: str | None = Field(
        None,
        description="Storage account for DefaultAzureCredential when no connection string is set.",
    )


def is_azure(uri: str) -> bool:
    return uri.startswith(AZURE_SCHEMES)


def storage_options(uri: str, config: AzureStorageConfig) -> dict[str, Any]:
    """fsspec options for a URI: empty for local paths, credentials for `az://`."""
    if not is_azure(uri):
        return {}
    connection_string = os.environ.get(config.connection_string_env)
    if connection_string:
        return {"connection_string": connection_string}
    if config.account_name:
        return {"account_name": config.account_name, "anon": False}
    raise ValueError(
        f"{uri} is on Azure Blob but no credentials are configured: set the environment variable "
        f"{config.connection_string_env} to a connection string, or set azure.account_name to use "
        "DefaultAzureCredential (az login, managed identity)"
    )
