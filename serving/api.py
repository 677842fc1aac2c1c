"""The request and response models of the endpoint's admin API, shared by server and client."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from serving.metrics import MetricsSnapshot
from serving.traffic import TrafficSettings

DEPLOYMENT_HEADER = (
    "azureml-model-deployment"  # request: force a deployment; response: who answered
)
STATE_FILE = "endpoint.json"  # in the state folder: the deployments and traffic, kept across starts
DEPLOYMENT_NAME = (
    r"^[A-Za-z][A-Za-z0-9-]{2,31}$"  # Azure ML's rule: 3-32 chars, starts with a letter
)


class FaultSpec(BaseModel):
    """A drill and testing knob: make a deployment slow or failing on purpose.

    Used to rehearse canary rollbacks and to test error handling; never set it in production.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")
    error_rate: float = Field(0.0, ge=0.0, le=1.0, description="share of requests that fail (500)")
    delay_ms: int = Field(0, ge=0, le=60_000, description="extra latency added to every request")


class DeploymentSpec(BaseModel):
    """Body of `PUT /deployments/{name}`: what the deployment serves and how."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    model_dir: str = Field(description="a trained model directory (a registered ModelVersion.path)")
    version: str | None = Field(None, description="a label such as 'qa-model:3', shown in status")
    fault: FaultSpec | None = Field(None, description="drill/testing only: injected errors, delay")
    max_batch_size: int | None = Field(None, ge=1, le=256, description="server default if unset")
    max_wait_ms: float | None = Field(None, ge=0, le=1000, description="server default if unset")
    workers: int | None = Field(
        None,
        ge=1,
        le=8,
        description="batches computed at once (default 1, in the server process); above 1, each "
        "in its own process with its own copy of the model: see serving/workers",
    )


class DeploymentInfo(BaseModel):
    """One deployment as `GET /deployments` shows it."""

    name: str
    model_dir: str
    version: str | None
    task: str
    state: str  # "ready" (a deployment being created is listed in `creating`)
    traffic: int
    mirror_traffic: int
    fault: FaultSpec | None
    workers: int = 1  # scoring processes (1: the server process)


class EndpointStatus(BaseModel):
    """`GET /deployments`: every deployment, the ones being created, and the traffic."""

    deployments: list[DeploymentInfo]
    creating: list[str]
    traffic: TrafficSettings
    failed: dict[str, str] = {}  # deployments that could not load at start -> why


class EndpointMetrics(BaseModel):
    """`GET /metrics`: per-deployment counters and latency percentiles."""

    deployments: dict[str, MetricsSnapshot]
