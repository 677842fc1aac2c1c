"""Azure AI Content Safety backend over real HTTP, against a local server shaped like the service."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from flows.config import ConfigError, load_config
from screening.content_safety import ContentSafetyError, content_safety_scores


class _Service(BaseHTTPRequestHandler):
    requests: list[dict[str, Any]] = []
    throttle_next = 0

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).requests.append(
            {"path": self.path, "key": self.headers.get("Ocp-Apim-Subscription-Key"), "body": body}
        )
        if type(self).throttle_next:
            type(self).throttle_next -= 1
            return self._reply(429, {"error": {"code": "TooManyRequests"}})
        if self.headers.get("Ocp-Apim-Subscription-Key") != "k3y":
            return self._reply(401, {"error": {"code": "InvalidSubscriptionKey"}})
        severity = 4 if "idiots" in body["text"] else 0
        self._reply(
            200,
            {
                "categoriesAnalysis": [
                    {"category": c, "severity": severity if c == "Hate" else 0}
                    for c in body["categories"]
                ]
            },
        )

    def _reply(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        return None


@pytest.fixture
def service() -> Iterator[str]:
    _Service.requests, _Service.throttle_next = [], 0
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Service)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def test_scores_come_from_the_worst_category_and_throttling_is_retried(
    service, monkeypatch
) -> None:
    monkeypatch.setenv("CS_KEY", "k3y")
    _Service.throttle_next = 1
    scores = content_safety_scores(
        ["Thanks for the quick fix!", "You idiots broke it again"],
        service,
        "CS_KEY",
        backoff_seconds=0.01,
    )
    assert scores == [0.0, 4 / 6]
    assert len(_Service.requests) == 3  # one throttled, then one per text
    first = _Service.requests[-1]
    assert first["path"] == "/contentsafety/text:analyze?api-version=2024-09-01"
    assert first["key"] == "k3y"
    assert first["body"]["categories"] == ["Hate", "SelfHarm", "Sexual", "Violence"]


def test_a_wrong_key_is_an_error_that_names_no_text(service, monkeypatch) -> None:
    monkeypatch.setenv("CS_KEY", "wrong")
    with pytest.raises(ContentSafetyError, match=r"401.*InvalidSubscriptionKey") as info:
        content_safety_scores(["my email is ann@example.com"], service, "CS_KEY")
    assert "ann@example.com" not in str(info.value)


def test_a_missing_key_or_endpoint_is_reported(monkeypatch) -> None:
    monkeypatch.delenv("CS_KEY", raising=False)
    with pytest.raises(ContentSafetyError, match=r"\$CS_KEY"):
        content_safety_scores(["x"], "http://127.0.0.1:9", "CS_KEY")
    with pytest.raises(ConfigError, match=r"needs toxicity\.endpoint"):
        load_config(None, ["screen.toxicity.backend=azure-content-safety"])
