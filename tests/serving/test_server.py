"""The local endpoint over real HTTP on a loopback port: routing, mirror, probes, auth, errors."""

from __future__ import annotations

import logging
import stat
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from serving.api import DEPLOYMENT_HEADER, FaultSpec
from serving.client import EndpointClient, EndpointError, RunningEndpoint, serve_in_thread
from serving.settings import ServerSettings
from tests.serving.conftest import MAX_BODY

CONTEXT = "Order 7 left the warehouse in Porto and arrived after 4 days."
QA = {"question": "How long did it take?", "context": CONTEXT}


def _post(running: RunningEndpoint, content: bytes, **headers: str) -> httpx.Response:
    auth = {"Authorization": f"Bearer {running.key}"}
    return httpx.post(
        f"{running.url}/score", content=content, headers={**auth, **headers}, timeout=30
    )


def test_qa_scoring_returns_a_span_of_the_context(client: EndpointClient) -> None:
    client.set_traffic({"blue": 100})
    result = client.score(QA)
    assert result.deployment == "blue"
    body = result.body
    assert body["answer"] and CONTEXT[body["start"] : body["end"]] == body["answer"]
    batch = client.score({"inputs": [QA, {**QA, "context": "Ana fixed it on Tuesday."}]})
    assert [len(o["answer"]) > 0 for o in batch.body["outputs"]] == [True, True]


@pytest.mark.slow
def test_traffic_is_split_by_weight(client: EndpointClient) -> None:
    client.set_traffic({"blue": 80, "green": 20})
    try:
        with ThreadPoolExecutor(8) as pool:
            answered = list(pool.map(lambda _: client.score(QA).deployment, range(200)))
    finally:
        client.set_traffic({"blue": 100})
    assert set(answered) == {"blue", "green"}
    assert 140 <= answered.count("blue") <= 180  # 160 expected; binomial sd is about 6


def test_header_forces_a_deployment_without_traffic(client: EndpointClient) -> None:
    client.set_traffic({"blue": 100})
    assert client.score(QA, deployment="green").deployment == "green"
    with pytest.raises(EndpointError) as err:
        client.score(QA, deployment="purple")
    assert err.value.status == 404 and "no deployment named 'purple'" in err.value.message


def test_mirror_traffic_is_counted_on_the_mirror_while_live_answers(client: EndpointClient) -> None:
    client.set_traffic({"blue": 100}, {"green": 50})
    before = client.metrics().deployments
    try:
        answered = [client.score(QA).deployment for _ in range(40)]
    finally:
        client.set_traffic({"blue": 100})
    after = client.metrics().deployments
    assert set(answered) == {"blue"}
    assert after["blue"].requests - before["blue"].requests == 40
    assert after["green"].requests == before["green"].requests  # copies are not live requests
    assert 8 <= after["green"].mirrored - before["green"].mirrored <= 32  # about 20 of 40


def test_micro_batcher_batches_concurrent_requests(client: EndpointClient) -> None:
    contexts = [
        f"Ticket {i} was closed by agent number {i} after {i + 2} calls." for i in range(16)
    ]
    before = client.metrics().deployments["green"].model_calls
    with ThreadPoolExecutor(16) as pool:
        bodies = list(
            pool.map(
                lambda c: client.score({"question": "Who?", "context": c}, "green").body, contexts
            )
        )
    calls = client.metrics().deployments["green"].model_calls - before
    assert calls < 16
    for c, body in zip(contexts, bodies, strict=True):  # each caller got its own answer
        assert c[body["start"] : body["end"]] == body["answer"]


def test_probes(client: EndpointClient, running: RunningEndpoint) -> None:
    live = httpx.get(f"{running.url}/health/live")  # no key needed
    assert live.status_code == 200
    client.set_traffic({"blue": 100})
    assert httpx.get(f"{running.url}/health/ready").status_code == 200
    assert client.ready("green") and not client.ready("purple")
    client.set_traffic({})
    try:
        not_ready = httpx.get(f"{running.url}/health/ready")
        assert not_ready.status_code == 503 and "no loaded deployment has traffic" in not_ready.text
        with pytest.raises(EndpointError) as err:
            client.score(QA)
        assert err.value.status == 503 and "PUT /traffic" in err.value.message
    finally:
        client.set_traffic({"blue": 100})


def test_auth(running: RunningEndpoint, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    key_file = running.settings.key_file
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": running.key}):
        for method, path in (("POST", "/score"), ("GET", "/metrics"), ("PUT", "/traffic")):
            response = httpx.request(method, f"{running.url}{path}", headers=headers, json=QA)
            assert response.status_code == 401, (headers, path)
            assert "Authorization: Bearer <key>" in response.json()["detail"]
            assert running.key not in response.text
    assert (
        _post(running, b'{"question": "Who?"}').status_code == 400
    )  # the right key is logged too?
    assert caplog.records and running.key not in caplog.text


def test_a_url_cannot_forge_a_line_of_the_log(
    running: RunningEndpoint, caplog: pytest.LogCaptureFixture
) -> None:
    """`%0a` in a path decodes to a newline: logged as an escape, on the request's own line."""
    caplog.set_level(logging.WARNING, logger="serving.server")
    forged = "/x%0a12:00:00.000 | INFO | deployment blue deleted%0d"
    assert httpx.get(running.url + forged).status_code == 401
    [line] = [r.getMessage() for r in caplog.records if "/x" in r.getMessage()]
    assert "\n" not in line and "\r" not in line
    assert line.startswith("401 GET /x\\n12:00:00.000 | INFO | deployment blue deleted\\r")


def test_bad_requests_get_4xx_with_a_message(running: RunningEndpoint) -> None:
    cases = [
        (_post(running, b"{not json"), 400, "not valid JSON"),
        (_post(running, b'{"question": "Who?"}'), 400, "missing field 'context'"),
        (_post(running, b'{"question": "Who?", "context": 5}'), 400, "'context' must be"),
        (_post(running, b"x" * (MAX_BODY + 1)), 413, "larger than"),
        (  # no Content-Length: the streamed body is counted
            _post(running, iter([b"x" * 4096] * (MAX_BODY // 4096 + 1))),  # type: ignore[arg-type]
            413,
            "larger than",
        ),
    ]
    for response, status, message in cases:
        assert response.status_code == status, response.text
        assert message in response.json()["detail"]


def test_admin_errors(client: EndpointClient, running: RunningEndpoint, tmp_path: Path) -> None:
    client.set_traffic({"blue": 100})
    with pytest.raises(EndpointError) as err:
        client.delete_deployment("blue")
    assert err.value.status == 409 and "PUT /traffic" in err.value.message
    with pytest.raises(EndpointError) as err:
        client.delete_deployment("purple")
    assert err.value.status == 404
    with pytest.raises(EndpointError) as err:
        client.set_traffic({"blue": 60, "green": 30})
    assert err.value.status == 422 and "sum to 100" in err.value.message
    with pytest.raises(EndpointError) as err:
        client.set_traffic({"blue": 100}, {"green": 60})
    assert err.value.status == 422 and "0..50" in err.value.message
    with pytest.raises(EndpointError) as err:
        client.put_deployment("orange", str(tmp_path / "nowhere"))
    assert err.value.status == 400 and "does not exist" in err.value.message
    auth = {"Authorization": f"Bearer {running.key}"}
    bad = httpx.put(f"{running.url}/deployments/orange", content=b"{", headers=auth)
    assert bad.status_code == 422 and "invalid request" in bad.json()["detail"]
    missing = httpx.put(f"{running.url}/deployments/orange", json={}, headers=auth)
    assert missing.status_code == 422 and "model_dir" in missing.json()["detail"]


def test_faulty_deployment_fails_with_500_and_counts_errors(
    client: EndpointClient, qa_model_dir: Path
) -> None:
    client.put_deployment("faulty", str(qa_model_dir), fault=FaultSpec(error_rate=1.0, delay_ms=5))
    try:
        with pytest.raises(EndpointError) as err:
            client.score(QA, deployment="faulty")
        assert err.value.status == 500 and "injected fault" in err.value.message
        metrics = client.metrics().deployments["faulty"]
        assert (metrics.requests, metrics.errors) == (1, 1)
        assert metrics.latency_ms["p99"] is not None
        names = [d.name for d in client.status().deployments]
        assert names == ["blue", "faulty", "green"]
    finally:
        client.delete_deployment("faulty")  # no traffic: allowed
    assert "faulty" not in client.metrics().deployments


def test_response_names_the_deployment(running: RunningEndpoint, client: EndpointClient) -> None:
    client.set_traffic({"blue": 100})
    response = _post(running, b'{"question": "Who?", "context": "Ana did."}')
    assert response.status_code == 200 and response.headers[DEPLOYMENT_HEADER] == "blue"


def test_deployments_and_traffic_survive_a_restart(qa_model_dir: Path, tmp_path: Path) -> None:
    settings = ServerSettings(key_file=tmp_path / "key", state_dir=tmp_path)
    with serve_in_thread(settings) as first, first.client() as client:
        client.put_deployment("blue", str(qa_model_dir), version="qa:1")
        client.set_traffic({"blue": 100})
    with serve_in_thread(settings) as second, second.client() as client:
        assert second.key == first.key
        status = client.status()
        assert [(d.name, d.version, d.traffic) for d in status.deployments] == [
            ("blue", "qa:1", 100)
        ]
        assert client.score(QA).deployment == "blue"


def test_a_client_sends_its_key_only_to_an_endpoint_that_proves_it_holds_it(
    tmp_path: Path,
) -> None:
    """Another program now on the endpoint's old port (or another endpoint) never sees the key:
    it cannot answer the client's challenge, so the request is not sent."""
    import http.server
    import threading

    seen: list[str | None] = []

    class Impostor(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            seen.append(self.headers.get("Authorization"))
            body = b'{"score": "0", "admin": "0"}'
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    impostor = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Impostor)
    threading.Thread(target=impostor.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{impostor.server_address[1]}"
        with EndpointClient(url, "k" * 32) as client, pytest.raises(EndpointError) as refused:
            client.status()
    finally:
        impostor.shutdown()
    assert refused.value.status == 421 and "key was not sent" in refused.value.message
    assert seen == [None]  # only the challenge came, without the key

    settings = ServerSettings(key_file=tmp_path / "key")
    with serve_in_thread(settings) as running:
        with running.client() as admin:
            assert admin.status().deployments == []  # the admin key's proof holds
        with EndpointClient(running.url, running.score_key) as scorer:
            with pytest.raises(EndpointError) as forbidden:
                scorer.status()  # the scoring key proves the server, then is refused: 403
            assert forbidden.value.status == 403
        with EndpointClient(running.url, "x" * 32) as stranger, pytest.raises(EndpointError) as no:
            stranger.status()  # a key this endpoint does not hold: never sent
        assert no.value.status == 421
