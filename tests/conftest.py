"""Shared fixtures: one Prefect test API, one real `prefect server start` (with
`tunegate deployments serve`), Azurite, and a QA model directory built without training."""

from __future__ import annotations

import os
import sys

os.environ.setdefault("TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS", "")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
# Approvals are signed with this key in tests (and the processes they start), not the user's own.
os.environ.setdefault("TUNEGATE_APPROVAL_KEY", "tests-only approval signing key")
# The endpoints runs start collect nothing: loading the masker costs each server process ~3 s of
# CPU. tests/serving/ collects (its shared endpoint and test_collect.py, which sets it back).
os.environ.setdefault("TUNEGATE_COLLECT", "0")
# Two xdist workers share two cores, and most slow tests start processes that compute with torch:
# each computes on one thread rather than two spinning against the other worker's (the flow tests
# took 16% less CPU and 18% less time so, 2026-11-30). The product's own processes are untouched:
# this is the tests' environment only.
os.environ.setdefault("OMP_NUM_THREADS", "1")
# DeepSpeed's CPU ops are built (torch's JIT extensions) into the test venv, not the user's cache
# that other checkouts share: see the deepspeed_cpu_ops fixture.
os.environ.setdefault("TORCH_EXTENSIONS_DIR", os.path.join(sys.prefix, "torch-extensions"))
# The venv's tools first, as in an activated venv and in the Azure ML jobs the tests run
# (tests/azureml/job_runner.py): torch builds DeepSpeed's op with the first `ninja` on PATH, and
# a build by another ninja version (the system's 1.11, the venv's 1.13) reads as changed and is
# built again, a minute of both cores each time (three builds per CI run before, 2026-11-30).
os.environ["PATH"] = os.pathsep.join([os.path.dirname(sys.executable), os.environ.get("PATH", "")])

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from flows.config import PipelineConfig, validate_config
from platforms.compute import DaskConfig

DASK = DaskConfig(n_workers=2, threads_per_worker=1, memory_limit="3GiB", partition_rows=200)


@pytest.fixture(scope="session")
def deepspeed_cpu_ops() -> None:
    """DeepSpeed on the CPU JIT-builds its shared-memory op (g++: a minute or more on two busy
    cores) in the first process that starts its distributed backend, under a lock file that every
    other process waits on without end. A job killed while it holds that lock (a test's timeout,
    a preemption) leaves it behind, and every later DeepSpeed job hangs. So the tests that
    launch DeepSpeed jobs have it built here first, in the test process (both xdist workers may
    call this at once: one builds, the other waits), and a lock older than any build is removed."""
    import time

    from deepspeed.accelerator import get_accelerator

    builder = get_accelerator().create_op_builder("ShareMemCommBuilder")
    if builder is None:  # an accelerator that needs no such op
        return
    lock = Path(os.environ["TORCH_EXTENSIONS_DIR"]) / builder.NAME / "lock"
    if lock.exists() and time.time() - lock.stat().st_mtime > 900:
        lock.unlink(missing_ok=True)
    builder.load(verbose=False)


@pytest.fixture(scope="session")
def prefect_api() -> Iterator[None]:
    """A temporary Prefect server (a subprocess) and database for flow tests; tests using it are
    `slow`."""
    from prefect.testing.utilities import prefect_test_harness

    with prefect_test_harness(server_startup_timeout=120):
        yield


@pytest.fixture(scope="session")
def _prefect_server_env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    from tests.prefect_server import prefect_server

    with prefect_server(tmp_path_factory.mktemp("prefect-home")) as env:
        yield env


@pytest.fixture
def prefect_server(_prefect_server_env: dict[str, str]) -> Iterator[dict[str, str]]:
    """A real `prefect server start` (API and UI), shared by the session; this test's client
    talks to it. Yields the environment for subprocesses (PREFECT_API_URL, PREFECT_HOME). Tests
    using it are `slow`."""
    from prefect.settings import PREFECT_API_URL, temporary_settings

    _fresh_prefect_services()  # this test's events and logs go to the real server...
    with temporary_settings(updates={PREFECT_API_URL: _prefect_server_env["PREFECT_API_URL"]}):
        yield _prefect_server_env
    _fresh_prefect_services()  # ...and the next harness test's go to the harness again


def _fresh_prefect_services() -> None:
    """Drain and stop this process's Prefect event and API-log workers. Each is one instance
    per process, whatever the API URL: made during a flow run on the real server, it would keep
    sending the harness's later events (its task runs among them) to that server."""
    from prefect.events.worker import EventsWorker
    from prefect.logging.handlers import APILogWorker

    for service in (EventsWorker, APILogWorker):
        service.drain_all(timeout=30)


@pytest.fixture(scope="module")
def azurite(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A running Azurite on a free loopback port, one per test module; yields its connection
    string. Tests using it are `slow`."""
    from tests.azurite import azurite_blob

    folder = tmp_path_factory.mktemp("azurite")
    with azurite_blob(folder) as connection:
        yield connection
    shutil.rmtree(folder, ignore_errors=True)  # its blobs, once the module is done with them


@pytest.fixture(scope="session")
def qa_model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The packaged MiniLM with a fresh (seeded) QA head: answers are spans, not good ones."""
    from trainer.args import PACKAGED_MODEL
    from trainer.modeling import load_base, load_tokenizer, write_model_info

    path = tmp_path_factory.mktemp("qa-model")
    load_base("extractive-qa", PACKAGED_MODEL, 42).save_pretrained(path)
    load_tokenizer(PACKAGED_MODEL).save_pretrained(path)
    write_model_info(path, "extractive-qa", PACKAGED_MODEL, adapter=False)
    return path


@pytest.fixture(scope="session")
def chat_model_dirs(tmp_path_factory: pytest.TempPathFactory) -> dict[int, Path]:
    """Two packaged MiniLM decoders saved as trained chat models, their new LM heads seeded 42
    and 7: the same model twice, or two different models. Lengths: 64 tokens in, 8 out."""
    from trainer.kinds.causal import with_chat_template
    from trainer.modeling import load_base, load_tokenizer, write_model_info
    from trainer.taskspec import PACKAGED_DECODER

    dirs = {}
    for seed in (42, 7):
        path = tmp_path_factory.mktemp(f"chat-model-{seed}")
        load_base("causal-lm", PACKAGED_DECODER, seed).save_pretrained(path)
        with_chat_template(load_tokenizer(PACKAGED_DECODER)).save_pretrained(path)
        write_model_info(
            path, "causal-lm", PACKAGED_DECODER, False, max_length=64, max_new_tokens=8
        )
        dirs[seed] = path
    return dirs


PREFECT_SERVER_GROUP = "prefect-server"
# In-process flow runs on the real server (tests/flows/test_automations.py runs `retrain` in this
# process against it) leave the process's Prefect events client unable to reach the harness
# started after it: harness runs then lose their task runs and artifacts. The harness's tests
# therefore run before the real server's in one process, and on the other worker under xdist
# (the two groups are the first two units, which xdist hands to different workers).
PREFECT_HARNESS_GROUP = "prefect-harness"
_FIRST = (PREFECT_SERVER_GROUP, PREFECT_HARNESS_GROUP)


def _xdist_group(item: pytest.Item) -> str:
    """The unit of work an xdist worker takes whole: every test on the session's real Prefect
    server (one server, and `served` after the worker test on it), every test on Prefect's test
    harness (`prefect_api`), otherwise the test's module (its module-scoped fixtures, e.g.
    Azurite, start once)."""
    fixtures = getattr(item, "fixturenames", ())
    if "_prefect_server_env" in fixtures:
        return PREFECT_SERVER_GROUP
    if "prefect_api" in fixtures:
        return PREFECT_HARNESS_GROUP
    return item.nodeid.split("::")[0]


@pytest.hookimpl(tryfirst=True)  # before xdist reads the xdist_group marks
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests that use `served` run last: once started, `tunegate deployments serve` polls for runs
    of retrain/nightly and retrain/manual for the rest of the session, so a worker test after it
    (tests/flows/test_worker_run.py, same deployment names) would race it for its run.

    Under pytest-xdist (`make test`: `-n 2 --dist loadgroup --no-loadscope-reorder`) each test
    is marked with its group (`_xdist_group`) and the groups with the most slow tests go first,
    so the longest units start early and no worker is left with one at the end."""
    if not hasattr(config, "workerinput"):  # not an xdist worker: collection order
        items.sort(
            key=lambda item: (
                "_prefect_server_env" in getattr(item, "fixturenames", ()),
                "served" in getattr(item, "fixturenames", ()),
            )
        )
        return
    groups = {id(item): _xdist_group(item) for item in items}
    slow: dict[str, int] = {}  # a group's slow tests, in the order the groups first appear
    for item in items:
        group = groups[id(item)]
        slow[group] = slow.get(group, 0) + bool(item.get_closest_marker("slow"))
        item.add_marker(pytest.mark.xdist_group(group))
    rank = {
        group: (_FIRST.index(group) if group in _FIRST else len(_FIRST), -count, i)
        for i, (group, count) in enumerate(slow.items())
    }
    items.sort(
        key=lambda item: (rank[groups[id(item)]], "served" in getattr(item, "fixturenames", ()))
    )


@pytest.fixture(scope="session")
def _served(
    _prefect_server_env: dict[str, str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Path]:
    from tests.prefect_server import tunegate_serve

    log = tmp_path_factory.mktemp("serve") / "serve.log"
    with tunegate_serve(_prefect_server_env, log, limit=3):
        yield log


@pytest.fixture
def served(prefect_server: dict[str, str], _served: Path) -> Path:
    """`tunegate deployments serve` (retrain/nightly and retrain/manual) against
    `prefect_server`, for the session: runs of retrain/manual start as its subprocesses. Returns
    its log file."""
    return _served


@pytest.fixture
def make_config(tmp_path: Path) -> Callable[..., PipelineConfig]:
    """A PipelineConfig on a fresh store in tmp_path, on the session's LocalCluster."""

    def make(**sections: Any) -> PipelineConfig:
        data: dict[str, Any] = {
            "store": str(tmp_path / "store"),
            "dask": DASK.model_dump(),
            "until": "split",  # the data half; model-half tests ask for more
        }
        data.update(sections)
        # the test splits here hold a few records: the gate judges them (tests/tasks/test_gate.py
        # has the default's "cannot judge")
        data["evaluate"] = {"min_test_records": 1, **(data.get("evaluate") or {})}
        return validate_config(data)

    return make


def write_jsonl(path: Path, lines: list[str | bytes]) -> Path:
    """Write raw lines (str or bytes) as a JSONL file."""
    path.write_bytes(b"\n".join(x if isinstance(x, bytes) else x.encode() for x in lines) + b"\n")
    return path


class WebhookReceiver:
    """A real HTTP server on a free loopback port that records JSON POSTs (a webhook's far end).

    `statuses` are answered in order (then 200), so tests can make it fail first."""

    def __init__(self) -> None:
        import http.server
        import threading

        received: list[dict[str, Any]] = []
        statuses: list[int] = []
        self.received, self.statuses = received, statuses

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                import json

                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                received.append(json.loads(body))
                self.send_response(statuses.pop(0) if statuses else 200)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def events(self) -> list[str]:
        return [r["event"] for r in self.received]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def webhook() -> Iterator[WebhookReceiver]:
    receiver = WebhookReceiver()
    yield receiver
    receiver.close()
