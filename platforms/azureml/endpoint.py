"""The Azure ML endpoint backend: a managed online endpoint whose deployments run `serving/`.

Every long-running operation is awaited before the next call (an unawaited deployment poller
races the traffic update), and a deployment is deleted only once its traffic is 0. Latency and
errors are measured on the requests this backend sends (the rollout's canary traffic): Azure
Monitor's endpoint metrics lag by minutes, too late for a canary step.

The endpoint's users' requests are read back from its data collector's output on Blob storage
(`collected`, the monitor's reader, tasks/monitor_azure.py), which lands minutes after each
request: a canary step's live window waits for it (`live_wait_seconds`).
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
from azure.core.exceptions import ResourceNotFoundError

from platforms.azureml import entities, online_entities
from platforms.azureml.client import retrying, status_text
from platforms.azureml.config import EndpointConfig, ModelType
from serving import payloads
from serving.api import DEPLOYMENT_HEADER, DeploymentInfo, EndpointStatus
from serving.auth import write_key
from serving.client import EndpointError, ScoreResult
from serving.metrics import DeploymentMetrics, MetricsSnapshot
from serving.traffic import TrafficSettings

if TYPE_CHECKING:
    from platforms.endpoint import CollectedReader

MAX_MIRROR_PERCENT = 50


class AzureMLEndpointBackend:
    """`EndpointBackend` over `ml_client.online_endpoints` / `online_deployments`; `collected`:
    where the deployments' collected traffic is read back (None, or deployments that collect
    nothing: not read, no live window)."""

    live_wait_seconds = 600.0  # the data collector lands requests in blob storage minutes later

    def __init__(
        self,
        ml_client: Any,
        config: EndpointConfig,
        state_dir: Path,
        http: httpx.Client | None = None,
        model_type: ModelType = "custom_model",
        collected: CollectedReader | None = None,
    ) -> None:
        self.client = ml_client
        # only the scoring code collects (masked); an MLflow model's deployment, or one with
        # azureml.endpoint.collect off, collects nothing to read back
        collects = config.collect and model_type == "custom_model"
        self.collected = collected if collects else None
        self._mirrored: set[str] = set()  # deployments taking mirror traffic and none of their own
        self.config = config
        self.model_type = model_type  # mlflow_model: deployments without scoring code
        self.state_dir = state_dir
        endpoint = self._ensure_endpoint()
        self.url = str(endpoint.scoring_uri)
        # The primary key, kept in a 0600 file for the run summary and in memory for requests.
        keys = retrying(lambda: self.client.online_endpoints.get_keys(config.name), "keys")
        self._key = keys.primary_key
        self.key_file = str(write_key(state_dir / "key", self._key))
        self._http = http or httpx.Client(timeout=config.request_timeout_ms / 1000 + 10)
        self._metrics: dict[str, DeploymentMetrics] = {}
        self._lock = threading.Lock()

    def status(self) -> EndpointStatus:
        endpoint = self._endpoint()
        traffic = {k: int(v) for k, v in (endpoint.traffic or {}).items()}
        mirror = {k: int(v) for k, v in (endpoint.mirror_traffic or {}).items()}
        deployments, creating = [], []
        for found in self._deployments():
            if status_text(found.provisioning_state).lower() != "succeeded":
                creating.append(found.name)
                continue
            tags = found.tags or {}
            deployments.append(
                DeploymentInfo(
                    name=found.name,
                    model_dir=str(found.model),
                    version=tags.get("tunegate.version"),
                    task=tags.get("tunegate.task", ""),
                    state="ready",
                    traffic=traffic.get(found.name, 0),
                    mirror_traffic=mirror.get(found.name, 0),
                    fault=None,
                )
            )
        return EndpointStatus(
            deployments=deployments,
            creating=creating,
            traffic=TrafficSettings(traffic=traffic, mirror_traffic=mirror),
        )

    def deploy(self, name: str, model_dir: str, version: str) -> None:
        """Create (or replace) `name` serving the model asset `model_dir`; returns when ready.
        An MLflow model's deployment has no scoring code or environment of its own."""
        code = None
        if self.model_type == "custom_model":
            code = entities.stage_code(
                self.state_dir / "code" / name, entities.SERVING_PACKAGES, score_script=True
            )
        deployment = online_entities.online_deployment(
            name, self.config, model_dir, code, {"tunegate.version": version}
        )
        retrying(
            lambda: self.client.online_deployments.begin_create_or_update(deployment).result(),
            f"deploy {name}",
        )
        with self._lock:
            self._metrics[name] = DeploymentMetrics()

    def delete(self, name: str) -> None:
        """Delete a deployment that no longer takes traffic (ValueError while it does)."""
        endpoint = self._endpoint()
        live = (endpoint.traffic or {}).get(name, 0) or (endpoint.mirror_traffic or {}).get(name, 0)
        if live:
            raise ValueError(f"deployment {name} still takes {live}% of traffic: set it to 0 first")
        with contextlib.suppress(ResourceNotFoundError):
            retrying(
                lambda: self.client.online_deployments.begin_delete(
                    name=name, endpoint_name=self.config.name
                ).result(),
                f"delete {name}",
            )
        with self._lock:
            self._metrics.pop(name, None)

    def set_traffic(self, traffic: dict[str, int], mirror: dict[str, int] | None = None) -> None:
        """Apply a traffic map (deployments left out get 0) and mirror traffic; awaited."""
        mirror = mirror or {}
        if any(v > MAX_MIRROR_PERCENT for v in mirror.values()):
            raise ValueError(f"mirror traffic is at most {MAX_MIRROR_PERCENT}% on Azure ML")
        endpoint = self._endpoint()
        names = {d.name for d in self._deployments()}
        endpoint.traffic = {n: int(traffic.get(n, 0)) for n in names | set(traffic)}
        endpoint.mirror_traffic = {n: int(v) for n, v in mirror.items() if v}
        retrying(
            lambda: self.client.online_endpoints.begin_create_or_update(endpoint).result(),
            "update traffic",
        )
        self._mirrored = {n for n, v in mirror.items() if v and not traffic.get(n)}

    def metrics(self) -> dict[str, MetricsSnapshot]:
        with self._lock:
            return {name: m.snapshot(model_calls=m.requests) for name, m in self._metrics.items()}

    def score(self, payload: Any, deployment: str | None = None) -> ScoreResult:
        """POST the payload to the scoring URI with the key, as any client would."""
        headers = {"Authorization": f"Bearer {self._key}"}
        if deployment:
            headers[DEPLOYMENT_HEADER] = deployment
        mlflow = self.model_type == "mlflow_model"  # Azure ML's MLflow scoring: input_data
        body = payloads.mlflow_request(payload) if mlflow else payload
        started = time.perf_counter()
        response = self._http.post(self.url, json=body, headers=headers)
        answered = response.headers.get(DEPLOYMENT_HEADER, deployment or "")
        if answered:
            with self._lock:
                self._metrics.setdefault(answered, DeploymentMetrics()).record(
                    (time.perf_counter() - started) * 1000, failed=response.status_code >= 500
                )
        if not response.is_success:
            raise EndpointError(response.status_code, response.text[:500])
        answer = response.json()
        if mlflow:
            answer = payloads.mlflow_response(payload, answer)
        return ScoreResult(answered, answer)

    def live_records(self, since: datetime) -> Iterator[dict[str, Any]] | None:
        """The deployments' requests the data collector landed since `since`, in time order
        (None without `collected`). Azure ML does not tell a mirrored copy from a user's request,
        so a deployment this backend mirrors to while it takes no traffic of its own (a shadow
        step) has its users' requests read as mirrored; those that named it stay named."""
        if self.collected is None:
            return None
        mirrored = frozenset(self._mirrored)
        records = self.collected(since, datetime.now(UTC))
        return (
            {**r, "routed": "mirror"}
            if r.get("deployment") in mirrored and r.get("routed", "traffic") == "traffic"
            else r
            for r in records
        )

    def close(self) -> None:
        self._http.close()

    def _ensure_endpoint(self) -> Any:
        try:
            return self._endpoint()
        except ResourceNotFoundError:
            endpoint = online_entities.online_endpoint(self.config)
            retrying(
                lambda: self.client.online_endpoints.begin_create_or_update(endpoint).result(),
                f"create endpoint {self.config.name}",
            )
            return self._endpoint()

    def _endpoint(self) -> Any:
        return retrying(lambda: self.client.online_endpoints.get(self.config.name), "get endpoint")

    def _deployments(self) -> list[Any]:
        return retrying(
            lambda: list(self.client.online_deployments.list(endpoint_name=self.config.name)),
            "list deployments",
        )
