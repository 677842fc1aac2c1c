"""Endpoint backends: where registered versions are served. The local one runs `serving/`.

Every registered model name has its own endpoint: a rollout of one model never sees, canaries
against or deletes another's deployments. Locally that is its own state folder,
`{store}/endpoints/{model name}/`, with its own port (0: a free one, chosen once and recorded),
keys, deployments and traffic.

The local endpoint outlives the flow run that deployed to it (so `make demo` ends with a model
still serving): it is a detached `tunegate endpoint serve` process whose address, pid and key file
are kept in its folder's `server.json`. A later run finds it there, or starts it again on the
same port with the same state directory, so its deployments and traffic come back.

A store of the old layout (one `{store}/endpoint/` for every model) is moved to the new one the
first time a model's endpoint is asked for: the old folder becomes the endpoint of the one model
it serves (its server restarted from there, on the same port with the same keys); an old folder
serving deployments of several models is refused with what to do (`LegacyEndpointError`).
"""

from __future__ import annotations

import json
import logging
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import suppress
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

import httpx

from platforms.locks import file_lock, process_alive, write_text_atomic
from serving.api import STATE_FILE, EndpointStatus
from serving.auth import admin_key_file, read_key
from serving.client import EndpointClient, ScoreResult
from serving.collect import read_records
from serving.metrics import MetricsSnapshot

_ROOT = Path(__file__).resolve().parents[1]
log = logging.getLogger(__name__)
ENDPOINTS = "endpoints"  # {store}/endpoints/{model name}/: one local endpoint per model
LEGACY = "endpoint"  # {store}/endpoint/: the old layout, one endpoint for every model


class LegacyEndpointError(RuntimeError):
    """An old-layout endpoint folder that cannot be moved to one model's own by itself."""


class ForeignDeployments(RuntimeError):
    """An endpoint a model's rollout was given serves another model's deployments."""


def model_of(label: str | None) -> str | None:
    """The model name of a deployment's version label (`name:version`), None when unlabelled."""
    return (label.rpartition(":")[0] or None) if label else None


def check_own(status: EndpointStatus, model_name: str, where: str) -> None:
    """Raise `ForeignDeployments` when the endpoint serves a deployment of another model: a
    rollout, repair or rollback of `model_name` touches its own deployments only."""
    foreign = {
        d.name: d.version
        for d in status.deployments
        if model_of(d.version) not in (None, model_name)
    }
    if foreign:
        shown = ", ".join(f"{n} ({v})" for n, v in sorted(foreign.items()))
        raise ForeignDeployments(
            f"the endpoint {where} serves another model's deployments ({shown}); a rollout of "
            f"{model_name} touches only its own: give each model its own endpoint (the default: "
            "unset azureml.endpoint.name, or the local endpoint of its model name)"
        )


def local_endpoint_dir(store_root: Path, model_name: str) -> Path:
    """`{store}/endpoints/{model_name}`: the state folder of the model's local endpoint (a store
    of the old layout is moved to this one first)."""
    if model_name in ("", ".", ".."):
        raise ValueError(f"{model_name!r} names no model (registry.model_name)")
    _move_legacy(store_root, model_name)
    return store_root / ENDPOINTS / model_name


def local_endpoints(store_root: Path) -> dict[str, Path]:
    """Every model's local endpoint folder in the store, by model name (an old-layout folder
    not moved yet is listed under the one model it serves, or as `endpoint`)."""
    found = {p.name: p for p in sorted((store_root / ENDPOINTS).glob("*")) if p.is_dir()}
    legacy = store_root / LEGACY
    if (legacy / "server.json").exists() or (legacy / STATE_FILE).exists():
        names = _models_served(legacy)
        name = names[0] if len(names) == 1 and names[0] not in found else LEGACY
        found.setdefault(name, legacy)
    return found


def served_versions(state_dir: Path) -> dict[str, Any]:
    """What a local endpoint serves, read from its folder (no server is started): its url and
    port (when it was ever started), and per deployment its version and traffic."""
    server = state_dir / "server.json"
    known = json.loads(server.read_text()) if server.exists() else {}
    state_file = state_dir / STATE_FILE
    state = json.loads(state_file.read_text()) if state_file.exists() else {}
    traffic = state.get("traffic", {}).get("traffic", {})
    return {
        "url": known.get("url"),
        "port": known.get("port"),
        "live": bool(known.get("url")) and _live(known["url"]),
        "deployments": {
            name: {"version": spec.get("version"), "traffic": int(traffic.get(name, 0))}
            for name, spec in sorted(state.get("deployments", {}).items())
        },
    }


def _models_served(state_dir: Path) -> list[str]:
    state_file = state_dir / STATE_FILE
    if not state_file.exists():
        return []
    deployments = json.loads(state_file.read_text()).get("deployments", {})
    return sorted({m for spec in deployments.values() if (m := model_of(spec.get("version")))})


def _move_legacy(store_root: Path, model_name: str) -> None:
    """Move an old-layout `{store}/endpoint/` to `{store}/endpoints/{the model it serves}/`
    (a running server is stopped first and started again from there, on its port, with its
    keys); one serving nothing becomes `model_name`'s."""
    legacy = store_root / LEGACY
    if not legacy.is_dir():
        return
    (store_root / ENDPOINTS).mkdir(parents=True, exist_ok=True)
    with file_lock(store_root / ENDPOINTS / ".layout.lock", "another run moving the endpoint"):
        if not legacy.is_dir():
            return  # moved by the run that held the lock
        names = _models_served(legacy)
        if len(names) > 1:
            raise LegacyEndpointError(
                f"{legacy} is the old single endpoint of this store and serves deployments of "
                f"{', '.join(names)}: each model now has its own endpoint under "
                f"{store_root / ENDPOINTS}. Stop it (kill the pid in {legacy / 'server.json'}) "
                f"and delete {legacy}; each model's next rollout deploys its champion again"
            )
        target = store_root / ENDPOINTS / (names[0] if names else model_name)
        if target.exists():
            raise LegacyEndpointError(
                f"{legacy} (the old single endpoint of this store) and {target} both exist: "
                f"stop the old one (the pid in {legacy / 'server.json'}) and delete {legacy}"
            )
        was_running = stop_local_endpoint(legacy)
        with suppress(FileNotFoundError):
            (legacy / "start.lock").unlink()
        legacy.rename(target)
        log.info("endpoint: %s moved to %s (one endpoint per model)", legacy, target)
        if was_running:  # serving again at once, from its own folder, on its port
            try:
                ensure_local_endpoint(target)
            except (RuntimeError, TimeoutError) as exc:
                log.warning("the moved endpoint %s did not start again: %s", target, exc)


# a served model's collected records from `since` to `until` at least (the endpoint's traffic
# where it is collected away from the endpoint: Azure ML's data collector output on Blob storage)
CollectedReader = Callable[[datetime, datetime], Iterator[dict[str, Any]]]


class EndpointBackend(Protocol):
    url: str
    key_file: str
    # how long a canary step waits for its live window by default (rollout.live.wait_seconds
    # unset): longer where collected records land late
    live_wait_seconds: float

    def status(self) -> EndpointStatus: ...
    def deploy(self, name: str, model_dir: str, version: str) -> None: ...
    def delete(self, name: str) -> None: ...
    def set_traffic(
        self, traffic: dict[str, int], mirror: dict[str, int] | None = None
    ) -> None: ...
    def metrics(self) -> dict[str, MetricsSnapshot]: ...
    def score(self, payload: Any, deployment: str | None = None) -> ScoreResult: ...
    def live_records(self, since: datetime) -> Iterator[dict[str, Any]] | None: ...


class LocalEndpointBackend:
    """Drives a local endpoint server through its admin API; `collected`: the folder its
    traffic is collected in (masked, `serving.collect`), which `live_records` reads."""

    live_wait_seconds = 120.0  # its records are written as it serves

    def __init__(
        self, url: str, key_file: Path, workers: int = 1, collected: Path | None = None
    ) -> None:
        self.url, self.key_file = url, str(key_file)
        self.workers = workers  # scoring processes of each deployment it makes
        self.collected = collected
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

    def live_records(self, since: datetime) -> Iterator[dict[str, Any]] | None:
        """Every request the endpoint collected (masked), oldest first (the caller keeps those
        since `since`); None when it collects none (no `collected` folder given)."""
        return None if self.collected is None else read_records(self.collected)

    def close(self) -> None:
        self.client.close()


def ensure_local_endpoint(state_dir: Path, port: int = 0, timeout: float = 120) -> tuple[str, Path]:
    """(url, key file) of the local endpoint kept in `state_dir`, started detached if not live.

    Idempotent between processes: the check and the start happen under a lock, so two runs
    starting at once find one server (the second finds the first's), never two."""
    with file_lock(state_dir / "start.lock", "another run starting the endpoint"):
        return _ensure_local_endpoint(state_dir, port, timeout)


# The server's process starts as this and becomes `python -m cli endpoint serve ...` (exec, same
# pid) only once `server.json` names its pid: a run SIGKILLed between starting it and recording
# it leaves no server beside the one the next run starts. It exits at once when the record names
# a server other than itself and the one it replaces (argv[3], or "-"), else when its wait ends.
_WHEN_RECORDED = """
import json, os, sys, time
record, deadline = sys.argv[1], time.monotonic() + float(sys.argv[2])
replaces = None if sys.argv[3] == "-" else int(sys.argv[3])
while time.monotonic() < deadline:
    try:
        with open(record) as f:
            pid = json.load(f).get("pid")
    except (OSError, ValueError):
        pid = None
    if pid == os.getpid():
        os.execv(sys.executable, [sys.executable, *sys.argv[4:]])
    if pid is not None and pid != replaces:
        sys.exit(f"{record} names another server (pid {pid}): this one was never recorded")
    time.sleep(0.02)
sys.exit(f"not recorded in {record}: the run that started this server was stopped")
"""


def _ensure_local_endpoint(state_dir: Path, port: int, timeout: float) -> tuple[str, Path]:
    state_dir.mkdir(parents=True, exist_ok=True)
    record = state_dir / "server.json"
    key_file = state_dir / "key"
    replaces = "-"
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
            _stop_group(known["pid"], grace_seconds=15.0)  # never left running beside a new one
        port = port or known.get("port", 0)
        replaces = str(known["pid"])
    port = port if port and _free(port) else _free_port()
    url = f"http://127.0.0.1:{port}"
    # the server's log: 0600 whatever the umask (it names deployments, models and clients)
    log = os.fdopen(
        os.open(state_dir / "server.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600), "a"
    )
    process = subprocess.Popen(
        [
            sys.executable,
            "-c",
            _WHEN_RECORDED,
            str(record),
            "60",  # seconds it waits to be recorded
            replaces,
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
    # recorded before it is live, so a run killed while waiting leaves a tracked server (and it
    # serves only once recorded: _WHEN_RECORDED)
    write_text_atomic(record, json.dumps({"url": url, "port": port, "pid": process.pid}, indent=2))
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
    """Stop the detached endpoint recorded in `state_dir` and what it started (its traffic
    collector, its workers: one process group): SIGTERM, so in-flight requests finish, then
    SIGKILL if it has not exited after `grace_seconds`. False when none was running (a recorded
    pid now another program's is left alone)."""
    pid = endpoint_process(state_dir)
    return False if pid is None else _stop_group(pid, grace_seconds)


def endpoint_process(state_dir: Path) -> int | None:
    """The pid of the endpoint server recorded in `state_dir` while it runs, else None: its
    `server.json` names it, and (where /proc tells) its command line serves that folder."""
    record = state_dir / "server.json"
    if not record.exists():
        return None
    pid = json.loads(record.read_text()).get("pid")
    if not isinstance(pid, int) or pid <= 0 or not process_alive(pid):
        return None
    proc = Path("/proc") / str(pid)
    if not proc.is_dir():  # no /proc (macOS): the record is all there is to go by
        return pid
    with suppress(OSError):
        args = (proc / "cmdline").read_bytes().decode(errors="replace").split("\0")
        cwd = Path(os.readlink(proc / "cwd"))
        served = [args[i + 1] for i, a in enumerate(args[:-1]) if a == "--state-dir"]
        if any((cwd / s).resolve() == state_dir.resolve() for s in served):
            return pid
    return None


def _stop_group(pid: int, grace_seconds: float) -> bool:
    """SIGTERM the process group `pid` leads, SIGKILL it if `pid` still runs after
    `grace_seconds`; False when it was not running."""
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
