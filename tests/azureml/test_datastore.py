"""An `az://` store's split is read by the job through a datastore over the store's container:
found and checked, or created credential-less; never the workspace's default datastore, whose
container is another one."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from azure.ai.ml import load_datastore, load_job
from azure.ai.ml.entities import AzureBlobDatastore

from platforms.azureml.config import AzureMLConfig
from platforms.azureml.export import export
from platforms.azureml.training import AzureMLTrainingBackend
from platforms.training import TrainSpec
from tests.azureml.fake_service import FakeAzureML, ml_client

SPLIT = "az://tune-gate/runs/datasets/split/ab12cd34"
CATALOG = "azureml://registries/azureml/models/t5-base/versions/18"
IMAGE = {"image": "mcr.microsoft.com/azureml/curated/acft-hf-nlp-gpu:latest"}


def _config(**fields: object) -> AzureMLConfig:
    return AzureMLConfig.model_validate({"environment": IMAGE, **fields})


def _backend(fake: FakeAzureML, tmp_path: Path, account: str | None = "tunegatestore", **fields):
    return AzureMLTrainingBackend(
        ml_client(fake), _config(**fields), tmp_path / "jobs", storage_account=account
    )


@pytest.fixture(autouse=True)
def _no_connection_string(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AZURE_STORAGE_CONNECTION_STRING", raising=False)


def test_a_missing_datastore_is_created_over_the_store_s_container_without_credentials(
    fake_azureml: FakeAzureML, tmp_path: Path
) -> None:
    reference = _backend(fake_azureml, tmp_path)._data_input(SPLIT)

    assert reference == "azureml:tunegate-split:ab12cd34"
    [put] = [r for r in fake_azureml.requests if r.method == "PUT" and "/datastores/" in r.path]
    assert put.path.endswith("/datastores/tune_gate")  # named after the container
    assert put.query.get("skipValidation") == "true"
    sent = put.body["properties"]
    assert (sent["datastoreType"], sent["accountName"], sent["containerName"]) == (
        "AzureBlob",
        "tunegatestore",
        "tune-gate",
    )
    assert sent["credentials"] == {"credentialsType": "None"}  # identity-based: no key stored
    data = fake_azureml.last_body("PUT", "/data/tunegate-split/versions/ab12cd34")["properties"]
    assert data["dataUri"] == "azureml://datastores/tune_gate/paths/runs/datasets/split/ab12cd34/"


def test_an_existing_datastore_over_the_container_is_used_as_it_is(
    fake_azureml: FakeAzureML, tmp_path: Path
) -> None:
    fake_azureml.add_datastore("runs", "tunegatestore", "tune-gate", credentials_type="AccountKey")
    _backend(fake_azureml, tmp_path, datastore="runs")._data_input(SPLIT)
    assert not fake_azureml.bodies("PUT", "/datastores/runs")
    data = fake_azureml.last_body("PUT", "/data/tunegate-split/versions/ab12cd34")["properties"]
    assert data["dataUri"].startswith("azureml://datastores/runs/paths/runs/")


@pytest.mark.parametrize(
    ("fields", "existing", "account", "message"),
    [
        (  # the old default: the workspace's own container, not the store's
            {"datastore": "workspaceblobstore"},
            None,
            "tunegatestore",
            "azureml.datastore workspaceblobstore is over container azureml-blobstore-",
        ),
        (  # same name, another account's container of the same name
            {},
            ("tune_gate", "otheraccount", "tune-gate"),
            "tunegatestore",
            "not the store's container tune-gate of account tunegatestore",
        ),
        ({"create_datastore": False}, None, "tunegatestore", "set azureml.create_datastore"),
        ({}, None, None, "set azureml.datastore_account"),
    ],
    ids=["default-datastore", "other-account", "no-create", "no-account"],
)
def test_a_datastore_that_is_not_over_the_store_is_an_error_naming_the_field(
    fake_azureml: FakeAzureML,
    tmp_path: Path,
    fields: dict,
    existing: tuple[str, str, str] | None,
    account: str | None,
    message: str,
) -> None:
    if existing:
        fake_azureml.add_datastore(*existing)
    with pytest.raises(ValueError, match=message):
        _backend(fake_azureml, tmp_path, account, **fields)._data_input(SPLIT)
    assert not fake_azureml.bodies("PUT", "/datastores/tune_gate")
    assert not [r for r in fake_azureml.requests if "/data/" in r.path and r.method == "PUT"]


def test_the_configured_account_wins_and_a_connection_string_s_account_is_used(
    fake_azureml: FakeAzureML, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _backend(fake_azureml, tmp_path, "fromstore", datastore_account="configured")._data_input(SPLIT)
    assert fake_azureml.datastores["tune_gate"]["properties"]["accountName"] == "configured"
    fake_azureml.datastores.clear()
    monkeypatch.setenv(
        "AZURE_STORAGE_CONNECTION_STRING",
        "DefaultEndpointsProtocol=https;AccountName=fromenv;AccountKey=a2V5;EndpointSuffix=x",
    )
    assert _backend(fake_azureml, tmp_path, None)._ensure_datastore(SPLIT) == "tune_gate"
    assert fake_azureml.datastores["tune_gate"]["properties"]["accountName"] == "fromenv"


def test_a_workspace_model_s_input_type_is_its_registered_type(
    fake_azureml: FakeAzureML, tmp_path: Path
) -> None:
    with fake_azureml._lock:
        fake_azureml._store_version(
            "models", "our-base", "3", {"modelType": "mlflow_model", "modelUri": "azureml://x"}
        )
    backend = _backend(fake_azureml, tmp_path)
    assert backend._model_type("azureml:our-base:3") == "mlflow_model"
    assert backend._model_type(CATALOG) == "mlflow_model"  # the catalog's: not looked up
    assert backend._model_type("meta-llama/Meta-Llama-3-8B") is None
    with pytest.raises(ValueError, match=r"train\.model azureml:our-base:4: no such model"):
        backend._model_type("azureml:our-base:4")


def _spec(data: str) -> TrainSpec:
    return TrainSpec(name="train-x", data_dir=data, args={"task": "causal-lm", "model": CATALOG})


def test_the_export_writes_the_datastore_the_job_reads_through(tmp_path: Path) -> None:
    written = export(
        _config(), _spec(SPLIT), tmp_path, data=SPLIT, model="azureml:m:1", storage_account="acct"
    )

    datastore = load_datastore(written["datastore"])
    assert isinstance(datastore, AzureBlobDatastore)
    assert (datastore.name, datastore.account_name, datastore.container_name) == (
        "tune_gate",
        "acct",
        "tune-gate",
    )
    assert type(datastore.credentials).__name__ == "NoneCredentialConfiguration"
    raw = yaml.safe_load(written["datastore"].read_text())
    assert not raw.get("credentials")  # nothing secret in the file
    job = load_job(written["job"])
    assert (
        job.inputs["data"].path
        == "azureml://datastores/tune_gate/paths/runs/datasets/split/ab12cd34/"
    )


def test_the_export_names_the_missing_account_or_expects_the_datastore(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"set azure\.account_name or azureml\.datastore_account"):
        export(_config(), _spec(SPLIT), tmp_path / "a", data=SPLIT, model="azureml:m:1")
    config = _config(datastore="runs", create_datastore=False)
    written = export(config, _spec(SPLIT), tmp_path / "b", data=SPLIT, model="azureml:m:1")
    assert "datastore" not in written and not (tmp_path / "b" / "datastore.yml").exists()
    job = load_job(written["job"])
    assert job.inputs["data"].path.startswith("azureml://datastores/runs/paths/runs/")


@pytest.mark.slow
def test_submit_mounts_the_catalog_model_and_reads_the_split_through_the_datastore(
    fake_azureml_on_azurite: FakeAzureML, tmp_path: Path
) -> None:
    """Through the SDK to the service: the datastore, the data asset over it, and the job with
    the catalog model as a read-only mlflow_model input."""
    fake = fake_azureml_on_azurite
    backend = _backend(fake, tmp_path)
    job = backend.submit(_spec(SPLIT))
    assert job.status == "running"

    assert fake.datastores["tune_gate"]["properties"]["containerName"] == "tune-gate"
    sent = fake.last_body("PUT", "/jobs/train-x")["properties"]
    base = sent["inputs"]["base_model"]
    assert (base["jobInputType"], base["uri"], base["mode"]) == (
        "mlflow_model",
        CATALOG,
        "ReadOnlyMount",
    )
    assert sent["inputs"]["data"]["uri"].endswith("/data/tunegate-split/versions/ab12cd34")
    assert sent["environmentVariables"]["HF_HUB_OFFLINE"] == "1"
    assert f"--model {CATALOG}" in sent["command"]
    assert "TUNEGATE_MODEL_MOUNTS=" in sent["command"]
