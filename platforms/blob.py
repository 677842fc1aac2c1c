"""Azure Blob access for `az://container/path` URIs: credentials come from the environment.

A connection string (Azurite, or a storage account key) is read from an environment variable,
never from a config file; without one, `DefaultAzureCredential` is used (managed identity,
Azure CLI login, environment service principal) with the configured account name.
"""

from __future__ import annotations

import logging
import os
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

AZURE_SCHEMES = ("az://", "abfs://", "abfss://")
STORAGE_SCOPE = "https://storage.azure.com/.default"


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


def check_sign_in(uri: str, config: AzureStorageConfig) -> None:
    """A one-line ValueError when reading `uri` needs a `DefaultAzureCredential` sign-in (no
    connection string, `azure.account_name` set) and none works. Asked once, before fsspec reads
    (it retries a failed sign-in for over a minute and then raises a page of traceback); the
    credential chain's own warnings are kept out of the output."""
    if not is_azure(uri) or os.environ.get(config.connection_string_env):
        return
    storage_options(uri, config)  # no credentials configured at all: its ValueError
    from azure.core.exceptions import ClientAuthenticationError
    from azure.identity import DefaultAzureCredential

    identity_log = logging.getLogger("azure.identity")
    level = identity_log.level
    identity_log.setLevel(logging.CRITICAL)
    try:
        with DefaultAzureCredential() as credential:
            credential.get_token(STORAGE_SCOPE)
    except ClientAuthenticationError:
        raise ValueError(
            f"no Azure sign-in works for storage account {config.account_name} "
            "(azure.account_name): run `az login`, use a managed identity or set AZURE_CLIENT_ID, "
            f"AZURE_TENANT_ID and AZURE_CLIENT_SECRET; or set {config.connection_string_env}"
        ) from None
    finally:
        identity_log.setLevel(level)
