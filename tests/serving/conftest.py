"""One real endpoint with `blue` and `green`, both serving `qa_model_dir` (tests/conftest.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from cli.endpoint import MASKER
from serving.client import EndpointClient, RunningEndpoint, serve_in_thread
from serving.settings import ServerSettings

MAX_BODY = 64 * 1024  # small, so the oversized-payload test sends little
MAX_RECORDS, MAX_TOKENS = 500, 10_000  # per request: small, for the same reason


@pytest.fixture(scope="session")
def running(
    tmp_path_factory: pytest.TempPathFactory, qa_model_dir: Path
) -> Iterator[RunningEndpoint]:
    """An endpoint on a free loopback port serving `qa_model_dir` as `blue` and `green`, its
    traffic collected masked by the screen's recognizers (as `tunegate endpoint serve` does)."""

    state = tmp_path_factory.mktemp("endpoint")
    settings = ServerSettings(
        key_file=state / "key",
        state_dir=state,
        max_body_bytes=MAX_BODY,
        max_request_records=MAX_RECORDS,
        max_request_tokens=MAX_TOKENS,
        max_batch_size=8,
        max_wait_ms=20,
        seed=7,
    )
    with (
        serve_in_thread(settings, masker=MASKER) as endpoint,
        endpoint.client() as client,
    ):
        client.put_deployment("blue", str(qa_model_dir), version="qa:1")
        client.put_deployment("green", str(qa_model_dir), version="qa:2")
        client.set_traffic({"blue": 100})
        yield endpoint


@pytest.fixture
def client(running: RunningEndpoint) -> Iterator[EndpointClient]:
    with running.client() as c:
        yield c
