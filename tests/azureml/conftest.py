"""Fixtures for Azure ML tests: the fake service, Azurite behind it (`azurite`, in
tests/conftest.py), and no network besides."""

from __future__ import annotations

import contextlib
import socket
from collections.abc import Iterator
from typing import Any

import pytest
from azure.core.exceptions import ResourceExistsError

from tests.azureml.fake_service import (
    BlobAccount,
    FakeAzureML,
    UnexpectedRequestError,
    route_datastores_to_azurite,
)

_LOOPBACK = frozenset({"127.0.0.1", "::1", "localhost"})


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Refuse any connection beyond loopback: whatever bypasses the fake transport fails loudly
    (an AssertionError, which no HTTP retry policy retries) naming the host it tried."""
    resolve = socket.getaddrinfo

    def loopback_only(host: Any, *args: Any, **kwargs: Any) -> Any:
        name = host.decode() if isinstance(host, bytes) else str(host)
        if name not in _LOOPBACK:
            raise UnexpectedRequestError(
                f"{name} was contacted outside the fake Azure ML transport"
            )
        return resolve(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", loopback_only)


@pytest.fixture
def fake_azureml(no_network: None, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAzureML]:
    """A fresh fake workspace without blob storage; fails the test if the SDK sent anything
    the fake does not know (even when the SDK swallowed the error)."""
    # MLClient writes AZUREML_CURRENT_CLOUD; pinning it also rules out a cloud-metadata fetch
    monkeypatch.setenv("AZUREML_CURRENT_CLOUD", "AzureCloud")
    monkeypatch.delenv("ARM_CLOUD_METADATA_URL", raising=False)
    fake = FakeAzureML()
    yield fake
    assert not fake.unhandled, "\n".join(fake.unhandled)


@pytest.fixture(scope="module")
def azurite_account(azurite: str) -> BlobAccount:
    return BlobAccount.from_connection_string(azurite)


@pytest.fixture
def fake_azureml_on_azurite(
    fake_azureml: FakeAzureML, azurite_account: BlobAccount, monkeypatch: pytest.MonkeyPatch
) -> FakeAzureML:
    """The fake workspace with its storage account on Azurite, for uploads and downloads."""
    fake_azureml.blob = azurite_account
    with contextlib.suppress(ResourceExistsError):  # the workspace's datastore container
        azurite_account.service().create_container(fake_azureml.container)
    route_datastores_to_azurite(monkeypatch, azurite_account)
    return fake_azureml
