"""The Azure ML endpoint backend (platforms/azureml/endpoint.py) through a real `MLClient` whose
transport answers like the service: the endpoint made once, its key kept private, traffic and
mirror traffic applied and read back, a deployment with traffic never deleted, and scoring that
sends the key and measures the deployment that answered.

MLflow-model deployments (no scoring code to upload), so nothing here needs Azurite; the rollout
through this backend, with scoring code, is in tests/azureml/test_backends.py."""

from __future__ import annotations

import stat
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from azure.ai.ml.entities import Model

from platforms.azureml.config import EndpointConfig
from platforms.azureml.endpoint import AzureMLEndpointBackend
from serving.api import DEPLOYMENT_HEADER
from serving.client import EndpointError
from tests.azureml.fake_service import FakeAzureML, ml_client

CONFIG = EndpointConfig(name="tunegate-qa")
MODEL = "azureml:tunegate-qa:1"


def _backend(fake: FakeAzureML, tmp_path: Path, **kwargs: object) -> AzureMLEndpointBackend:
    return AzureMLEndpointBackend(
        ml_client(fake), CONFIG, tmp_path / "endpoint", model_type="mlflow_model", **kwargs
    )


@pytest.fixture
def blue_and_green(fake_azureml: FakeAzureML, tmp_path: Path) -> AzureMLEndpointBackend:
    ml_client(fake_azureml).models.create_or_update(
        Model(name="tunegate-qa", version="1", path="azureml://jobs/train-a/outputs/model")
    )
    backend = _backend(fake_azureml, tmp_path)
    backend.deploy("blue", MODEL, "tunegate-qa:1")
    backend.deploy("green", MODEL, "tunegate-qa:1")
    backend.set_traffic({"blue": 100})
    return backend


def test_the_endpoint_is_created_once_and_its_key_kept_in_a_private_file(
    fake_azureml: FakeAzureML, tmp_path: Path
) -> None:
    first = _backend(fake_azureml, tmp_path)
    second = _backend(fake_azureml, tmp_path / "again")

    assert len(fake_azureml.bodies("PUT", "/onlineEndpoints/tunegate-qa")) == 1
    sent = fake_azureml.last_body("PUT", "/onlineEndpoints/tunegate-qa")["properties"]
    assert sent["authMode"] == "Key"
    assert first.url == second.url == "https://tunegate-qa.eastus.inference.ml.azure.com/score"
    key_file = Path(first.key_file)
    assert key_file.read_text().strip() == "tunegate-qa-key-1"
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600


def test_traffic_and_mirror_traffic_are_applied_and_read_back(
    blue_and_green: AzureMLEndpointBackend, fake_azureml: FakeAzureML
) -> None:
    blue_and_green.set_traffic({"blue": 90, "green": 10}, mirror={"green": 20})

    sent = fake_azureml.last_body("PUT", "/onlineEndpoints/tunegate-qa")["properties"]
    assert (sent["traffic"], sent["mirrorTraffic"]) == ({"blue": 90, "green": 10}, {"green": 20})
    status = blue_and_green.status()
    assert status.traffic.traffic == {"blue": 90, "green": 10}
    assert status.traffic.mirror_traffic == {"green": 20}
    assert {(d.name, d.traffic, d.mirror_traffic) for d in status.deployments} == {
        ("blue", 90, 0),
        ("green", 10, 20),
    }

    blue_and_green.set_traffic({"green": 100})  # left out: 0; no mirror given: none
    status = blue_and_green.status()
    assert {(d.name, d.traffic, d.mirror_traffic) for d in status.deployments} == {
        ("blue", 0, 0),
        ("green", 100, 0),
    }
    assert not status.traffic.mirror_traffic


def test_mirror_traffic_over_the_service_s_limit_is_refused_before_any_request(
    blue_and_green: AzureMLEndpointBackend, fake_azureml: FakeAzureML
) -> None:
    sent = len(fake_azureml.requests)

    with pytest.raises(ValueError, match="mirror traffic is at most 50%"):
        blue_and_green.set_traffic({"blue": 100}, mirror={"green": 60})

    assert len(fake_azureml.requests) == sent


def test_a_deployment_with_live_or_mirrored_traffic_is_never_deleted(
    blue_and_green: AzureMLEndpointBackend, fake_azureml: FakeAzureML
) -> None:
    with pytest.raises(ValueError, match="deployment blue still takes 100% of traffic"):
        blue_and_green.delete("blue")
    blue_and_green.set_traffic({"blue": 100}, mirror={"green": 10})
    with pytest.raises(ValueError, match="deployment green still takes 10% of traffic"):
        blue_and_green.delete("green")
    assert not fake_azureml.bodies("DELETE", "/deployments/green")

    blue_and_green.set_traffic({"blue": 100})
    blue_and_green.delete("green")
    blue_and_green.delete("green")  # already gone: nothing to do

    assert [d.name for d in blue_and_green.status().deployments] == ["blue"]


def test_scoring_sends_the_key_and_measures_the_deployment_that_answered(
    fake_azureml: FakeAzureML, tmp_path: Path
) -> None:
    seen: list[httpx.Request] = []

    def endpoint(request: httpx.Request) -> httpx.Response:
        """Azure ML's MLflow scoring: green fails, blue answers each row."""
        seen.append(request)
        deployment = request.headers.get(DEPLOYMENT_HEADER, "blue")
        if deployment == "green":
            return httpx.Response(502, text="upstream died", headers={DEPLOYMENT_HEADER: "green"})
        return httpx.Response(200, json=[{"answer": "42"}], headers={DEPLOYMENT_HEADER: "blue"})

    backend = _backend(
        fake_azureml, tmp_path, http=httpx.Client(transport=httpx.MockTransport(endpoint))
    )
    record = {"question": "why?", "context": "because"}

    assert backend.score(record).deployment == "blue"
    with pytest.raises(EndpointError, match="upstream died"):
        backend.score(record, deployment="green")

    assert {r.headers["authorization"] for r in seen} == {"Bearer tunegate-qa-key-1"}
    assert str(seen[0].url) == backend.url
    metrics = backend.metrics()
    assert (metrics["blue"].requests, metrics["blue"].errors) == (1, 0)
    assert (metrics["green"].requests, metrics["green"].errors) == (1, 1)


def test_a_deployment_tells_its_collector_the_version_it_serves(
    blue_and_green: AzureMLEndpointBackend, fake_azureml: FakeAzureML
) -> None:
    """What its data collector writes is labelled `name:version` (the collector's
    `modelversion`), which the monitor reads to keep the champion's requests apart."""
    sent = fake_azureml.last_body("PUT", "/onlineEndpoints/tunegate-qa/deployments/blue")
    assert sent["properties"]["environmentVariables"]["TUNEGATE_VERSION"] == "tunegate-qa:1"
    assert sent["tags"]["tunegate.version"] == "tunegate-qa:1"


def test_the_live_window_is_read_back_from_the_collector_and_mirrored_copies_told_apart(
    blue_and_green: AzureMLEndpointBackend, fake_azureml: FakeAzureML, tmp_path: Path
) -> None:
    """What the data collector landed since the step began (`collected`, the monitor's reader
    on Azure ML); a deployment mirrored to at 0% has its users' requests read as mirrored
    copies (Azure ML does not mark them), its named ones stay named; a deployment that collects
    nothing (an MLflow model's, or azureml.endpoint.collect off) has no live window."""
    landed = [
        {"deployment": "green", "routed": "traffic"},
        {"deployment": "green", "routed": "named"},
        {"deployment": "blue", "routed": "traffic"},
    ]
    asked: list[tuple[datetime, datetime]] = []

    def collected(since: datetime, until: datetime) -> Iterator[dict[str, Any]]:
        asked.append((since, until))
        return iter(landed)

    def backend(config: EndpointConfig, model_type: str) -> AzureMLEndpointBackend:
        return AzureMLEndpointBackend(
            ml_client(fake_azureml),
            config,
            tmp_path / model_type,
            model_type=model_type,  # type: ignore[arg-type]
            collected=collected,
        )

    scored = backend(CONFIG, "custom_model")
    since = datetime.now(UTC)
    scored.set_traffic({"blue": 100}, {"green": 20})  # a shadow step
    records = list(scored.live_records(since) or [])
    assert [r["routed"] for r in records] == ["mirror", "named", "traffic"]
    assert asked[0][0] == since and asked[0][1] >= since
    scored.set_traffic({"blue": 50, "green": 50})  # a canary step: green's users are its own
    assert [r["routed"] for r in scored.live_records(since) or []] == [
        "traffic",
        "named",
        "traffic",
    ]
    assert backend(CONFIG, "mlflow_model").live_records(since) is None
    no_collector = CONFIG.model_copy(update={"collect": False})
    assert backend(no_collector, "custom_model").live_records(since) is None
