"""Endpoint backends: where registered versions are served. The local one runs `serving/`.

The local endpoint outlives the flow run that deployed to it (so `make demo` ends with a model
still serving): it is a detached `tunegate endpoint serve` process whose address, pid and key file
are kept in `{store}/endpoint/server.json`. A later run finds it there, or starts it again on the
same port with the same state directory, so its deployments and traffic come back.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from contextlib import suppress
from pathlib import Path
from typing import Any, Protocol

import httpx

from platforms.locks import file_lock, process_alive
from serving.api import EndpointStatus
from serving.auth import admin_key_file, read_key
from serving.client import EndpointClient, ScoreResult
from serving.metrics import MetricsSnapshot

_ROOT = Path(__file__).resolve().parents[1]


class EndpointBackend(Protocol):
    url: str
    key_file: str

    def status(self) -> EndpointStatus: ...
    def deploy(self, name: str, model_dir: str, version: str) -> None: ...
    def delete(self, name: str) -> None: ...
    def set_traffic(
        self, traffic: dict[str, int], mirror: dict[str, int] | None = None
    ) -> None: ...
    def metrics(self) -> dict[str, MetricsSnapshot]: ...
    def score(self, payload: Any, deployment: str | None = None) -> ScoreResult: ...


class LocalEndpointBackend:
    """Drives a local endpoint server through its admin API."""

    def __init__(self, url: str, key_file: Path, workers: int = 1) -> None:
        self.url, self.key_file = url, str(key_file)
        self.workers = workers  # scoring processes of each deployment it makes
        admin = read_key(admin_key_file(Path(key_file)))  # the admin API; clients get key_file
        self.client = EndpointClient(url, admin, timeout=300)

    def status(self) -> EndpointStatus:
        return self.client.status()

    def deploy(self, name: str, model_dir: str, version: str) -> None:
        self.client.put_deployment(name, model_dir, version=version, workers=self.workers)

    def delete(self, name: str) -> None:
        self.client.delete_deployment(name)

    def set_traffic(self, traffic: dict[str, int], mirror: dict[str, int] | None = None) -> None:
        self.client.set_traffic(traffic, mirror)

    def metrics(self) -> dict[str, MetricsSnapshot]:
        return self.client.metrics().deployments

    def score(self, payload: Any, deployment: str | None = None) -> ScoreResult:
        return self.client.score(payload, deployment)

    def close(self) -> None:
        self.client.close()


def ensure_local_endpoint(state_dir: Path, port: int = 0, timeout: float = 120) -> tuple[str, Path]:
    """(url, key file) of the local endpoint kept in `state_dir`, started detached if not live.

    Idempotent between processes: the check and the start happen under a lock, so two runs
    starting at once find one server (the second finds the first's), never two."""
    with file_lock(state_dir / "start.lock", "another run starting the endpoint"):
        return _ensure_local_endpoint(state_dir, port, timeout)


def _ensure_local_endpoint(state_dir: Path, port: int, timeout: float) -> tuple[str, Path]:
    state_dir.mkdir(parents=True, exist_ok=True)
    record = state_dir / "server.json"
    key_file = state_dir / "key"
    if record.exists():
        known = json.loads(record.read_text())
        if _live(known["url"]):
            return known["url"], key_file
        if process_alive(known["pid"]):  # started by a run killed before it was live: wait
            deadline = time.monotonic() + timeout
            while process_alive(known["pid"]) and time.monotonic() < deadline:
                if _live(known["url"]):
                    return known["url"], key_file
                time.sleep(0.2)
            with suppress(ProcessLookupError):
                os.killpg(known["pid"], 15)  # never left running beside a new one
        port = port or known.get("port", 0)
    port = port if port and _free(port) else _free_port()
    url = f"http://127.0.0.1:{port}"
    # the server's log: 0600 whatever the umask (it names deployments, models and clients)
    log = os.fdopen(
        os.open(state_dir / "server.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600), "a"
    )
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "cli",
            "endpoint",
            "serve",
            "--port",
            str(port),
            "--state-dir",
            str(state_dir),
            "--key-file",
            str(key_file),
        ],
        cwd=_ROOT,
        stdout=log,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        start_new_session=True,  # outlives the run that started it
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )
    log.close()
    # recorded before it is live, so a run killed while waiting leaves a tracked server
    record.write_text(json.dumps({"url": url, "port": port, "pid": process.pid}, indent=2))
    deadline = time.monotonic() + timeout
    while not _live(url):
        if process.poll() is not None:
            raise RuntimeError(
                f"the local endpoint exited at start; see {state_dir / 'server.log'}"
            )
        if time.monotonic() > deadline:
            process.terminate()
            raise TimeoutError(f"the local endpoint was not live after {timeout:.0f}s")
        time.sleep(0.2)
    return url, key_file


def stop_local_endpoint(state_dir: Path, grace_seconds: float = 15.0) -> bool:
    """Stop the detached endpoint recorded in `state_dir` (SIGTERM: in-flight requests finish),
    killing its process group if it has not exited after `grace_seconds`; False when none was
    running."""
    record = state_dir / "server.json"
    if not record.exists():
        return False
    pid = json.loads(record.read_text())["pid"]
    try:
        os.killpg(pid, 15)
    except ProcessLookupError:
        return False
    deadline = time.monotonic() + grace_seconds
    while process_alive(pid) and time.monotonic() < deadline:
        with suppress(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)  # reap it when it is our child
        time.sleep(0.1)
    if process_alive(pid):
        with suppress(ProcessLookupError):
            os.killpg(pid, 9)
    return True


def _live(url: str) -> bool:
    try:
        return httpx.get(f"{url}/health/live", timeout=2).status_code == 200
    except httpx.TransportError:
        return False


def _free(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
