"""The fake Azure ML service carries a real MLClient through every operation tunegate uses."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from azure.ai.ml import Input, MLClient, Output, PyTorchDistribution, command
from azure.ai.ml.entities import (
    AmlCompute,
    CodeConfiguration,
    Command,
    Data,
    Environment,
    ManagedOnlineDeployment,
    ManagedOnlineEndpoint,
    Model,
    OnlineRequestSettings,
    ProbeSettings,
)
from azure.ai.ml.operations._run_history_constants import RunHistoryConstants
from azure.core.exceptions import HttpResponseError, ResourceNotFoundError

from tests.azureml.fake_service import BlobAccount, FakeAzureML, UnexpectedRequestError, ml_client

IMAGE = "mcr.microsoft.com/azureml/openmpi4.1.0-ubuntu20.04:latest"
DATA_ARM_ID = "/data/somedata/versions/3"


@pytest.fixture
def client(fake_azureml: FakeAzureML) -> MLClient:
    return ml_client(fake_azureml)


@pytest.fixture
def trainer_code(tmp_path: Path) -> Path:
    code = tmp_path / "trainer"
    code.mkdir()
    (code / "train.py").write_text("print('training')\n")
    return code


def _training_job(
    code: Path | None, data: str = "azureml:somedata:3", name: str = "fixed-name"
) -> Command:
    return command(
        code=str(code) if code else None,
        command="python train.py --data ${{inputs.data}} --out ${{outputs.model}}",
        environment=Environment(image=IMAGE),
        compute="some-cluster",
        inputs={"data": Input(type="uri_folder", path=data)},
        outputs={"model": Output(type="uri_folder", mode="upload")},
        instance_count=2,
        distribution=PyTorchDistribution(process_count_per_instance=1),
        environment_variables={"TUNEGATE_RUN": "r1", "HF_HUB_OFFLINE": "1"},
        experiment_name="tunegate-retrain",
        name=name,
    )


def _seed_job_dependencies(fake: FakeAzureML) -> None:
    fake.add_compute("some-cluster")
    fake.add_data("somedata", "3", "azureml://datastores/workspaceblobstore/paths/datasets/abc/")


def test_creating_the_client_sends_nothing(fake_azureml: FakeAzureML) -> None:
    ml_client(fake_azureml)
    assert fake_azureml.requests == []


# ---- jobs


@pytest.mark.slow
def test_command_job_uploads_code_to_azurite_and_submits_the_serialized_job(
    fake_azureml_on_azurite: FakeAzureML, trainer_code: Path
) -> None:
    fake = fake_azureml_on_azurite
    _seed_job_dependencies(fake)

    job = ml_client(fake).jobs.create_or_update(_training_job(trainer_code))

    assert (job.name, job.status) == ("fixed-name", "Starting")
    calls = fake.calls()
    code = calls[0].split("/codes/")[1].split("/")[0]  # a fresh name per anonymous snapshot
    environment = calls[3].rsplit("/", 1)[1]  # a hash of the image
    assert calls == [
        f"GET {{ws}}/codes/{code}/versions",  # any snapshot with this content hash?
        f"POST {{ws}}/codes/{code}/versions/1/startPendingUpload",
        f"PUT {{ws}}/codes/{code}/versions/1",
        f"PUT {{ws}}/environments/CliV2AnonymousEnvironment/versions/{environment}",
        "PUT {ws}/jobs/fixed-name",
    ]
    body = fake.last_body("PUT", "/jobs/fixed-name")["properties"]
    assert body["jobType"] == "Command"
    assert body["distribution"] == {"distributionType": "PyTorch", "processCountPerInstance": 1}
    assert body["resources"]["instanceCount"] == 2
    assert body["environmentVariables"] == {"TUNEGATE_RUN": "r1", "HF_HUB_OFFLINE": "1"}
    assert body["outputs"]["model"] == {"jobOutputType": "uri_folder", "mode": "Upload"}
    assert body["inputs"]["data"]["uri"].endswith(DATA_ARM_ID)
    assert body["computeId"].endswith("/computes/some-cluster")
    assert body["experimentName"] == "tunegate-retrain"
    assert body["codeId"].endswith(f"/codes/{code}/versions/1")
    assert body["environmentId"].endswith(environment)
    assert fake.last_body("PUT", environment)["properties"]["image"] == IMAGE
    code_uri = fake.last_body("PUT", f"/codes/{code}/versions/1")["properties"]["codeUri"]
    container, folder = code_uri.removeprefix(fake.blob.endpoint + "/").split("/")
    uploaded = fake.blob.service().get_container_client(container).list_blob_names()
    assert list(uploaded) == [f"{folder}/train.py"]


@pytest.mark.slow
def test_resubmitting_the_same_code_reuses_the_uploaded_snapshot(
    fake_azureml_on_azurite: FakeAzureML, trainer_code: Path
) -> None:
    fake = fake_azureml_on_azurite
    _seed_job_dependencies(fake)
    client = ml_client(fake)
    client.jobs.create_or_update(_training_job(trainer_code, name="first"))
    start = len(fake.requests)

    client.jobs.create_or_update(_training_job(trainer_code, name="second"))

    assert not any("startPendingUpload" in call for call in fake.calls()[start:])
    first_code = fake.last_body("PUT", "/jobs/first")["properties"]["codeId"]
    assert fake.last_body("PUT", "/jobs/second")["properties"]["codeId"] == first_code


def test_datastore_path_inputs_are_sent_as_given(
    fake_azureml: FakeAzureML, client: MLClient
) -> None:
    fake_azureml.add_compute("some-cluster")
    path = "azureml://datastores/workspaceblobstore/paths/x/"

    client.jobs.create_or_update(_training_job(None, data=path))

    inputs = fake_azureml.last_body("PUT", "/jobs/fixed-name")["properties"]["inputs"]
    assert inputs["data"] == {"jobInputType": "uri_folder", "uri": path}


def test_a_job_naming_missing_data_or_compute_is_refused(
    fake_azureml: FakeAzureML, client: MLClient
) -> None:
    with pytest.raises(HttpResponseError) as refused:
        client.jobs.create_or_update(_training_job(None))

    assert "/computes/some-cluster" in str(refused.value)
    assert DATA_ARM_ID in str(refused.value)


def test_job_status_follows_the_test_and_cancel_completes(
    fake_azureml: FakeAzureML, client: MLClient
) -> None:
    _seed_job_dependencies(fake_azureml)
    client.jobs.create_or_update(_training_job(None))

    fake_azureml.progress_job("fixed-name", "Queued", "Running")
    assert [client.jobs.get("fixed-name").status for _ in range(3)] == [
        "Queued",
        "Running",
        "Running",
    ]

    client.jobs.begin_cancel("fixed-name").result()

    assert client.jobs.get("fixed-name").status == "Canceled"
    assert fake_azureml.calls()[-5:] == [
        "POST {ws}/jobs/fixed-name/cancel",
        "GET {location}/mfeOperationsStatus/fakeop-1",
        "GET {location}/mfeOperationsStatus/fakeop-1",
        "GET {location}/mfeOperationResults/fakeop-1",
        "GET {ws}/jobs/fixed-name",
    ]
    assert fake_azureml.transport.sleeps == [10.0]  # polled after Retry-After, never slept


def test_stream_prints_the_job_log_until_completion(
    fake_azureml: FakeAzureML,
    client: MLClient,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # AZUREML_RUN_POLLING_INTERVAL_MIN, read once at import: stream sleeps with time.sleep
    monkeypatch.setattr(RunHistoryConstants, "_WAIT_COMPLETION_POLLING_INTERVAL_MIN", 0)
    _seed_job_dependencies(fake_azureml)
    client.jobs.create_or_update(_training_job(None))
    fake_azureml.write_log("fixed-name", "user_logs/std_log.txt", "epoch 1 loss 0.52\n")
    fake_azureml.progress_job("fixed-name", "Running", "Running", "Completed")

    client.jobs.stream("fixed-name")

    assert "epoch 1 loss 0.52" in capsys.readouterr().out
    assert fake_azureml.calls()[-5:] == [
        "GET {ws}",
        "GET https://eastus.api.azureml.ms/discovery",
        "GET https://eastus.api.azureml.ms/history/v1.0{ws}/runs/fixed-name/details",
        "GET https://eastus.api.azureml.ms/history/v1.0{ws}/runs/fixed-name/details",
        "GET https://fakelogs.blob.core.windows.net/azureml/ExperimentRun/dcid.fixed-name/user_logs/std_log.txt",
    ]


@pytest.mark.slow
def test_download_fetches_the_named_output_from_azurite(
    fake_azureml_on_azurite: FakeAzureML, tmp_path: Path
) -> None:
    fake = fake_azureml_on_azurite
    _seed_job_dependencies(fake)
    client = ml_client(fake)
    client.jobs.create_or_update(_training_job(None))
    fake.write_job_output(
        "fixed-name", "model", {"adapter_config.json": b"{}", "weights/a.bin": b"\x00"}
    )
    fake.set_job_status("fixed-name", "Completed")

    client.jobs.download("fixed-name", output_name="model", download_path=tmp_path)

    model = tmp_path / "named-outputs" / "model"
    assert sorted(p.relative_to(model).as_posix() for p in model.rglob("*") if p.is_file()) == [
        "adapter_config.json",
        "weights/a.bin",
    ]
    assert "POST https://eastus.api.azureml.ms/history/v1.0{ws}/rundata" in fake.calls()
    assert "POST {ws}/datastores/workspaceblobstore/listSecrets" in fake.calls()


# ---- compute, data, models


def test_missing_compute_is_not_found_then_created(
    fake_azureml: FakeAzureML, client: MLClient
) -> None:
    with pytest.raises(ResourceNotFoundError):
        client.compute.get("gpu-cluster")

    cluster = AmlCompute(
        name="gpu-cluster",
        size="Standard_NC6s_v3",
        min_instances=0,
        max_instances=2,
        idle_time_before_scale_down=120,
    )
    created = client.compute.begin_create_or_update(cluster).result()

    assert (created.provisioning_state, client.compute.get("gpu-cluster").size) == (
        "Succeeded",
        "Standard_NC6s_v3",
    )
    sent = fake_azureml.last_body("PUT", "/computes/gpu-cluster")["properties"]
    assert sent["computeType"] == "AmlCompute"
    assert sent["properties"]["scaleSettings"] == {
        "maxNodeCount": 2,
        "minNodeCount": 0,
        "nodeIdleTimeBeforeScaleDown": "PT2M",
    }


def test_data_asset_round_trip(fake_azureml: FakeAzureML, client: MLClient) -> None:
    path = "azureml://datastores/workspaceblobstore/paths/datasets/abc/"

    client.data.create_or_update(Data(path=path, type="uri_folder", name="qa-train", version="7"))

    got = client.data.get("qa-train", "7")
    assert (got.path, got.type) == (path, "uri_folder")
    sent = fake_azureml.last_body("PUT", "/data/qa-train/versions/7")["properties"]
    assert (sent["dataUri"], sent["dataType"]) == (path, "uri_folder")


def test_model_register_list_and_retag(fake_azureml: FakeAzureML, client: MLClient) -> None:
    model = Model(
        name="qa-model",
        version="1",
        path="azureml://jobs/fixed-name/outputs/model",
        type="custom_model",
        tags={"stage": "candidate"},
        properties={"rougeL": "0.41"},
    )
    client.models.create_or_update(model)
    client.models.create_or_update(
        Model(name="qa-model", version="2", path="azureml://jobs/j2/outputs/model")
    )

    registered = client.models.get("qa-model", "1")
    registered.tags["stage"] = "production"
    client.models.create_or_update(registered)

    assert client.models.get("qa-model", "1").tags == {"stage": "production"}
    assert sorted(m.version for m in client.models.list("qa-model")) == ["1", "2"]
    first = fake_azureml.bodies("PUT", "/models/qa-model/versions/1")[0]["properties"]
    assert first["modelUri"] == "azureml://jobs/fixed-name/outputs/model"
    assert (first["modelType"], first["properties"]) == ("custom_model", {"rougeL": "0.41"})
    assert fake_azureml.models[("qa-model", "1")]["properties"]["jobName"] == "fixed-name"


def test_a_model_version_keeps_its_path(client: MLClient) -> None:
    client.models.create_or_update(
        Model(name="m", version="1", path="azureml://jobs/a/outputs/model")
    )

    with pytest.raises(HttpResponseError, match="Asset paths cannot be updated"):
        client.models.create_or_update(
            Model(name="m", version="1", path="azureml://jobs/b/outputs/model")
        )


# ---- online endpoints and deployments


def _deployment(name: str, code: Path) -> ManagedOnlineDeployment:
    return ManagedOnlineDeployment(
        name=name,
        endpoint_name="qa-ep",
        model="azureml:qa-model:1",
        environment=Environment(image=IMAGE),
        code_configuration=CodeConfiguration(code=str(code), scoring_script="score.py"),
        instance_type="Standard_DS3_v2",
        instance_count=1,
        request_settings=OnlineRequestSettings(request_timeout_ms=90000),
        liveness_probe=ProbeSettings(initial_delay=600),
        readiness_probe=ProbeSettings(initial_delay=600),
    )


@pytest.fixture
def serving_code(tmp_path: Path) -> Path:
    code = tmp_path / "serving"
    code.mkdir()
    (code / "score.py").write_text("def init():\n    pass\n\n\ndef run(raw):\n    return raw\n")
    return code


@pytest.fixture
def endpoint_with_blue_and_green(
    fake_azureml_on_azurite: FakeAzureML, serving_code: Path
) -> MLClient:
    client = ml_client(fake_azureml_on_azurite)
    client.models.create_or_update(
        Model(name="qa-model", version="1", path="azureml://jobs/j/outputs/model")
    )
    client.online_endpoints.begin_create_or_update(
        ManagedOnlineEndpoint(name="qa-ep", auth_mode="key")
    ).result()
    for colour in ("blue", "green"):
        client.online_deployments.begin_create_or_update(_deployment(colour, serving_code)).result()
    return client


def test_endpoint_create_get_and_keys(fake_azureml: FakeAzureML, client: MLClient) -> None:
    created = client.online_endpoints.begin_create_or_update(
        ManagedOnlineEndpoint(name="qa-ep", auth_mode="key")
    ).result()

    assert created.provisioning_state == "Succeeded"
    assert (
        client.online_endpoints.get("qa-ep").scoring_uri
        == "https://qa-ep.eastus.inference.ml.azure.com/score"
    )
    assert client.online_endpoints.get_keys("qa-ep").primary_key == "qa-ep-key-1"
    assert (
        fake_azureml.last_body("PUT", "/onlineEndpoints/qa-ep")["properties"]["authMode"] == "Key"
    )


@pytest.mark.slow
def test_deployment_payload_and_get(
    endpoint_with_blue_and_green: MLClient, fake_azureml_on_azurite: FakeAzureML
) -> None:
    fake = fake_azureml_on_azurite

    green = endpoint_with_blue_and_green.online_deployments.get("green", "qa-ep")

    assert (green.instance_type, green.instance_count, green.provisioning_state) == (
        "Standard_DS3_v2",
        1,
        "Succeeded",
    )
    body = fake.last_body("PUT", "/onlineEndpoints/qa-ep/deployments/green")
    assert body["sku"] == {"name": "Default", "capacity": 1}
    properties = body["properties"]
    assert properties["model"].endswith("/models/qa-model/versions/1")
    assert properties["codeConfiguration"]["scoringScript"] == "score.py"
    assert properties["requestSettings"] == {"requestTimeout": "PT1M30S"}
    assert properties["livenessProbe"] == {"initialDelay": "PT10M"}
    assert properties["readinessProbe"] == {"initialDelay": "PT10M"}


@pytest.mark.slow
def test_traffic_and_mirror_traffic_update(
    endpoint_with_blue_and_green: MLClient, fake_azureml_on_azurite: FakeAzureML
) -> None:
    client = endpoint_with_blue_and_green
    endpoint = client.online_endpoints.get("qa-ep")
    endpoint.traffic = {"blue": 90, "green": 10}
    endpoint.mirror_traffic = {"green": 20}

    updated = client.online_endpoints.begin_create_or_update(endpoint).result()

    assert (updated.traffic, updated.mirror_traffic) == ({"blue": 90, "green": 10}, {"green": 20})
    sent = fake_azureml_on_azurite.last_body("PUT", "/onlineEndpoints/qa-ep")["properties"]
    assert (sent["traffic"], sent["mirrorTraffic"]) == ({"blue": 90, "green": 10}, {"green": 20})


@pytest.mark.slow
def test_traffic_that_does_not_add_up_is_refused(endpoint_with_blue_and_green: MLClient) -> None:
    endpoint = endpoint_with_blue_and_green.online_endpoints.get("qa-ep")
    endpoint.traffic = {"blue": 90, "green": 20}

    with pytest.raises(HttpResponseError, match="sum to 0 or 100, got 110"):
        endpoint_with_blue_and_green.online_endpoints.begin_create_or_update(endpoint).result()


@pytest.mark.slow
def test_invoke_scores_on_the_named_deployment(
    endpoint_with_blue_and_green: MLClient, fake_azureml_on_azurite: FakeAzureML, tmp_path: Path
) -> None:
    fake = fake_azureml_on_azurite
    fake.scorer = lambda deployment, body: {"answer": f"{deployment}:{body['question']}"}
    request = tmp_path / "request.json"
    request.write_text(json.dumps({"question": "when?"}))

    answer = endpoint_with_blue_and_green.online_endpoints.invoke(
        "qa-ep", request_file=str(request), deployment_name="green"
    )

    assert json.loads(answer) == {"answer": "green:when?"}
    scored = fake.requests[-1]
    assert (scored.host, scored.headers["authorization"]) == (
        "qa-ep.eastus.inference.ml.azure.com",
        "Bearer qa-ep-key-1",
    )


@pytest.mark.slow
def test_deployment_logs_and_delete(
    endpoint_with_blue_and_green: MLClient, fake_azureml_on_azurite: FakeAzureML
) -> None:
    client = endpoint_with_blue_and_green
    fake = fake_azureml_on_azurite
    fake.deployment_logs[("qa-ep", "green")] = "booting\nready\n"

    assert client.online_deployments.get_logs("green", "qa-ep", lines=1) == "ready"
    client.online_deployments.begin_delete("green", "qa-ep").result()

    assert [d.name for d in client.online_deployments.list("qa-ep")] == ["blue"]


@pytest.mark.slow
def test_a_deployment_with_live_traffic_cannot_be_deleted(
    endpoint_with_blue_and_green: MLClient,
) -> None:
    client = endpoint_with_blue_and_green
    endpoint = client.online_endpoints.get("qa-ep")
    endpoint.traffic = {"blue": 100}
    client.online_endpoints.begin_create_or_update(endpoint).result()

    with pytest.raises(HttpResponseError, match="takes 100% of traffic"):
        client.online_deployments.begin_delete("blue", "qa-ep").result()


# ---- gaps fail loudly


@pytest.mark.slow
def test_blob_reads_bypassing_the_fake_are_refused(
    fake_azureml: FakeAzureML, azurite_account: BlobAccount, tmp_path: Path
) -> None:
    fake_azureml.blob = azurite_account  # but datastore URLs not routed to Azurite
    _seed_job_dependencies(fake_azureml)
    client = ml_client(fake_azureml)
    client.jobs.create_or_update(_training_job(None))
    fake_azureml.set_job_status("fixed-name", "Completed")

    with pytest.raises(
        UnexpectedRequestError,
        match=r"devstoreaccount1\.blob\.core\.windows\.net was contacted outside",
    ):
        client.jobs.download("fixed-name", output_name="model", download_path=tmp_path)


def test_an_unknown_request_raises_with_its_url(
    fake_azureml: FakeAzureML, client: MLClient
) -> None:
    with pytest.raises(UnexpectedRequestError, match="/batchEndpoints/nightly"):
        client.batch_endpoints.get("nightly")

    assert len(fake_azureml.unhandled) == 1
    fake_azureml.unhandled.clear()
