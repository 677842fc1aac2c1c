"""Real Prefect processes for the slow tests: `prefect server start` (API and UI),
`tunegate deployments serve` and `prefect worker start`.

Both run as subprocesses in their own process group on a free loopback port, with their own
PREFECT_HOME, and are stopped (SIGTERM, then SIGKILL) by the fixtures in conftest.py.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from uuid import UUID

import yaml
from prefect import get_client
from prefect.client.schemas.objects import FlowRun

ROOT = Path(__file__).resolve().parents[1]
SERVER_START_SECONDS = 90
SERVE_START_SECONDS = 60
WORKER_START_SECONDS = 60
_PREFECT_SERVER = [sys.executable, "-m", "prefect", "server", "start", "--host", "127.0.0.1"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def stop(proc: subprocess.Popen) -> None:
    """SIGTERM the process group a test started, SIGKILL it if it lingers."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(5)


def wait_until(
    ready: Callable[[], bool], proc: subprocess.Popen, log: Path, seconds: float
) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"{proc.args} exited {proc.returncode}:\n{log.read_text()}")
        if ready():
            return
        time.sleep(0.5)
    raise AssertionError(f"{proc.args} not ready after {seconds}s:\n{log.read_text()[-4000:]}")


def _healthy(url: str) -> bool:
    with contextlib.suppress(OSError), urllib.request.urlopen(f"{url}/health", timeout=2) as r:
        return r.status == 200
    return False


@contextlib.contextmanager
def prefect_server(home: Path, scheduler: bool = False) -> Iterator[dict[str, str]]:
    """`prefect server start` with its UI on a free port; yields the env its clients need.

    Its scheduler service is off unless `scheduler`: the runs of the session's shared server are
    the tests' own (with it, the served and applied deployments' schedules add their future runs,
    the nightly's first among the runs tests search by expected start, and the every-minute
    watchers' runs would start). tests/flows/test_schedules.py starts one with it on."""
    port = free_port()
    url = f"http://127.0.0.1:{port}/api"
    env = {
        **os.environ,
        "PREFECT_HOME": str(home),
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "PREFECT_SERVER_SERVICES_SCHEDULER_ENABLED": "true" if scheduler else "false",
        "PREFECT_SERVER_UI_ENABLED": "true",  # the browser test approves in the UI
        "PREFECT_API_URL": url,
        "PREFECT_UI_URL": f"http://127.0.0.1:{port}",
        "TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS": "",
        "HF_HUB_OFFLINE": "1",
    }
    log = home / "server.log"
    with background([*_PREFECT_SERVER, "--port", str(port)], env, log) as proc:
        wait_until(lambda: _healthy(url), proc, log, SERVER_START_SECONDS)
        yield env


@contextlib.contextmanager
def background(command: list[str], env: dict[str, str], log: Path) -> Iterator[subprocess.Popen]:
    """`command` in a session of its own, output to `log`; its process group stopped after."""
    with log.open("wb") as out:
        proc = subprocess.Popen(
            command,
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        yield proc
    finally:
        stop(proc)


@contextlib.contextmanager
def tunegate_serve(env: dict[str, str], log: Path, limit: int) -> Iterator[subprocess.Popen]:
    """`tunegate deployments serve --limit N` against the server in `env`, once both deployments
    exist."""
    command = [sys.executable, "-m", "cli", "deployments", "serve", "--limit", str(limit)]
    with background(command, {**env, "PREFECT_RUNNER_POLL_FREQUENCY": "1"}, log) as proc:
        # The runner polls for runs once it printed how to trigger them.
        wait_until(
            lambda: b"prefect deployment run" in log.read_bytes(), proc, log, SERVE_START_SECONDS
        )
        yield proc


@contextlib.contextmanager
def process_worker(env: dict[str, str], log: Path, pool: str) -> Iterator[subprocess.Popen]:
    """`prefect worker start --pool POOL` from the repo checkout, polling every second."""
    prefect = Path(sys.executable).with_name("prefect")  # the installed command, as a user runs it
    command = [str(prefect), "worker", "start", "--pool", pool]
    with background(command, {**env, "PREFECT_WORKER_QUERY_SECONDS": "1"}, log) as proc:
        wait_until(lambda: b"started!" in log.read_bytes(), proc, log, WORKER_START_SECONDS)
        yield proc


def wait_for_state(run_id: UUID, done: Callable[[FlowRun], bool], seconds: float) -> FlowRun:
    """Poll the API until `done(flow_run)`; AssertionError with the last state otherwise."""
    deadline = time.monotonic() + seconds
    with get_client(sync_client=True) as client:
        while True:
            run = client.read_flow_run(run_id)
            if done(run):
                return run
            if time.monotonic() > deadline:
                raise AssertionError(f"flow run {run_id} still {run.state} after {seconds}s")
            time.sleep(0.5)


def start_manual_run(store: Path, inputs: Path, name: str | None = None, **sections: Any) -> UUID:
    """Trigger retrain/manual through the API with approval `manual`, stopping after split
    unless `sections` (config sections, e.g. `until="rollout"`) say otherwise: the form's
    request names a config file written beside the store. `name`: the run's name, as the
    form's *Run Name* gives it (None: a generated one)."""
    config = {
        "store": str(store),
        "until": "split",
        "approval": {"poll_seconds": 1},
        "dask": {"n_workers": 1, "threads_per_worker": 1, "memory_limit": "2GiB"},
        **sections,
    }
    config_file = store.parent / f"{store.name}-config.yaml"
    config_file.write_text(yaml.safe_dump(config))
    request = {"inputs": [str(inputs)], "approval": "manual", "config_file": str(config_file)}
    # The sync client, not run_deployment: that returns a coroutine under Playwright's event loop.
    with get_client(sync_client=True) as client:
        deployment = client.read_deployment_by_name("retrain/manual")
        run = client.create_flow_run_from_deployment(
            deployment.id, parameters={"request": request}, name=name
        )
    return run.id


def artifacts(run_id: UUID) -> dict[str, str]:
    """The flow run's artifacts, key → data."""
    from prefect.client.schemas.filters import (
        ArtifactFilter,
        FlowRunFilter,
        FlowRunFilterId,
        TaskRunFilter,
    )
    from prefect.client.schemas.sorting import ArtifactSort

    with get_client(sync_client=True) as client:
        found = client.read_artifacts(  # 3.8.8's sync client sends None for unset fields
            artifact_filter=ArtifactFilter(),
            flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=[run_id])),
            task_run_filter=TaskRunFilter(),
            limit=50,
            offset=0,
            sort=ArtifactSort.CREATED_DESC,
        )
    return {a.key: str(a.data) for a in found if a.key}


def events_named(name: str, related_to: str | None = None, seconds: float = 30) -> list[Any]:
    """The events of this name the API has persisted (those related to the resource id
    `related_to`, e.g. `prefect.flow-run.<id>`, when given); polled until one is there, since the
    server persists events in batches, and [] after `seconds`."""
    from prefect.events.filters import EventFilter, EventNameFilter

    deadline = time.monotonic() + seconds
    with get_client(sync_client=True) as client:
        while True:
            page = client.read_events(EventFilter(event=EventNameFilter(name=[name])), limit=50)
            found = [
                e
                for e in page.events
                if related_to is None or any(r.id == related_to for r in e.related)
            ]
            if found or time.monotonic() > deadline:
                return found
            time.sleep(0.5)


def retrain_in_thread(
    retrain: Callable[..., Any], config: Any
) -> tuple[threading.Thread, dict[str, Any]]:
    """`retrain(config, return_state=True)` started in a thread that shares the caller's Prefect
    settings (its API), so a test can answer the run's pause; `out["state"]` once joined."""
    out: dict[str, Any] = {}
    ctx = contextvars.copy_context()
    thread = threading.Thread(
        target=ctx.run, args=(lambda: out.update(state=retrain(config, return_state=True)),)
    )
    thread.start()
    return thread, out


@contextlib.contextmanager
def tunegate_run(
    config: Any, env: dict[str, str], workdir: Path
) -> Iterator[tuple[subprocess.Popen, Path]]:
    """`tunegate run -c CONFIG --summary PATH` against the server in `env`, in a process of its
    own, as a user starts it: a flow run in this (pytest) process would leave Prefect's clients
    and event workers here pointed at that server, and the harness's later runs without their
    task runs and artifacts. Yields the process and its summary's path."""
    workdir.mkdir(parents=True, exist_ok=True)
    config_file, summary = workdir / "config.yaml", workdir / "summary.json"
    config_file.write_text(yaml.safe_dump(config.model_dump(mode="json", exclude_unset=True)))
    command = [sys.executable, "-m", "cli", "run", "-c", str(config_file)]
    command += ["--summary", str(summary)]
    with background(command, env, workdir / "run.log") as proc:
        yield proc, summary
