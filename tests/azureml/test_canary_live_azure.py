"""A canary step on Azure ML judged on its live window: the users' requests of the step, read
back from the data collector's output on Blob storage (Azurite) by the monitor's reader.

The fake workspace's scoring URI plays the endpoint and its users: every request the rollout
sends (naming its deployment, as smoke and replayed requests do) is answered, and while it is
held each deployment also serves users' requests routed by the endpoint's traffic weights. Each
request is collected as tunegate's scoring script collects it on Azure ML (its correlation id
from `serving.collect.correlation_id`, its version label the deployment's `TUNEGATE_VERSION`)
and written as the data collector writes it: one line of the documented schema in
`{root}/{endpoint}/{deployment}/{collection}/{yyyy}/{MM}/{dd}/{HH}/{file}.jsonl` (Microsoft Learn,
"Collect production data from models for real-time inferencing"), on the workspace's default
datastore, `workspaceblobstore`, where the rollout finds it through the workspace.
"""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from platforms.azureml.endpoint import AzureMLEndpointBackend
from platforms.blob import AzureStorageConfig
from serving.api import DEPLOYMENT_HEADER
from serving.collect import INPUTS, OUTPUTS, VERSION_ENV, Exchange, correlation_id
from tasks.canary_live import LiveCanaryConfig
from tasks.collector_root import AzureCollectedConfig
from tasks.rollout import RolloutConfig, run_rollout
from tasks.traffic_sources import endpoint_traffic
from tests.azureml.fake_service import FakeAzureML, ml_client
from tests.azureml.test_backends import CONFIG, SAMPLES, _registered, _Router

pytestmark = pytest.mark.slow  # Azurite
MODEL = "tunegate-qa"
USER = {"question": "Who wrote report 0?", "context": "..."}


class _CollectedEndpoint(_Router):
    """The router, its users (`users` requests routed by the traffic weights beside each one the
    rollout sends; those reaching a deployment in `failing_users` fail with a 500) and the data
    collector of every deployment, writing to the workspace's blob container."""

    def __init__(self, fake: FakeAzureML, users: int) -> None:
        super().__init__(fake, CONFIG.endpoint.name)
        self.answers = {s["request"]["question"]: s["expected"] for s in SAMPLES}
        self.users = users
        self.failing_users: set[str] = set()
        self.served: list[tuple[str, str, int]] = []  # (deployment, routed, status)

    def __call__(self, request: httpx.Request) -> httpx.Response:
        response = super().__call__(request)
        if response.status_code != 401:
            routed = "named" if request.headers.get(DEPLOYMENT_HEADER) else "traffic"
            self._collect(response.headers[DEPLOYMENT_HEADER], routed, json.loads(request.content))
            for _ in range(self.users):
                self._user()
        return response

    def _user(self) -> None:
        traffic = self.fake.endpoints[self.endpoint]["properties"].get("traffic") or {}
        live = {name: weight for name, weight in traffic.items() if weight}
        if not live:  # no deployment takes traffic yet: no user is answered
            return
        deployment = self.random.choices(list(live), weights=list(live.values()))[0]
        fails = deployment in self.failing_users
        self._collect(deployment, "traffic", USER, 500 if fails else 200)

    def _collect(
        self, deployment: str, routed: str, body: dict[str, Any], status: int = 200
    ) -> None:
        resource = self.fake.deployments[(self.endpoint, deployment)]
        version = resource["properties"]["environmentVariables"][VERSION_ENV]
        answer = {"answer": self.answers.get(body["question"], "")}
        outputs = [answer] if status == 200 else None
        exchange = Exchange(deployment, version, status, 0.0, [body], outputs, routed=routed)
        self.served.append((deployment, routed, status))
        at = datetime.now(UTC)
        for collection, rows in ((INPUTS, exchange.inputs), (OUTPUTS, exchange.outputs)):
            if rows is None:
                continue
            line = {
                "specversion": "1.0",
                "id": uuid.uuid4().hex,
                "type": f"azureml.inference.{collection}",
                "datacontenttype": "application/json",
                "time": at.strftime("%Y-%m-%dT%H:%M:%SZ"),
                "data": rows,
                "correlationid": correlation_id(exchange),
                "modelversion": version,
                "collectdatatype": "pandas.core.frame.DataFrame",
            }
            folder = (
                f"modelDataCollector/{self.endpoint}/{deployment}/{collection}/{at:%Y/%m/%d/%H}"
            )
            container = self.fake.blob.service().get_container_client(self.fake.container)
            container.upload_blob(f"{folder}/{uuid.uuid4().hex}.jsonl", json.dumps(line) + "\n")


def _rollout(
    fake: FakeAzureML,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    azurite: str,
    users: int,
    live: LiveCanaryConfig,
) -> tuple[Any, _CollectedEndpoint]:
    """v1 deployed (blue), then v2 rolled out as a canary under `live`, blue's users failing
    nowhere and green's as the test sets `router.failing_users` before; (record, router)."""
    from platforms.azureml import client
    from platforms.backends import Backends, BackendSettings

    monkeypatch.setattr(client, "connect", lambda workspace: ml_client(fake))
    monkeypatch.setenv("AZURE_STORAGE_CONNECTION_STRING", azurite)
    backends = Backends(
        BackendSettings(store=str(tmp_path / "store"), azureml=CONFIG, endpoint="azureml")
    )
    collected = endpoint_traffic(backends, MODEL, AzureCollectedConfig(), AzureStorageConfig())
    assert collected is not None  # the default root: modelDataCollector on workspaceblobstore
    container = fake.blob.service().get_container_client(fake.container)
    for blob in container.list_blobs(name_starts_with="modelDataCollector/"):  # another test's
        container.delete_blob(blob.name)
    router = _CollectedEndpoint(fake, users)
    router.failing_users = {"green"}
    backend = AzureMLEndpointBackend(
        ml_client(fake),
        CONFIG.endpoint,
        tmp_path / "endpoint",
        http=httpx.Client(transport=httpx.MockTransport(router)),
        collected=collected,
    )
    assert backend.live_wait_seconds == 600  # the data collector's lag: unset wait_seconds
    registry = _registered(fake, tmp_path, ["train-a", "train-b"])
    v1, v2 = registry.versions(MODEL)
    policy = RolloutConfig(
        steps=[50, 100],
        hold_requests=8,
        min_requests=4,
        hold_seconds=30,
        # the replayed half's latency includes this test's uploads: not what is judged here
        max_p95_ratio=10,
        p95_allowance_ms=2000,
        live=live,
    )
    assert run_rollout(backend, registry, v1, "extractive-qa", SAMPLES, policy).outcome == (
        "promoted"
    )
    router.served.clear()
    return run_rollout(backend, registry, v2, "extractive-qa", SAMPLES, policy), router


def test_a_challenger_erroring_on_live_traffic_rolls_back_though_its_smoke_test_passed(
    fake_azureml_on_azurite: FakeAzureML,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    azurite: str,
) -> None:
    """green answers every request that names it (smoke and replay pass) and fails its users':
    the first step's live window, read back from the collector's output, rolls it back; the
    rollout's own requests, collected as named, are not counted as green's live traffic."""
    live = LiveCanaryConfig(min_requests=4, wait_seconds=5)
    record, router = _rollout(fake_azureml_on_azurite, tmp_path, monkeypatch, azurite, 2, live)

    assert record.outcome == "rolled-back"
    step = next(e for e in record.events if e.action == "canary 50%")
    assert step.decision is not None and step.decision.step == "proceed"  # replayed: healthy
    assert step.live is not None and step.live.verdict == "fail"
    assert any("challenger error rate 1.000" in r for r in step.live.reasons), step.live.reasons
    challenger = step.live.challenger
    assert challenger is not None and challenger.version == "tunegate-qa:2"
    users_of_green = [s for d, r, s in router.served if d == "green" and r == "traffic"]
    named_to_green = [s for d, r, s in router.served if d == "green" and r == "named"]
    assert named_to_green and set(named_to_green) == {200}  # smoke and replay: all answered
    # every user request green served was collected and read; no named one among them
    assert challenger.health.requests == len(users_of_green)
    assert challenger.health.errors == challenger.health.requests
    assert step.live.champion is not None and step.live.champion.health.errors == 0
    assert ("tunegate-qa", "green") not in fake_azureml_on_azurite.deployments


@pytest.mark.parametrize(
    ("action", "outcome"), [("rollback", "rolled-back"), ("smoke-only", "promoted")]
)
def test_a_window_with_too_few_collected_requests_cannot_judge(
    fake_azureml_on_azurite: FakeAzureML,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    azurite: str,
    action: str,
    outcome: str,
) -> None:
    """No users: the collector's output holds only the rollout's own (named) requests, so green
    serves fewer live requests than min_requests; after wait_seconds the window cannot be judged
    and rollout.live.on_cannot_judge decides."""
    live = LiveCanaryConfig(min_requests=4, wait_seconds=1, on_cannot_judge=action)
    record, router = _rollout(fake_azureml_on_azurite, tmp_path, monkeypatch, azurite, 0, live)

    assert record.outcome == outcome
    step = next(e for e in record.events if e.action == "canary 50%")
    assert step.live is not None and step.live.verdict == "cannot-judge"
    assert step.live.challenger is not None and step.live.challenger.health.requests == 0
    assert any(r == "named" for _, r, _ in router.served)  # collected, and left out
    assert "rollout.live.on_cannot_judge" in step.message
