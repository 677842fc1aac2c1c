"""The Azure ML backends through a real `MLClient` whose transport answers like the service.

Submit → follow → fetch → register → roll out, checking the request payloads the SDK sent; code
and data uploads and the model download go to a real Azurite.
"""

from __future__ import annotations

import json
import random
import shutil
import sys
import threading
from pathlib import Path
from typing import Any

import httpx
import pytest
from azure.ai.ml.operations._run_history_constants import RunHistoryConstants
from azure.core.exceptions import HttpResponseError, ResourceNotFoundError, ServiceRequestError

from platforms.azureml.client import retrying
from platforms.azureml.config import AzureMLConfig
from platforms.azureml.endpoint import AzureMLEndpointBackend
from platforms.azureml.entities import job_output
from platforms.azureml.registry import AzureMLRegistry
from platforms.azureml.training import AzureMLTrainingBackend
from platforms.lineage import Lineage
from platforms.training import TrainSpec
from serving.api import DEPLOYMENT_HEADER
from tasks.records import TaskType
from tasks.rollout import RolloutConfig, roll_back_to_previous, run_rollout
from tasks.train import train_until_done
from tests.azureml.fake_service import FakeAzureML, ml_client

IMAGE = "mcr.microsoft.com/azureml/curated/acft-hf-nlp-gpu:latest"
CONFIG = AzureMLConfig.model_validate(
    {
        "compute": {"name": "a100-x4", "size": "Standard_NC96ads_A100_v4", "max_nodes": 2},
        "environment": {"image": IMAGE},
        "launch": {"instance_count": 2, "gpus_per_node": 4, "accelerate_config": "fsdp"},
        "endpoint": {"name": "tunegate-qa", "environment": {"image": IMAGE}},
    }
)
CONTENT_HASH = "ab12cd34ef56ab12cd34ef56ab12cd34"


@pytest.fixture
def split_dir(tmp_path: Path) -> Path:
    split = tmp_path / "datasets" / "split" / CONTENT_HASH
    for part in ("train", "validation", "test"):
        (split / part).mkdir(parents=True)
        (split / part / "part-00000.parquet").write_bytes(b"PAR1 not really")
    (split / "manifest.json").write_text(json.dumps({"content_hash": CONTENT_HASH}))
    return split


@pytest.fixture
def spec(split_dir: Path) -> TrainSpec:
    return TrainSpec(
        name="train-0123456789abcdef0123",
        data_dir=str(split_dir),
        args={"task": "extractive-qa", "model": "microsoft/deberta-v3-base", "lora": True},
    )


def _backend(fake: FakeAzureML, tmp_path: Path) -> AzureMLTrainingBackend:
    return AzureMLTrainingBackend(ml_client(fake), CONFIG, tmp_path / "jobs", poll_seconds=0.01)


@pytest.mark.slow
def test_submit_creates_the_cluster_registers_the_split_and_sends_the_job(
    fake_azureml_on_azurite: FakeAzureML, tmp_path: Path, spec: TrainSpec
) -> None:
    fake = fake_azureml_on_azurite
    job = _backend(fake, tmp_path).submit(spec)
    assert (job.name, job.status, job.reused) == (spec.name, "running", False)

    cluster = fake.last_body("PUT", "/computes/a100-x4")["properties"]
    assert cluster["properties"]["vmSize"] == "Standard_NC96ads_A100_v4"
    assert cluster["properties"]["scaleSettings"]["maxNodeCount"] == 2
    data = fake.last_body("PUT", f"/data/tunegate-split/versions/{CONTENT_HASH}")["properties"]
    assert data["dataType"] == "uri_folder"  # the split, uploaded, versioned by content hash

    sent = fake.last_body("PUT", f"/jobs/{spec.name}")["properties"]
    assert sent["jobType"] == "Command"
    assert sent["distribution"] == {"distributionType": "PyTorch", "processCountPerInstance": 1}
    assert sent["resources"]["instanceCount"] == 2
    assert sent["computeId"].endswith("/computes/a100-x4")
    assert sent["inputs"]["data"]["uri"].endswith(f"/data/tunegate-split/versions/{CONTENT_HASH}")
    assert sent["outputs"]["model"]["mode"] == "Upload"
    assert sent["command"].startswith("accelerate launch --config_file trainer/configs/fsdp.yaml")
    assert "--machine_rank $NODE_RANK" in sent["command"]
    assert "--model microsoft/deberta-v3-base" in sent["command"]
    assert sent["experimentName"] == "tunegate"
    assert sent["environmentVariables"]["PYTHONUNBUFFERED"] == "1"
    [environment] = [
        r.body["properties"]
        for r in fake.requests
        if r.method == "PUT"
        and "/environments/" in r.path
        and r.path.endswith(sent["environmentId"].rsplit("/environments/", 1)[1])
    ]
    assert environment["image"] == IMAGE  # the configured training container


@pytest.mark.slow
def test_a_retried_submit_reattaches_and_only_a_failed_job_is_submitted_again(
    fake_azureml_on_azurite: FakeAzureML, tmp_path: Path, spec: TrainSpec
) -> None:
    fake = fake_azureml_on_azurite
    backend = _backend(fake, tmp_path)
    backend.submit(spec)
    fake.set_job_status(spec.name, "Running")
    again = backend.submit(spec)
    assert again.reused and again.name == spec.name
    assert len(fake.bodies("PUT", f"/jobs/{spec.name}")) == 1  # not submitted twice
    assert len(fake.bodies("PUT", "/computes/a100-x4")) == 1  # the cluster exists now

    fake.set_job_status(spec.name, "Failed")
    retry = backend.submit(spec)
    assert (retry.name, retry.reused) == (f"{spec.name}-r2", False)
    # the same data version is reused, not uploaded again
    assert len(fake.bodies("PUT", f"/data/tunegate-split/versions/{CONTENT_HASH}")) == 1


@pytest.mark.slow
def test_wait_streams_the_log_into_the_run_and_fetch_downloads_the_model(
    fake_azureml_on_azurite: FakeAzureML,
    tmp_path: Path,
    spec: TrainSpec,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(RunHistoryConstants, "_WAIT_COMPLETION_POLLING_INTERVAL_MIN", 0)
    fake = fake_azureml_on_azurite
    backend = _backend(fake, tmp_path)
    job = backend.submit(spec)
    fake.write_log(spec.name, "user_logs/std_log.txt", "step 10 loss 1.23\nstep 20 loss 0.87\n")
    fake.progress_job(spec.name, "Queued", "Running", "Running", "Completed")
    lines: list[str] = []
    done = backend.wait(job, lines.append)
    assert done.status == "completed"
    assert any("step 20 loss 0.87" in line for line in lines)  # the job's own log lines
    assert f"job {spec.name}: Completed" in lines

    fake.write_job_output(spec.name, "model", {"model_info.json": b'{"task": "extractive-qa"}'})
    model_dir = backend.fetch_outputs(done)
    assert json.loads((model_dir / "model_info.json").read_text()) == {"task": "extractive-qa"}
    assert backend.fetch_outputs(done) == model_dir  # downloaded once


@pytest.mark.slow
def test_an_interrupted_wait_cancels_the_job(
    fake_azureml_on_azurite: FakeAzureML, tmp_path: Path, spec: TrainSpec
) -> None:
    fake = fake_azureml_on_azurite
    backend = _backend(fake, tmp_path)
    job = backend.submit(spec)
    fake.set_job_status(spec.name, "Running")

    def interrupted(line: str) -> None:
        raise KeyboardInterrupt  # what Prefect's SIGTERM bridge does to a cancelled run

    with pytest.raises(KeyboardInterrupt):
        backend.wait(job, interrupted)
    assert f"POST {{ws}}/jobs/{spec.name}/cancel" in fake.calls()
    assert backend.status(job) in ("running", "cancelled")  # CancelRequested, then Canceled


@pytest.mark.slow
def test_a_failed_job_is_an_error_naming_the_job(
    fake_azureml_on_azurite: FakeAzureML, tmp_path: Path, spec: TrainSpec
) -> None:
    backend = _backend(fake_azureml_on_azurite, tmp_path)
    job = backend.submit(spec)
    fake_azureml_on_azurite.set_job_status(spec.name, "Failed")
    assert backend.status(job) == "failed"
    with pytest.raises(RuntimeError, match=spec.name):
        backend.fetch_outputs(job.model_copy(update={"status": "failed"}))


PREEMPTED = (
    "AzureMLCompute job failed. PreemptionError: Nodes of this job got pre-empted. Check if the "
    "run has failed or restarted. Reason: Received pre-emption warning signal"
)  # what Azure ML reports for a job on a preempted low-priority node


EXITED = (
    "Execution failed. User process 'python' exited with status code 1. Please check log file "
    "'user_logs/std_log.txt' for more details."
)


@pytest.mark.slow
def test_a_preempted_job_is_submitted_again_within_the_run_and_its_rerun_completes(
    fake_azureml_on_azurite: FakeAzureML,
    tmp_path: Path,
    spec: TrainSpec,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The job's node is preempted mid-training: the run's wait reads Azure ML's error, submits
    the job again as `<name>-r2` over the same checkpoint folder (it resumes there), waits for
    it and fetches its model. A job whose trainer raised is not submitted again."""
    monkeypatch.setattr(RunHistoryConstants, "_WAIT_COMPLETION_POLLING_INTERVAL_MIN", 0)
    fake = fake_azureml_on_azurite
    backend = _backend(fake, tmp_path)
    fake.fail_job(spec.name, "UserError", PREEMPTED, "Queued", "Running", "Running")
    rerun = f"{spec.name}-r2"
    fake.progress_job(rerun, "Queued", "Running", "Running", "Completed")
    fake.write_job_output(rerun, "model", {"model_info.json": b'{"task": "extractive-qa"}'})
    said: list[str] = []

    job = train_until_done(backend, spec, 2, lambda _: None, said.append)

    assert (job.name, job.status) == (rerun, "completed")
    assert len(said) == 1 and f"training job {spec.name} failed: a cause outside" in said[0]
    assert "PreemptionError" in said[0] and "submitting it again (1 of 2" in said[0]
    first, again = (
        fake.last_body("PUT", f"/jobs/{name}")["properties"] for name in job_names(spec)
    )
    assert again["outputs"]["checkpoints"]["uri"] == first["outputs"]["checkpoints"]["uri"]
    assert again["command"] == first["command"]  # the same trainer arguments: it resumes
    assert json.loads((backend.fetch_outputs(job) / "model_info.json").read_text())

    # the trainer's own error: the same job would fail again, and the run says so
    broken = spec.model_copy(update={"name": "train-broken"})
    fake.fail_job(broken.name, "UserError", EXITED, "Running", "Running", "Running")
    fake.write_log(
        broken.name,
        "user_logs/std_log.txt",
        'Traceback (most recent call last):\n  File "trainer/train.py", line 9\n'
        "[rank0]: ValueError: --max-length 1 is shorter than the question\n",
    )
    said.clear()
    with pytest.raises(RuntimeError, match="train-broken is failed"):
        train_until_done(backend, broken, 2, lambda _: None, said.append)
    assert len(said) == 1 and "the trainer raised ValueError" in said[0], said
    assert fake.bodies("PUT", "/jobs/train-broken-r2") == []


def job_names(spec: TrainSpec) -> tuple[str, str]:
    return spec.name, f"{spec.name}-r2"


def test_only_transient_errors_are_retried() -> None:
    calls: list[int] = []

    def flaky() -> str:
        calls.append(1)
        if len(calls) < 3:
            error = HttpResponseError(message="busy")
            error.status_code = 503
            raise error
        return "ok"

    waits: list[float] = []
    assert retrying(flaky, "flaky", sleep=waits.append) == "ok"
    assert waits == [2.0, 4.0]  # exponential backoff

    def network() -> None:
        raise ServiceRequestError("connection reset")

    with pytest.raises(ServiceRequestError):
        retrying(network, "network", attempts=2, sleep=waits.append)

    def missing() -> None:
        raise ResourceNotFoundError("no such job")

    waits.clear()
    with pytest.raises(ResourceNotFoundError):
        retrying(missing, "missing", sleep=waits.append)
    assert waits == []  # an answer, not an accident


# ---- registry


def _registered(fake: FakeAzureML, tmp_path: Path, jobs: list[str]) -> AzureMLRegistry:
    registry = AzureMLRegistry(ml_client(fake), tmp_path / "models")
    for number, job in enumerate(jobs, start=1):
        registry.register(
            "tunegate-qa",
            job_output(job),
            {"f1": 80.0 + number},
            Lineage(training_job=job, datasets={"split": CONTENT_HASH}, flow_run_id=f"r{number}"),
        )
    return registry


def test_registry_registers_job_outputs_with_lineage_and_moves_aliases_as_tags(
    fake_azureml: FakeAzureML, tmp_path: Path
) -> None:
    registry = _registered(fake_azureml, tmp_path, ["train-a", "train-b"])
    sent = fake_azureml.last_body("PUT", "/models/tunegate-qa/versions/2")["properties"]
    assert sent["modelUri"].endswith("jobs/train-b/outputs/model")
    assert sent["modelType"] == "custom_model"
    assert sent["tags"]["training_job"] == "train-b"

    v1, v2 = registry.versions("tunegate-qa")
    assert (v1.version, v2.version) == (1, 2)
    assert v2.path == "azureml:tunegate-qa:2"
    assert v2.metrics == {"f1": 82.0}
    assert v2.lineage.datasets == {"split": CONTENT_HASH}  # nested lineage kept whole

    registry.set_alias("tunegate-qa", "champion", 1)
    registry.set_alias("tunegate-qa", "champion", 2)
    assert registry.alias("tunegate-qa", "champion") == registry.get("tunegate-qa", 2)
    assert registry.previous("tunegate-qa", "champion") == registry.get("tunegate-qa", 1)
    tags = {v: fake_azureml.models[("tunegate-qa", v)]["properties"]["tags"] for v in ("1", "2")}
    assert (tags["1"]["alias.champion"], tags["2"]["alias.champion"]) == ("false", "true")
    with pytest.raises(KeyError, match="version 9"):
        registry.set_alias("tunegate-qa", "champion", 9)
    with pytest.raises(KeyError):
        registry.get("tunegate-qa", 9)


def test_registry_registers_a_training_job_once(fake_azureml: FakeAzureML, tmp_path: Path) -> None:
    registry = _registered(fake_azureml, tmp_path, ["train-a", "train-a", "train-b"])
    assert [v.lineage.training_job for v in registry.versions("tunegate-qa")] == [
        "train-a",
        "train-b",
    ]  # the second train-a got version 1 back; nothing was sent for it
    assert [k for k in fake_azureml.models] == [("tunegate-qa", "1"), ("tunegate-qa", "2")]


# ---- endpoint and rollout


class _Router:
    """Azure ML's inference router in front of the fake: key auth, the deployment header or a
    weighted pick by traffic, and the answering deployment in the response header."""

    def __init__(self, fake: FakeAzureML, endpoint: str) -> None:
        self.fake, self.endpoint = fake, endpoint
        self.random = random.Random(7)
        self.failing: set[str] = set()
        self.answers: dict[str, str] = {}

    def __call__(self, request: httpx.Request) -> httpx.Response:
        keys = self.fake.endpoint_keys[self.endpoint].values()
        if request.headers.get("authorization") not in {f"Bearer {k}" for k in keys}:
            return httpx.Response(401, json={"message": "wrong key"})
        traffic = self.fake.endpoints[self.endpoint]["properties"].get("traffic") or {}
        live = {name: weight for name, weight in traffic.items() if weight}
        deployment = (
            request.headers.get(DEPLOYMENT_HEADER)
            or self.random.choices(list(live), weights=list(live.values()))[0]
        )
        headers = {DEPLOYMENT_HEADER: deployment}
        if deployment in self.failing:
            return httpx.Response(500, json={"message": "model crashed"}, headers=headers)
        question = json.loads(request.content)["question"]
        return httpx.Response(200, json={"answer": self.answers[question]}, headers=headers)


SAMPLES = [
    {"request": {"question": f"Who wrote report {i}?", "context": "..."}, "expected": f"Ada {i}"}
    for i in range(4)
]
POLICY = RolloutConfig(steps=[10, 50, 100], hold_requests=8, min_requests=4, hold_seconds=30)


def _endpoint(fake: FakeAzureML, tmp_path: Path) -> tuple[AzureMLEndpointBackend, _Router]:
    router = _Router(fake, CONFIG.endpoint.name)
    router.answers = {s["request"]["question"]: s["expected"] for s in SAMPLES}
    backend = AzureMLEndpointBackend(
        ml_client(fake),
        CONFIG.endpoint,
        tmp_path / "endpoint",
        http=httpx.Client(transport=httpx.MockTransport(router)),
    )
    return backend, router


@pytest.mark.slow
def test_rollout_promotes_through_canary_steps_and_retires_the_old_deployment(
    fake_azureml_on_azurite: FakeAzureML, tmp_path: Path
) -> None:
    fake = fake_azureml_on_azurite
    registry = _registered(fake, tmp_path, ["train-a", "train-b"])
    backend, _ = _endpoint(fake, tmp_path)
    assert oct(Path(backend.key_file).stat().st_mode & 0o777) == "0o600"
    v1, v2 = registry.versions("tunegate-qa")

    first = run_rollout(backend, registry, v1, "extractive-qa", SAMPLES, POLICY)
    assert first.outcome == "promoted"
    second = run_rollout(backend, registry, v2, "extractive-qa", SAMPLES, POLICY)
    assert second.outcome == "promoted"

    updates = [
        b["properties"].get("traffic") or {}
        for b in fake.bodies("PUT", "/onlineEndpoints/tunegate-qa")
    ]
    steps = [(t.get("green", 0), t.get("blue", 0)) for t in updates if t.get("green")]
    assert steps == [(10, 90), (50, 50), (100, 0)], updates  # the canary, step by step
    assert ("tunegate-qa", "blue") not in fake.deployments  # deleted once at 0%
    deployment = fake.last_body("PUT", "/onlineEndpoints/tunegate-qa/deployments/green")
    properties = deployment["properties"]
    assert properties["model"].endswith("/models/tunegate-qa/versions/2")
    assert properties["instanceType"] == CONFIG.endpoint.instance_type
    assert properties["readinessProbe"]["initialDelay"] == "PT10M"  # 600 s for slow loaders
    assert properties["requestSettings"]["requestTimeout"] == "PT1M30S"
    assert registry.alias("tunegate-qa", "champion") == v2
    status = backend.status()
    assert [(d.name, d.traffic, d.version) for d in status.deployments] == [
        ("green", 100, "tunegate-qa:2")
    ]


@pytest.mark.slow
def test_a_failing_canary_rolls_back_and_a_manual_rollback_returns_to_the_old_champion(
    fake_azureml_on_azurite: FakeAzureML, tmp_path: Path
) -> None:
    fake = fake_azureml_on_azurite
    registry = _registered(fake, tmp_path, ["train-a", "train-b", "train-c"])
    backend, router = _endpoint(fake, tmp_path)
    v1, v2, v3 = registry.versions("tunegate-qa")
    run_rollout(backend, registry, v1, "extractive-qa", SAMPLES, POLICY)
    run_rollout(backend, registry, v2, "extractive-qa", SAMPLES, POLICY)  # green live

    router.failing = {"blue"}  # the new version crashes on live traffic (smoke passes first)

    record = run_rollout(backend, registry, v3, "extractive-qa", SAMPLES, _lenient_smoke(POLICY))
    assert record.outcome == "rolled-back"
    assert fake.endpoints["tunegate-qa"]["properties"]["traffic"] == {"green": 100}
    assert ("tunegate-qa", "blue") not in fake.deployments
    assert registry.alias("tunegate-qa", "champion") == v2  # aliases unchanged

    router.failing = set()
    manual = roll_back_to_previous(backend, registry, "tunegate-qa")
    assert registry.alias("tunegate-qa", "champion") == v1
    live = [d for d in backend.status().deployments if d.traffic == 100]
    assert [d.version for d in live] == ["tunegate-qa:1"]
    assert manual.outcome == "rolled-back"


def _lenient_smoke(policy: RolloutConfig) -> RolloutConfig:
    return policy.model_copy(update={"smoke_min_agreement": 0.0})


@pytest.mark.slow
def test_a_deployment_with_traffic_is_never_deleted(
    fake_azureml_on_azurite: FakeAzureML, tmp_path: Path
) -> None:
    fake = fake_azureml_on_azurite
    registry = _registered(fake, tmp_path, ["train-a"])
    backend, _ = _endpoint(fake, tmp_path)
    run_rollout(backend, registry, registry.get("tunegate-qa", 1), "extractive-qa", SAMPLES, POLICY)
    with pytest.raises(ValueError, match="still takes 100%"):
        backend.delete("blue")
    with pytest.raises(ValueError, match="at most 50%"):
        backend.set_traffic({"blue": 100}, {"green": 60})


def _azure_backends(
    fake: FakeAzureML, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, registry: str = "local"
) -> Any:
    """A run's Backends with training (and `registry`) on Azure ML, whose MLClient talks to
    `fake`."""
    from platforms.azureml import client
    from platforms.backends import Backends, BackendSettings

    monkeypatch.setattr(RunHistoryConstants, "_WAIT_COMPLETION_POLLING_INTERVAL_MIN", 0)
    monkeypatch.setattr(client, "connect", lambda workspace: ml_client(fake))
    return Backends(
        BackendSettings(
            store=str(tmp_path / "store"), azureml=CONFIG, training="azureml", registry=registry
        )
    )


def test_azure_ml_training_tracks_runs_in_the_workspace_s_mlflow_by_default(
    fake_azureml: FakeAzureML, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without tracking.uri, a run trained on Azure ML is tracked in the workspace's own MLflow:
    the `mlflowTrackingUri` the workspace reports, which MLflow opens through the azureml-mlflow
    plugin (its tracking and registry stores, on that workspace's API; nothing sent yet)."""
    from azureml.mlflow._internal.service_context_loader import _AzureMLServiceContextLoader
    from azureml.mlflow._store.model_registry.model_registry import AzureMLflowModelRegistry
    from azureml.mlflow._store.tracking.store import AzureMLRestStore

    from platforms import tracking
    from tests.azureml import fake_shapes as shapes

    monkeypatch.setattr(_AzureMLServiceContextLoader, "_tracking_uri_to_service_context", {})
    backends = _azure_backends(fake_azureml, tmp_path, monkeypatch)

    uri = backends.tracking_uri  # as the SDK hands the workspace's mlFlowTrackingUri
    assert uri.startswith(f"azureml://{shapes.API_HOST}/mlflow/") and uri.endswith(
        shapes.WORKSPACE_ID
    )
    assert [r.method for r in fake_azureml.requests if r.path == shapes.WORKSPACE_ID] == ["GET"]
    assert backends.tracking_artifact_root is None  # the workspace's artifact store
    client = tracking.client(uri)
    store = client._tracking_client.store
    assert isinstance(store, AzureMLRestStore)
    assert isinstance(client._get_registry_client().store, AzureMLflowModelRegistry)
    workspace = store.service_context
    assert workspace.host_url == f"https://{shapes.API_HOST}"
    assert workspace._get_scope() == shapes.WORKSPACE_ID
    assert len(fake_azureml.requests) == 1  # the plugin asked nothing of the service
    # the Prefect artifact's link: the run's page in the studio, as the jobs' own studio links
    run = tracking.TrackedRun(client, uri, "7", "run-1")
    assert run.link == f"https://ml.azure.com/runs/run-1?wsid={shapes.WORKSPACE_ID}"


@pytest.mark.slow
def test_the_train_stage_runs_on_azure_ml_when_the_config_says_so(
    fake_azureml_on_azurite: FakeAzureML,
    tmp_path: Path,
    split_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from platforms.manifest import DatasetRef
    from tasks.train import TrainConfig, job_name, run_training

    fake = fake_azureml_on_azurite
    backends = _azure_backends(fake, tmp_path, monkeypatch)
    split = DatasetRef(
        uri=str(split_dir),
        stage="split",
        task="extractive-qa",
        key="k",
        content_hash=CONTENT_HASH,
        counts={"train": 1},
    )
    config = TrainConfig(backend="azureml", model="microsoft/deberta-v3-base", epochs=1)
    name = job_name(split, config)
    fake.progress_job(name, "Queued", "Running", "Completed")
    fake.write_job_output(
        name,
        "model",
        {"model_info.json": b'{"task": "extractive-qa"}', "merged/model.safetensors": b"w"},
    )

    lines: list[str] = []
    job = run_training(backends.training, split, config, lines.append)
    assert (job.backend, job.status, job.name) == ("azureml", "completed", name)
    assert (Path(job.output_dir) / "model_info.json").is_file()  # evaluated here, next stage
    assert not (Path(job.output_dir) / "merged").exists()  # the weights stay in the job output
    assert Path(job.output_dir).is_relative_to(tmp_path / "store" / "jobs")
    # a local registry keeps a copy of the model: only then the weights come here, once
    source = backends.model_source(job.output_dir, name)
    assert source == Path(job.output_dir) and (source / "merged" / "model.safetensors").is_file()
    assert f"job {name}: Completed" in lines
    sent = fake.last_body("PUT", f"/jobs/{name}")["properties"]
    # hyperparameters are the job's inputs (shown per job in the studio), bound in the command
    assert "--epochs '${{inputs.epochs}}'" in sent["command"]
    assert "--task '${{inputs.task}}'" in sent["command"]
    literals = {k: v.get("value") for k, v in sent["inputs"].items() if k != "data"}
    assert literals["epochs"] == "1.0" and literals["task"] == "extractive-qa", sent["inputs"]
    assert {v["jobInputType"] for k, v in sent["inputs"].items() if k != "data"} == {"literal"}


def test_log_lines_of_the_streaming_thread_go_to_the_run_and_stdout_comes_back(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from platforms.azureml.job_logs import thread_stdout

    original, lines = sys.stdout, []

    def stream() -> None:
        with thread_stdout(lines.append):
            print("step 1 loss 2.0")
            sys.stdout.write("step 2 loss")
            other = threading.Thread(target=lambda: print("a line of another thread"))
            other.start()
            other.join()
            sys.stdout.write(" 1.5")  # no newline: still delivered when streaming stops

    streamer = threading.Thread(target=stream)
    streamer.start()
    streamer.join()
    assert lines == ["step 1 loss 2.0", "step 2 loss 1.5"]
    assert "a line of another thread" in capsys.readouterr().out  # other threads untouched
    assert sys.stdout is original  # not left wrapped for the rest of the process


@pytest.mark.slow
def test_the_evaluate_stage_predicts_in_an_azure_ml_job_and_gates_here(
    fake_azureml_on_azurite: FakeAzureML,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    qa_model_dir: Path,
    prefect_api: None,
) -> None:
    """evaluate.backend azureml (the default under train.backend azureml): the models predict in
    an evaluation job of the training job's output; the gate here scores its predictions (a job
    that wrote no scores or screen, as one of an older tunegate: scored and screened here). The
    serving runtime is exported and scored here from the downloaded output, and the model is
    registered in Azure ML from the folder staged with its file (not the job's output)."""
    from platforms.azureml.training import evaluation_job_name
    from platforms.training import TrainingJob
    from screening.config import ScreenConfig
    from serving import runtimes
    from tasks.evaluate import EvaluateConfig, evaluate_task
    from tasks.register import register_task
    from tasks.serving_choice import ServingConfig
    from tests.trainer.tiny import qa_record
    from trainer.args import PACKAGED_MODEL

    fake = fake_azureml_on_azurite
    backends = _azure_backends(fake, tmp_path, monkeypatch, registry="azureml")
    split = _qa_split_with_test(tmp_path)
    job = TrainingJob(
        name="train-x",
        backend="azureml",
        status="completed",
        output_dir=str(qa_model_dir),
        log_path="studio",
        reused=False,
    )
    test = [qa_record(i) for i in range(4, 10)]
    made = {
        "task": "extractive-qa",
        "test_records": 6,
        "predictions": {
            "base": ["Porto"] * 6,
            "candidate": [r["answers"]["text"][0] for r in test],
            "champion": None,
        },
    }
    screen = ScreenConfig().model_dump(mode="json")
    name = evaluation_job_name(split.uri, "train-x", None, PACKAGED_MODEL, 0, 32, "auto", screen)
    fake.progress_job(name, "Queued", "Running", "Completed")
    fake.write_job_output(name, "evaluation", {"predictions.json": json.dumps(made).encode()})

    serving = ServingConfig(runtime="onnx", max_quality_loss=100.0)  # whatever ONNX scores
    report = evaluate_task.fn(
        backends,
        split,
        job,
        "tunegate-qa",
        EvaluateConfig(min_gain_over_base=20, min_test_records=6),
        ScreenConfig(),
        serving,
    )

    sent = fake.last_body("PUT", f"/jobs/{name}")["properties"]
    assert "python -m trainer.evaluate" in sent["command"]
    assert sent["inputs"]["candidate"]["uri"] == "azureml://jobs/train-x/outputs/model"
    assert (report.base["f1"], report.candidate["f1"]) == (0.0, 100.0)
    assert report.gate.passed and report.test_records == 6 and report.pii_leaks == 0
    assert report.serving is not None and report.serving.runtime == "onnx"
    assert set(report.serving.scores) == {"torch", "onnx"}

    version = register_task.fn(
        backends,
        "tunegate-qa",
        job.output_dir,
        report.candidate,
        Lineage(training_job="train-x"),
        promote=False,
        serving=report.serving,
    )
    sent = fake.last_body("PUT", f"/models/tunegate-qa/versions/{version.version}")["properties"]
    assert "jobs/train-x" not in sent["modelUri"]  # uploaded: the job's output has no ONNX file
    folder = sent["modelUri"].split("/paths/", 1)[1].rstrip("/")  # in the workspace's datastore
    blobs = fake.blob.service().get_container_client(fake.container)
    names = {n.removeprefix(folder + "/") for n in blobs.list_blob_names(name_starts_with=folder)}
    assert {runtimes.SERVING_FILE, f"{runtimes.FOLDER}/onnx/{runtimes.SPAN_GRAPH}"} <= names
    record = json.loads(blobs.download_blob(f"{folder}/{runtimes.SERVING_FILE}").readall())
    assert (record["runtime"], record["sha256"]) == ("onnx", report.serving.sha256)


# ---- MLflow models (azureml.model_type: mlflow_model)


@pytest.mark.slow
def test_mlflow_model_type_registers_the_mlflow_folder_as_an_mlflow_model(
    fake_azureml_on_azurite: FakeAzureML, tmp_path: Path, qa_model_dir: Path
) -> None:
    """The version is the MLflow folder built from the local model files, uploaded, of type
    mlflow_model; downloaded, its model folder is the registered one, unchanged."""
    from serving.mlflow_model import model_files
    from serving.runtimes import sha256_path

    fake = fake_azureml_on_azurite
    registry = AzureMLRegistry(ml_client(fake), tmp_path / "models", model_type="mlflow_model")
    version = registry.register(
        "tunegate-qa", qa_model_dir, {"f1": 81.0}, Lineage(training_job="train-a")
    )
    sent = fake.last_body("PUT", "/models/tunegate-qa/versions/1")["properties"]
    assert sent["modelType"] == "mlflow_model"
    folder = sent["modelUri"].split("/paths/", 1)[1].rstrip("/")  # in the workspace's datastore
    blobs = fake.blob.service().get_container_client(fake.container)
    names = {n.removeprefix(folder + "/") for n in blobs.list_blob_names(name_starts_with=folder)}
    assert {"MLmodel", "python_model.py", "requirements.txt", "code/serving/scoring.py"} <= names
    assert [p.name for p in (tmp_path / "models").iterdir()] == []  # the built folder is gone

    downloaded = registry.download(version)
    root = next(p for p in [downloaded, *downloaded.parents] if (p / "MLmodel").exists())
    assert model_files(root) == downloaded
    assert sha256_path(downloaded) == sha256_path(qa_model_dir)


def test_mlflow_model_type_refuses_a_job_output_it_cannot_build_from(
    fake_azureml: FakeAzureML, tmp_path: Path
) -> None:
    registry = AzureMLRegistry(ml_client(fake_azureml), tmp_path / "models", "mlflow_model")
    with pytest.raises(ValueError, match="from local files"):
        registry.register("tunegate-qa", job_output("train-a"), {}, Lineage(training_job="a"))
    assert not fake_azureml.bodies("PUT", "/models/tunegate-qa/versions/1")


def test_an_mlflow_model_deploys_without_scoring_code_and_is_asked_with_input_data(
    fake_azureml: FakeAzureML, tmp_path: Path
) -> None:
    """No code configuration and no environment (Azure ML's no-code MLflow deployment); the
    endpoint's requests are sent as `input_data` and its answers read back in the endpoint's
    shape."""
    registry = _registered(fake_azureml, tmp_path, ["train-a"])
    sent: list[Any] = []

    def mlflow_scoring(request: httpx.Request) -> httpx.Response:
        """Azure ML's MLflow scoring server: a prediction per row of `input_data`."""
        body = json.loads(request.content)
        sent.append(body)
        table = body["input_data"]
        rows = [dict(zip(table["columns"], row, strict=True)) for row in table["data"]]
        return httpx.Response(
            200,
            json=[{"answer": r["question"][::-1]} for r in rows],
            headers={DEPLOYMENT_HEADER: "blue"},
        )

    backend = AzureMLEndpointBackend(
        ml_client(fake_azureml),
        CONFIG.endpoint,
        tmp_path / "endpoint",
        http=httpx.Client(transport=httpx.MockTransport(mlflow_scoring)),
        model_type="mlflow_model",
    )
    backend.deploy("blue", registry.get("tunegate-qa", 1).path, "tunegate-qa:1")
    properties = fake_azureml.last_body("PUT", "/onlineEndpoints/tunegate-qa/deployments/blue")[
        "properties"
    ]
    assert properties["model"].endswith("/models/tunegate-qa/versions/1")
    assert properties.get("codeConfiguration") is None
    assert properties.get("environmentId") is None
    assert not (tmp_path / "endpoint" / "code").exists()  # no scoring code staged

    one = {"question": "abc", "context": "..."}
    assert backend.score(one).body == {"answer": "cba"}
    batch = {"inputs": [one, {"question": "xy", "context": "..."}]}
    assert backend.score(batch).body == {"outputs": [{"answer": "cba"}, {"answer": "yx"}]}
    assert sent[0]["input_data"] == {
        "columns": ["question", "context"],
        "index": [0],
        "data": [["abc", "..."]],
    }


@pytest.mark.slow
def test_an_azure_run_never_downloads_a_weight_file_and_registers_the_job_output(
    fake_azureml_on_azurite: FakeAzureML,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    qa_model_dir: Path,
    prefect_api: None,
) -> None:
    """train → evaluate → register with training, evaluation and the registry on Azure ML: the
    orchestrator fetches what the stages read of the training job's output (model_info.json,
    metrics.json, the tokenizer), never a weight file, and of the evaluation job's its
    predictions and reports (scores, the screen of the candidate's outputs), which the gate
    judges as they are; the serving runtime stays torch (nothing to export here) and the model
    is registered from the job's output by reference."""
    from platforms.azureml.training import OUTPUTS_FETCHED, evaluation_job_name
    from screening.config import ScreenConfig
    from screening.outputs import screen_candidate
    from tasks.evaluate import EvaluateConfig, evaluate_task
    from tasks.register import register_task
    from tasks.serving_choice import ServingConfig
    from tasks.train import TrainConfig, job_name, run_training
    from tests.trainer.tiny import qa_record
    from trainer.args import EVALUATION_FILES, PACKAGED_MODEL
    from trainer.evaluate import score_models
    from trainer.model_paths import WEIGHT_SUFFIXES

    monkeypatch.setenv("TUNEGATE_CACHE", str(tmp_path / "cache"))
    fake = fake_azureml_on_azurite
    backends = _azure_backends(fake, tmp_path, monkeypatch, registry="azureml")
    split = _qa_split_with_test(tmp_path)
    config = TrainConfig(backend="azureml", epochs=1)
    name = job_name(split, config)
    fake.progress_job(name, "Queued", "Running", "Completed")
    light = {  # what a trained LoRA model's output holds besides its weights
        p.name: p.read_bytes() for p in qa_model_dir.iterdir() if p.suffix != ".safetensors"
    }
    light["metrics.json"] = json.dumps({"loss_curve": [{"step": 1, "loss": 2.5}]}).encode()
    weights = {
        "adapter_model.safetensors": b"w",
        "merged/model.safetensors": b"w",
        "merged/pytorch_model.bin": b"w",
        "checkpoint-10/optimizer.pt": b"w",
        "training_args.bin": b"w",
        "serving/onnx/model.onnx": b"w",
        "model.gguf": b"w",
    }
    fake.write_job_output(name, "model", {**light, **weights})
    job = run_training(backends.training, split, config, lambda line: None)

    test = [qa_record(i) for i in range(4, 10)]
    made = {
        "task": "extractive-qa",
        "test_records": 6,
        "predictions": {
            "base": ["Porto"] * 6,
            "candidate": [r["answers"]["text"][0] for r in test],
            "champion": None,
        },
    }
    screen = ScreenConfig()
    evaluation = evaluation_job_name(
        split.uri, name, None, PACKAGED_MODEL, 0, 32, "auto", screen.model_dump(mode="json")
    )
    fake.progress_job(evaluation, "Queued", "Running", "Completed")
    # what the job wrote on its node: its predictions, their scores and the candidate's screen
    scores = score_models("extractive-qa", made["predictions"], test)
    screened = screen_candidate("extractive-qa", made["predictions"]["candidate"], test, screen)
    fake.write_job_output(
        evaluation,
        "evaluation",
        {
            "predictions.json": json.dumps(made).encode(),
            "scores.json": json.dumps(scores).encode(),
            "output-screen.json": screened.model_dump_json().encode(),
        },
    )
    report = evaluate_task.fn(
        backends,
        split,
        job,
        "tunegate-qa",
        EvaluateConfig(min_gain_over_base=20, min_test_records=6),
        ScreenConfig(),
        ServingConfig(),
    )
    version = register_task.fn(
        backends,
        "tunegate-qa",
        job.output_dir,
        report.candidate,
        Lineage(training_job=name),
        promote=False,
        serving=report.serving,
    )

    # the jobs' staged code folders go up, never come home (the evaluation job's holds the
    # screen's own person reader, screening/data/person_model.safetensors, which it runs there);
    # the cache's person-reader graph is that reader exported here by the screen, not a download
    staged = {p for p in tmp_path.rglob("code") if p.is_dir() and p.parent.parent.name == "jobs"}
    here = [
        p.relative_to(tmp_path)
        for p in tmp_path.rglob("*")
        if p.is_file()
        and not any(d in p.parents for d in staged)
        and p.parent != tmp_path / "cache" / "person-reader"
    ]
    assert staged and not [p for p in here if p.name.lower().endswith(WEIGHT_SUFFIXES)]
    # what was downloaded: of the training job's output, model_info.json, metrics.json, the
    # tokenizer and configs; of the evaluation job's, its predictions and reports
    downloaded = {
        str(p.relative_to(outputs))
        for outputs in tmp_path.rglob("named-outputs")
        for output in ("model", "evaluation")  # the jobs' outputs, as fetched here
        for p in (outputs / output).rglob("*")
        if p.is_file() and p.name != OUTPUTS_FETCHED  # what says they were
    }
    assert downloaded == {f"model/{f}" for f in light} | {
        f"evaluation/{f}" for f in EVALUATION_FILES
    }
    # the gate judged the job's numbers and screen
    assert report.candidate == scores["models"]["candidate"]["metrics"]
    assert report.pii_leaks == screened.leaks == 0
    assert report.loss_curve == [{"step": 1, "loss": 2.5}] and report.gate.passed
    assert report.serving is not None and report.serving.runtime == "torch"
    assert any("holds no weights here" in r for r in report.serving.reasons)
    sent = fake.last_body("PUT", f"/models/tunegate-qa/versions/{version.version}")["properties"]
    assert sent["modelUri"] == job_output(name)  # by reference: nothing uploaded
    # the evaluation job predicted in the endpoint's dtype, on its GPU
    command = fake.last_body("PUT", f"/jobs/{evaluation}")["properties"]["command"]
    assert "--dtype '${{inputs.dtype}}'" in command


def _qa_split_with_test(tmp_path: Path) -> Any:
    """A small extractive-QA split whose validation records are its test table too."""
    from platforms.manifest import DatasetRef
    from tests.trainer.tiny import qa_record, write_dataset

    data = write_dataset(tmp_path, TaskType.extractive_qa, qa_record, n=4)
    shutil.copytree(data / "validation", data / "test")
    return DatasetRef(
        uri=str(data),
        stage="split",
        task="extractive-qa",
        key="k",
        content_hash=CONTENT_HASH,
        counts={"test": 6},
    )
