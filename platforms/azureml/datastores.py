"""The datastore a job reads the store's container through: its name, the path of a store folder
seen through it, the check that an existing one is over that container, and a credential-less
one to create (no key or SAS kept in the workspace)."""

from __future__ import annotations

from typing import Any

from azure.ai.ml.entities import AzureBlobDatastore


def datastore_uri(uri: str, datastore: str) -> str:
    """`az://container/path` as the same folder seen through a datastore over that container."""
    path = uri.split("://", 1)[1].split("/", 1)[1].rstrip("/")
    return f"azureml://datastores/{datastore}/paths/{path}/"


def container_of(uri: str) -> str:
    """The blob container of an `az://container/path` URI."""
    return uri.split("://", 1)[1].split("/", 1)[0]


def datastore_name(uri: str, configured: str | None) -> str:
    """The datastore over `uri`'s container: azureml.datastore, else the container's name (a
    datastore name has letters, digits and underscores; a container's hyphens become _)."""
    return configured or container_of(uri).replace("-", "_")


def blob_datastore(name: str, account: str, container: str) -> AzureBlobDatastore:
    """A credential-less blob datastore: jobs read through it with their own identity (the
    compute's managed identity or the submitting user), so no key or SAS is stored in the
    workspace; that identity needs Storage Blob Data Reader on the account."""
    return AzureBlobDatastore(
        name=name,
        account_name=account,
        container_name=container,
        description=f"tunegate store container {container} (identity-based access)",
    )


def check_datastore(found: Any, container: str, account: str | None) -> None:
    """A ValueError naming azureml.datastore when datastore `found` is not over `container` (of
    `account`, when known): jobs would read another container's files under the same paths."""
    over = getattr(found, "container_name", None) or getattr(found, "filesystem", None)
    where = f"container {over} of account {getattr(found, 'account_name', None)}"
    if over != container or (account and getattr(found, "account_name", None) != account):
        wanted = f"container {container}" + (f" of account {account}" if account else "")
        raise ValueError(
            f"azureml.datastore {found.name} is over {where}, not the store's {wanted}: set "
            "azureml.datastore to a datastore over it, or leave it unset (tunegate then uses "
            "or creates one named after the container)"
        )


def account_of(connection_string: str | None) -> str | None:
    """The AccountName of a storage connection string (None without one)."""
    parts = dict(p.split("=", 1) for p in (connection_string or "").split(";") if "=" in p)
    return parts.get("AccountName")
