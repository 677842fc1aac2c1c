"""Where the monitor reads an Azure ML deployment's collected data: a datastore root
(`azureml://datastores/<name>/paths/<path>`) is resolved through the workspace to its Blob
container and account, as the data collector's own default (`workspaceblobstore`) is."""

from __future__ import annotations

import pytest

from platforms.azureml.config import EndpointConfig, endpoint_name
from platforms.blob import AzureStorageConfig
from tasks.collector_root import AzureCollectedConfig, azure_collected
from tests.azureml.fake_service import FakeAzureML, ml_client

MODEL = "tunegate-extractive-qa"


@pytest.fixture(autouse=True)
def _no_connection_string(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AZURE_STORAGE_CONNECTION_STRING", raising=False)


def _collected(fake: FakeAzureML, path: str | None = None, **endpoint: str):
    config = AzureCollectedConfig(**({"path": path} if path else {}))
    return azure_collected(
        config,
        MODEL,
        EndpointConfig.model_validate(endpoint),
        AzureStorageConfig(),
        lambda: ml_client(fake),
    )


def test_the_default_root_is_the_workspace_blob_store_s_container(
    fake_azureml: FakeAzureML,
) -> None:
    found = _collected(fake_azureml)
    assert found.uri == f"az://{fake_azureml.container}/modelDataCollector/{endpoint_name(MODEL)}"
    assert found.storage_options == {"account_name": "fakestorage", "anon": False}
    named = _collected(fake_azureml, name="qa-prod")  # azureml.endpoint.name
    assert named.uri.endswith("/modelDataCollector/qa-prod")


def test_a_datastore_root_is_its_container_and_a_connection_string_wins(
    fake_azureml: FakeAzureML, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_azureml.add_datastore("collected_data", "mdcaccount", "mdc-data")
    path = "azureml://datastores/collected_data/paths/mdc/prod/"
    found = _collected(fake_azureml, path)
    assert found.uri == f"az://mdc-data/mdc/prod/{endpoint_name(MODEL)}"
    assert found.storage_options == {"account_name": "mdcaccount", "anon": False}

    monkeypatch.setenv("AZURE_STORAGE_CONNECTION_STRING", "UseDevelopmentStorage=true")
    assert _collected(fake_azureml, path).storage_options == {
        "connection_string": "UseDevelopmentStorage=true"
    }


def test_a_missing_datastore_says_which_field_names_it(fake_azureml: FakeAzureML) -> None:
    with pytest.raises(ValueError, match=r"no datastore nowhere \(monitor.azureml.path\)"):
        _collected(fake_azureml, "azureml://datastores/nowhere/paths/modelDataCollector")
