"""A typed client of the local endpoint, and a launcher that serves one in a background thread.

The rollout stage and the `tunegate endpoint` CLI use `EndpointClient`; tests and drills use
`serve_in_thread` to get a real endpoint on a free loopback port.
"""

from __future__ import annotations

import logging
import secrets
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import httpx

from serving.api import (
    DEPLOYMENT_HEADER,
    DeploymentInfo,
    DeploymentSpec,
    EndpointMetrics,
    EndpointStatus,
    FaultSpec,
)
from serving.auth import IDENTITY_PATH, identity_proof
from serving.traffic import TrafficSettings

if TYPE_CHECKING:  # the server loads torch and the scoring code: only `serve_in_thread` needs it
    import uvicorn

    from serving.settings import ServerSettings

log = logging.getLogger(__name__)


class EndpointError(RuntimeError):
    """The endpoint answered with an error status; `status` and the server's message are kept."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"endpoint answered {status}: {message}")
        self.status = status
        self.message = message


@dataclass(frozen=True)
class ScoreResult:
    deployment: str  # the deployment that answered
    body: Any


class EndpointClient:
    """Scoring and admin calls against one endpoint URL with its key."""

    def __init__(self, url: str, key: str, timeout: float = 60.0) -> None:
        self.url = url.rstrip("/")
        self._key, self._proven = key, False
        self._http = httpx.Client(
            base_url=self.url,
            headers={"Authorization": f"Bearer {key}"},
            timeout=timeout,
            event_hooks={"request": [self._prove_identity]},
        )

    def __enter__(self) -> EndpointClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    def _prove_identity(self, request: httpx.Request) -> None:
        """Before the key first leaves: the server answers a random challenge with a proof only
        an endpoint holding this key can make (serving/auth.py), else nothing is sent."""
        if self._proven:
            return
        nonce = secrets.token_hex(16)
        answer = httpx.get(f"{self.url}{IDENTITY_PATH}", params={"nonce": nonce}, timeout=10)
        try:
            proofs = answer.json() if answer.status_code == 200 else {}
        except ValueError:  # not JSON: not a tunegate endpoint
            proofs = {}
        expected = identity_proof(self._key, nonce)
        if not any(
            isinstance(p, str) and secrets.compare_digest(p, expected)
            for p in (proofs.values() if isinstance(proofs, dict) else [])
        ):
            raise EndpointError(
                421,
                f"{self.url} is not the endpoint this key belongs to (it cannot prove it holds "
                "the key): the key was not sent. Is another program on that port? Start the "
                "endpoint again (tunegate endpoint serve) or give its --url",
            )
        self._proven = True

    def score(self, payload: Any, deployment: str | None = None) -> ScoreResult:
        """The response to one request (`deployment` forces that deployment, as on Azure ML)."""
        headers = {DEPLOYMENT_HEADER: deployment} if deployment else {}
        response = self._check(self._http.post("/score", json=payload, headers=headers))
        return ScoreResult(response.headers.get(DEPLOYMENT_HEADER, ""), response.json())

    def put_deployment(
        self,
        name: str,
        model_dir: str,
        version: str | None = None,
        fault: FaultSpec | None = None,
        max_batch_size: int | None = None,
        max_wait_ms: float | None = None,
        workers: int | None = None,
    ) -> DeploymentInfo:
        """Create or replace a deployment; returns when it serves."""
        spec = DeploymentSpec(
            model_dir=model_dir,
            version=version,
            fault=fault,
            max_batch_size=max_batch_size,
            max_wait_ms=max_wait_ms,
            workers=workers,
        )
        response = self._http.put(
            f"/deployments/{name}", json=spec.model_dump(mode="json", exclude_none=True)
        )
        return DeploymentInfo.model_validate(self._check(response).json())

    def delete_deployment(self, name: str) -> None:
        self._check(self._http.delete(f"/deployments/{name}"))

    def status(self) -> EndpointStatus:
        return EndpointStatus.model_validate(self._check(self._http.get("/deployments")).json())

    def set_traffic(
        self, traffic: dict[str, int], mirror_traffic: dict[str, int] | None = None
    ) -> TrafficSettings:
        body = TrafficSettings(traffic=traffic, mirror_traffic=mirror_traffic or {})
        response = self._http.put("/traffic", json=body.model_dump(mode="json"))
        return TrafficSettings.model_validate(self._check(response).json())

    def metrics(self) -> EndpointMetrics:
        return EndpointMetrics.model_validate(self._check(self._http.get("/metrics")).json())

    def ready(self, deployment: str | None = None) -> bool:
        params = {"deployment": deployment} if deployment else {}
        return self._http.get("/health/ready", params=params).status_code == 200

    @staticmethod
    def _check(response: httpx.Response) -> httpx.Response:
        if response.is_success:
            return response
        try:
            message = response.json().get("detail", response.text)
        except ValueError:
            message = response.text
        raise EndpointError(response.status_code, str(message))


@dataclass
class RunningEndpoint:
    url: str
    key: str  # the admin key: every route
    settings: ServerSettings
    server: uvicorn.Server
    thread: threading.Thread
    score_key: str = ""  # the scoring key: POST /score only

    def client(self, timeout: float = 60.0) -> EndpointClient:
        """A client with the admin key."""
        return EndpointClient(self.url, self.key, timeout)


@contextmanager
def serve_in_thread(
    settings: ServerSettings,
    host: str = "127.0.0.1",
    startup_timeout: float = 60.0,
    masker: str | None = None,
) -> Iterator[RunningEndpoint]:
    """A running endpoint on a free port of `host`, stopped on exit; yields once it is live
    (collecting its traffic, masked, when given a masker: `create_app`).

    Uvicorn leaves logging alone here (log records reach the root logger), so tests can see them.
    """
    import uvicorn

    from serving.auth import admin_key_file, read_key
    from serving.server import create_app

    app = create_app(settings, masker)
    key, admin = read_key(settings.key_file), read_key(admin_key_file(settings.key_file))
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_config=None, log_level="info"))
    thread = threading.Thread(
        target=server.run, kwargs={"sockets": [sock]}, name=f"endpoint-{port}", daemon=True
    )
    thread.start()
    url = f"http://{host}:{port}"
    try:
        _wait_live(url, thread, startup_timeout)
        yield RunningEndpoint(url, admin, settings, server, thread, score_key=key)
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        sock.close()


def _wait_live(url: str, thread: threading.Thread, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not thread.is_alive():
            raise RuntimeError(f"the endpoint at {url} stopped while starting: see its log")
        try:
            if httpx.get(f"{url}/health/live", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.05)
    raise TimeoutError(f"the endpoint at {url} was not live after {timeout:.0f}s")
