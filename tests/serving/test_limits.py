"""The endpoint trusts no client: a scoring key cannot administer, keys never reach a log, and
every request is bounded (nesting, characters per record, time); a deployment that cannot load
at start fails alone."""

from __future__ import annotations

import json
import shutil
import stat
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from platforms.endpoint import ensure_local_endpoint, stop_local_endpoint
from serving.api import DEPLOYMENT_HEADER, FaultSpec
from serving.auth import admin_key_file, read_key
from serving.client import RunningEndpoint, serve_in_thread
from serving.settings import ServerSettings
from tests.serving.conftest import MAX_RECORDS, MAX_TOKENS

QA = {"question": "How long did it take?", "context": "Order 7 arrived after 4 days."}


def _post(running: RunningEndpoint, body: bytes, key: str, **headers: str) -> httpx.Response:
    headers = {"Authorization": f"Bearer {key}", **headers}
    return httpx.post(f"{running.url}/score", content=body, headers=headers, timeout=60)


def test_the_scoring_key_scores_and_may_not_administer(running: RunningEndpoint) -> None:
    admin_file = admin_key_file(running.settings.key_file)
    assert stat.S_IMODE(admin_file.stat().st_mode) == 0o600 and running.score_key != running.key
    assert _post(running, json.dumps(QA).encode(), running.score_key).status_code == 200
    scoring = {"Authorization": f"Bearer {running.score_key}"}
    attempts = [
        ("GET", "/deployments", None),
        ("GET", "/metrics", None),
        ("PUT", "/traffic", {"traffic": {"green": 100}}),
        ("PUT", "/deployments/evil", {"model_dir": "/tmp", "fault": {"error_rate": 1.0}}),
        ("DELETE", "/deployments/green", None),
    ]
    for method, path, body in attempts:
        response = httpx.request(method, running.url + path, json=body, headers=scoring)
        assert response.status_code == 403, (method, path, response.text)
        assert str(admin_file) in response.json()["detail"]
    admin = {"Authorization": f"Bearer {running.key}"}
    assert httpx.get(f"{running.url}/deployments", headers=admin).status_code == 200


def test_nesting_characters_and_time_are_bounded(running: RunningEndpoint, client) -> None:
    deep = b'{"question": "q", "context": ' + b"[" * 5_000 + b"]" * 5_000 + b"}"
    response = _post(running, deep, running.score_key)
    assert response.status_code == 400 and "nested more than 32" in response.json()["detail"]

    limit = running.settings.max_input_chars
    long = {"question": "Who?", "context": "word " * (limit // 5 + 10)}
    response = _post(running, json.dumps(long).encode(), running.score_key)
    assert response.status_code == 413, response.text
    assert f"at most {limit} per record" in response.json()["detail"]
    batch = {"inputs": [QA, long]}
    response = _post(running, json.dumps(batch).encode(), running.score_key)
    assert response.status_code == 413 and "inputs[1]" in response.json()["detail"]


def test_records_and_tokens_per_request_are_bounded(running: RunningEndpoint) -> None:
    many = {"inputs": [QA] * (MAX_RECORDS + 1)}
    response = _post(running, json.dumps(many).encode(), running.score_key)
    assert response.status_code == 413, response.text
    assert response.json()["detail"] == (
        f"the request has {MAX_RECORDS + 1} records; this endpoint takes at most {MAX_RECORDS} "
        "per request (max_request_records): split it"
    )
    # 30 records of ~420 tokens each: every one within max_input_tokens, together over
    long = {"question": "How long?", "context": "Order seven arrived late again. " * 60}
    response = _post(running, json.dumps({"inputs": [long] * 30}).encode(), running.score_key)
    assert response.status_code == 413, response.text[:200]
    detail = response.json()["detail"]
    assert f"at most {MAX_TOKENS} per request (max_request_tokens)" in detail
    assert _post(running, json.dumps(long).encode(), running.score_key).status_code == 200


def test_bodies_that_once_froze_the_endpoint_are_refused_and_the_probes_answer(
    running: RunningEndpoint,
) -> None:
    """Issue 27: runs of escaped quotes made the nesting check take 87 s on the event loop."""
    quotes = b'\\"' * 30_000  # 60 KB of \" (the old check was quadratic in them)
    cases = [
        (b'{"question": "q", "context": "' + quotes, 400, "not valid JSON"),  # unterminated
        (b'{"question": "q", "context": "' + quotes + b'"}', 413, "(max_input_chars)"),
        (b'{"question": "q", "context": ' + b"[" * 20_000 + b"]" * 20_000 + b"}", 400, "nested"),
    ]
    for body, status, message in cases:
        response = _post(running, body, running.score_key)
        assert response.status_code == status and message in response.json()["detail"]
    for probe in ("/health/live", "/health/ready"):
        assert httpx.get(running.url + probe, timeout=60).status_code == 200


def test_a_big_batch_takes_turns_with_another_clients_request_and_the_probes_answer(
    running: RunningEndpoint, client
) -> None:
    """Issue 27: one client's batch of 5,000 records made another client's single request wait
    60 s and get a 504. Now the single request (and the probes) are answered while the big
    batch is still being scored."""
    records = [
        {"question": "Who closed it?", "context": f"Ticket {i} was closed by Ana on day {i}."}
        for i in range(120)  # 15 model calls of 8
    ]
    body = json.dumps({"inputs": records}).encode()
    finished: list[str] = []

    def big() -> httpx.Response:
        response = _post(running, body, running.score_key, **{DEPLOYMENT_HEADER: "green"})
        finished.append("big")
        return response

    before = client.metrics().deployments["green"].model_calls
    with ThreadPoolExecutor(1) as pool:
        sent = pool.submit(big)
        while client.metrics().deployments["green"].model_calls == before and not sent.done():
            time.sleep(0.01)  # until the big batch is being scored
        for probe in ("/health/live", "/health/ready"):
            assert httpx.get(running.url + probe, timeout=60).status_code == 200
            finished.append(probe)
        assert client.score(QA, deployment="green").deployment == "green"
        finished.append("single")
        response = sent.result()
    assert response.status_code == 200, response.text
    outputs = response.json()["outputs"]
    assert [r["context"][o["start"] : o["end"]] for r, o in zip(records, outputs, strict=True)] == [
        o["answer"] for o in outputs
    ]  # every record its own answer
    assert finished == ["/health/live", "/health/ready", "single", "big"]


def test_a_slow_request_gets_504_and_the_deployment_keeps_serving(
    qa_model_dir: Path, tmp_path: Path
) -> None:
    settings = ServerSettings(key_file=tmp_path / "key", score_timeout_s=0.5)
    with serve_in_thread(settings) as running, running.client() as client:
        client.put_deployment("slow", str(qa_model_dir), fault=FaultSpec(delay_ms=3_000))
        client.put_deployment("fast", str(qa_model_dir))
        client.set_traffic({"fast": 100})
        started = time.monotonic()
        response = httpx.post(
            f"{running.url}/score",
            json=QA,
            headers={"Authorization": f"Bearer {running.key}", "azureml-model-deployment": "slow"},
            timeout=60,
        )
        assert response.status_code == 504 and "score_timeout_s" in response.json()["detail"]
        assert time.monotonic() - started < 3.0  # answered at the timeout, not after the model
        assert client.score(QA).deployment == "fast"


def test_a_deployment_that_cannot_load_fails_alone(qa_model_dir: Path, tmp_path: Path) -> None:
    settings = ServerSettings(key_file=tmp_path / "key", state_dir=tmp_path / "state")
    gone = tmp_path / "gone-model"
    shutil.copytree(qa_model_dir, gone)
    with serve_in_thread(settings) as first, first.client() as client:
        client.put_deployment("blue", str(qa_model_dir), version="qa:1")
        client.put_deployment("green", str(gone), version="qa:2")
        client.set_traffic({"blue": 60, "green": 40})
    shutil.rmtree(gone)  # one model directory lost while the endpoint was down
    with serve_in_thread(settings) as second, second.client() as client:
        status = client.status()
        assert [d.name for d in status.deployments] == ["blue"]
        assert set(status.failed) == {"green"} and "cannot load at start" in status.failed["green"]
        assert status.traffic.traffic == {"blue": 100}
        assert client.score(QA).deployment == "blue"
        saved = json.loads((tmp_path / "state" / "endpoint.json").read_text())
        assert set(saved["deployments"]) == {"blue", "green"}  # tried again at the next start
        assert saved["intended_traffic"]["traffic"] == {"blue": 60, "green": 40}
    shutil.copytree(qa_model_dir, gone)  # the files restored: served as before the failure
    with serve_in_thread(settings) as third, third.client() as client:
        assert client.status().traffic.traffic == {"blue": 60, "green": 40}
        assert client.status().failed == {}
    shutil.rmtree(gone)
    with serve_in_thread(settings) as fourth, fourth.client() as client:
        client.set_traffic({"blue": 100})  # traffic set by hand replaces the saved intent
        client.delete_deployment("green")
        assert client.status().failed == {}
        saved = json.loads((tmp_path / "state" / "endpoint.json").read_text())
        assert "intended_traffic" not in saved and saved["traffic"]["traffic"] == {"blue": 100}


@pytest.mark.slow
def test_no_key_reaches_the_server_log_and_the_log_is_private(tmp_path: Path) -> None:
    state = tmp_path / "endpoint"
    url, key_file = ensure_local_endpoint(state)
    try:
        key = read_key(key_file)
        httpx.post(f"{url}/score?key={key}&token=s3cret-in-query", json=QA)
        httpx.get(f"{url}/deployments?api_key={key}", headers={"Authorization": f"Bearer {key}"})
        log = state / "server.log"
        deadline = time.monotonic() + 10
        while "/deployments" not in log.read_text() and time.monotonic() < deadline:
            time.sleep(0.1)
        text = log.read_text()
        assert "/deployments" in text and "/score" in text  # the requests were logged
        assert key not in text and "s3cret-in-query" not in text
        assert stat.S_IMODE(log.stat().st_mode) == 0o600
    finally:
        stop_local_endpoint(state)


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.slow
def test_a_record_over_the_token_limit_gets_413_naming_it(
    qa_model_dir: Path, tmp_path: Path, workers: int
) -> None:
    settings = ServerSettings(key_file=tmp_path / "key", max_input_tokens=40)
    with serve_in_thread(settings) as running, running.client() as client:
        client.put_deployment("blue", str(qa_model_dir), workers=workers)
        client.set_traffic({"blue": 100})
        assert client.score(QA).deployment == "blue"  # a few tokens: answered
        long = {"question": "How long?", "context": "Order seven arrived late again. " * 10}
        response = _post(running, json.dumps(long).encode(), running.score_key)
        assert response.status_code == 413, response.text
        assert "tokens" in response.json()["detail"] and "at most 40" in response.json()["detail"]
