"""One writer at a time: rollouts to one endpoint take turns, and two runs starting the local
endpoint at once find one server."""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from platforms.endpoint import _WHEN_RECORDED, ensure_local_endpoint, stop_local_endpoint
from platforms.lineage import Lineage
from platforms.locks import file_lock, process_alive

HOLD = """
import sys, time
from pathlib import Path
from platforms.locks import file_lock
with file_lock(Path(sys.argv[1]), "test"):
    print("held", flush=True)
    time.sleep(600)
"""


def test_a_lock_is_exclusive_between_processes_and_freed_when_its_holder_dies(
    tmp_path: Path,
) -> None:
    lock = tmp_path / "locks" / "rollout.lock"
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(lock)], stdout=subprocess.PIPE, text=True,
        cwd=Path(__file__).resolve().parents[2],
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        entered = threading.Event()

        def take() -> None:
            with file_lock(lock, "a test"):
                entered.set()

        waiter = threading.Thread(target=take, daemon=True)
        waiter.start()
        assert not entered.wait(1.0)  # the other process holds it
        holder.send_signal(signal.SIGKILL)  # a killed run
        holder.wait()
        assert entered.wait(30)  # ... leaves no lock behind
        waiter.join()
    finally:
        if holder.poll() is None:
            holder.kill()


def _start(state: str, queue: multiprocessing.Queue) -> None:
    queue.put(ensure_local_endpoint(Path(state))[0])


@pytest.mark.slow
def test_two_runs_starting_the_endpoint_at_once_get_one_server(tmp_path: Path) -> None:
    state = tmp_path / "endpoint"
    queue: multiprocessing.Queue = multiprocessing.get_context("spawn").Queue()
    ctx = multiprocessing.get_context("spawn")
    starters = [ctx.Process(target=_start, args=(str(state), queue)) for _ in range(2)]
    for p in starters:
        p.start()
    try:
        urls = {queue.get(timeout=180) for _ in starters}
        for p in starters:
            p.join(60)
        assert len(urls) == 1  # both found the same server
        pid = json.loads((state / "server.json").read_text())["pid"]
        assert process_alive(pid)
        servers = subprocess.run(
            ["pgrep", "-f", f"endpoint serve .*--state-dir {state}"],
            capture_output=True, text=True, check=False,
        ).stdout.split()  # fmt: skip
        assert servers == [str(pid)], servers  # nothing untracked beside it
    finally:
        stop_local_endpoint(state)
        for p in starters:
            if p.is_alive():
                os.kill(p.pid, signal.SIGKILL)


def test_an_endpoint_server_its_starter_never_recorded_exits_without_serving(
    tmp_path: Path,
) -> None:
    """A run SIGKILLed between starting the server and writing `server.json` leaves no server
    beside the one the next run starts: the process becomes the server only once recorded, and
    it leaves as soon as the record names another server than the one it replaces."""
    record = tmp_path / "server.json"
    serve = ["-c", "print('serving')"]  # stands for `-m cli endpoint serve ...`
    orphan = subprocess.run(
        [sys.executable, "-c", _WHEN_RECORDED, str(record), "0.3", "-", *serve],
        capture_output=True, text=True, timeout=30,
    )  # fmt: skip
    assert orphan.returncode == 1 and "serving" not in orphan.stdout
    assert "the run that started this server was stopped" in orphan.stderr

    # the next run's server recorded: the orphan leaves now, not when its 600 s are over
    record.write_text(json.dumps({"pid": os.getpid()}))
    orphan = subprocess.run(
        [sys.executable, "-c", _WHEN_RECORDED, str(record), "600", "-", *serve],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert orphan.returncode == 1 and "serving" not in orphan.stdout
    assert f"names another server (pid {os.getpid()})" in orphan.stderr

    # the record still names the server this one replaces (being stopped): it waits for its own
    started = subprocess.Popen(
        [sys.executable, "-c", _WHEN_RECORDED, str(record), "30", str(os.getpid()), *serve],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    time.sleep(0.3)
    assert started.poll() is None
    record.write_text(json.dumps({"pid": started.pid}))  # what ensure_local_endpoint writes
    out, _ = started.communicate(timeout=30)
    assert started.returncode == 0 and out == "serving\n"


@pytest.mark.slow
def test_two_rollouts_to_one_endpoint_take_turns(
    prefect_api, make_config, qa_model_dir: Path, tmp_path: Path
) -> None:
    import threading

    from tasks.rollout import rollout_task
    from trainer.modeling import load_trained
    from trainer.predict import predict

    cfg = make_config(
        until="rollout",
        rollout={"steps": [50, 100], "hold_requests": 4, "min_requests": 2, "hold_seconds": 20,
                 "max_p95_ratio": 10.0, "p95_allowance_ms": 500.0,
                 # no users: each step's live window advances on the replay, at once
                 "live": {"on_cannot_judge": "smoke-only", "wait_seconds": 0}},
    )  # fmt: skip
    backends = cfg.backends()  # its registry signs the versions with the approval key
    registry = backends.registry
    first, second, third = (registry.register("qa", qa_model_dir, {}, Lineage()) for _ in range(3))
    request = {"question": "How long?", "context": "Order 7 arrived after 4 days."}
    model, tokenizer, _ = load_trained(qa_model_dir)
    record = {**request, "answers": {"text": [""], "answer_start": [0]}}
    samples = [
        {"request": request, "expected": predict(model, tokenizer, "extractive-qa", [record])[0]}
    ]
    try:
        rollout_task(backends, first, "extractive-qa", samples, cfg.rollout)  # a live deployment
        outcomes: dict[int, str] = {}
        errors: list[BaseException] = []

        def roll(version) -> None:
            try:
                record = rollout_task(backends, version, "extractive-qa", samples, cfg.rollout)
                outcomes[version.version] = record.outcome
            except BaseException as exc:  # noqa: BLE001 - reported below
                errors.append(exc)

        threads = [threading.Thread(target=roll, args=(v,)) for v in (second, third)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(300)
        assert not errors, errors  # without the lock both pick the idle colour: one gets a 422
        assert outcomes == {2: "promoted", 3: "promoted"}
        endpoint = backends.open_endpoint("qa")
        try:
            status = endpoint.status()
            assert [d.traffic for d in status.deployments] == [100]  # one live deployment
            assert endpoint.score(request).body["answer"]
        finally:
            endpoint.close()
    finally:
        stop_local_endpoint(Path(cfg.store) / "endpoints" / "qa")
