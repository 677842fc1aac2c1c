"""Watching a deployment: what the endpoint collects of its traffic is masked before it is written,
bounded on disk, summarised by `tunegate endpoint traffic`; Azure ML's scoring script sends the
same masked records to Azure ML's data collector."""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from cli.endpoint import MASKER
from cli.main import app
from serving import scoring
from serving.client import EndpointClient, RunningEndpoint
from serving.collect import (
    COLLECTED,
    VERSION_ENV,
    Collection,
    Exchange,
    JsonlSink,
    correlation_id,
    jsonl_sink,
    read_records,
    routed_of,
)

EMAIL = "dana.whitfield@example.org"
QUESTION = f"Which depot shipped parcel 81 for {EMAIL}?"
CONTEXT = f"Parcel 81 for {EMAIL} (call +1 415 555 0134) left the Leeds depot on Monday."


def _collected(folder: Path, marker: str, timeout: float = 60.0) -> list[dict]:
    """The records of `folder` whose request mentions `marker`, once there are any."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = [r for r in read_records(folder) if marker in json.dumps(r)]
        if found:
            return found
        time.sleep(0.1)
    raise AssertionError(f"nothing mentioning {marker!r} was collected in {folder}")


def test_a_request_is_collected_masked_and_summarised(
    running: RunningEndpoint, client: EndpointClient
) -> None:
    client.set_traffic({"blue": 100})
    answer = client.score({"question": QUESTION, "context": CONTEXT}).body
    refused = httpx.post(
        f"{running.url}/score",
        content=b'{"question": "parcel 82?"}',
        headers={"Authorization": f"Bearer {running.key}"},
        timeout=30,
    )
    assert refused.status_code == 400
    folder = running.settings.state_dir / COLLECTED
    [record] = _collected(folder, "parcel 81")
    _collected(folder, "missing field 'context'")  # the refusal, written after it

    # the e-mail (and the phone) never reach the disk; the rest of the request does
    written = b"".join(p.read_bytes() for p in folder.iterdir())
    assert EMAIL.encode() not in written and b"555 0134" not in written
    assert record["inputs"] == [
        {
            "question": "Which depot shipped parcel 81 for <EMAIL_ADDRESS>?",
            "context": "Parcel 81 for <EMAIL_ADDRESS> (call <PHONE_NUMBER>) left the Leeds "
            "depot on Monday.",
        }
    ]
    assert (record["deployment"], record["version"], record["status"]) == ("blue", "qa:1", 200)
    assert record["routed"] == "traffic"  # the weights chose it: a user's request
    # the answer, masked as well (this model answers with the e-mail and the phone)
    masked = (
        answer["answer"]
        .replace(EMAIL, "<EMAIL_ADDRESS>")
        .replace("+1 415 555 0134", "<PHONE_NUMBER>")
    )
    assert record["outputs"][0]["answer"] == masked and record["latency_ms"] > 0
    assert (folder / "requests.jsonl").stat().st_mode & 0o777 == 0o600

    result = CliRunner().invoke(
        app,
        ["endpoint", "traffic", "--state-dir", str(running.settings.state_dir), "--json"],
    )
    assert result.exit_code == 0, result.output
    assert EMAIL not in result.output
    summaries = json.loads(result.output)[str(running.settings.state_dir)]
    [summary] = [s for s in summaries if s["deployment"] == "blue"]
    seen = [r for r in read_records(folder) if r["deployment"] == "blue"]
    assert summary["deployment"] == "blue" and summary["version"] == "qa:1"
    assert summary["requests"] == len(seen)
    assert summary["client_errors"] == sum(400 <= r["status"] < 500 for r in seen) >= 1
    assert summary["latency_ms"]["p50"] <= summary["latency_ms"]["p99"]
    assert "missing field 'context'" in summary["examples"][-1]["error"]
    table = CliRunner().invoke(
        app,
        ["endpoint", "traffic", "--state-dir", str(running.settings.state_dir)],
        env={"COLUMNS": "200"},
    )
    assert table.exit_code == 0 and "qa:1" in table.output and EMAIL not in table.output


def test_a_value_found_in_the_request_is_masked_in_the_answers_whole_or_cut() -> None:
    from screening.outputs import traffic_masker

    mask = traffic_masker()
    answers = [EMAIL, "dana.whitfield@exa", "Parcel 81 for dana.whit", "field@example.org (call"]
    masked = mask({"inputs": [{"question": QUESTION, "context": CONTEXT}], "outputs": answers})
    assert masked["outputs"] == [
        "<EMAIL_ADDRESS>",
        "<EMAIL_ADDRESS>",
        "Parcel 81 for <EMAIL_ADDRESS>",
        "<EMAIL_ADDRESS> (call",
    ]
    # pieces of nothing found, and short ones, stay
    assert mask(["Leeds depot", "dana", "81"]) == ["Leeds depot", "dana", "81"]


def _exchange(i: int) -> Exchange:
    return Exchange("blue", "qa:1", 200, 1.0, [{"question": f"q{i:04d}" + "x" * 200}], [{"a": i}])


def test_collected_files_are_rotated_and_bounded(tmp_path: Path) -> None:
    sink = JsonlSink(tmp_path, max_bytes=4096, keep=2)
    for i in range(200):
        sink.write(_exchange(i))
    files = sorted(p.name for p in tmp_path.iterdir())
    assert files == ["requests.1.jsonl", "requests.2.jsonl", "requests.jsonl"]
    assert all(p.stat().st_size <= 4096 for p in tmp_path.iterdir())
    kept = [r["outputs"][0]["a"] for r in read_records(tmp_path)]
    assert kept == list(range(200 - len(kept), 200))  # the newest, oldest first


def test_nothing_is_collected_when_the_masker_cannot_load(tmp_path: Path) -> None:
    collection = Collection("serving.no_such_module:masker", [jsonl_sink(tmp_path, 4096, 1)])
    collection.submit(_exchange(1))
    collection.close()
    assert not list(tmp_path.iterdir())  # never written unmasked
    assert collection.failed == "the collection writer exited with code 3"


class Sidecar:
    """Azure ML's data collection sidecar as the collector's sender reaches it: every POST."""

    def __init__(self) -> None:
        import http.server

        received = self.received = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                received.append((self.path, dict(self.headers), json.loads(body)))
                self.send_response(200)
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()


@pytest.fixture
def sidecar(monkeypatch: pytest.MonkeyPatch) -> Iterator[Sidecar]:
    """The variables a deployment with data collection gives the scoring process, pointing at a
    local sidecar."""
    receiver = Sidecar()
    monkeypatch.setenv("AZUREML_MDC_ENABLED", "true")
    monkeypatch.setenv("AZUREML_MDC_HOST", "127.0.0.1")
    monkeypatch.setenv("AZUREML_MDC_PORT", str(receiver.port))
    monkeypatch.setenv("TUNEGATE_COLLECT", "1")  # the deployment's (tests/conftest.py: 0)
    yield receiver
    receiver.server.shutdown()


@pytest.mark.slow
def test_the_azure_ml_scoring_script_collects_masked_records(
    sidecar: Sidecar, qa_model_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AZUREML_MODEL_DIR", str(qa_model_dir))
    monkeypatch.setenv(VERSION_ENV, "tunegate-extractive-qa:3")  # set on tunegate's deployments
    scoring.init(MASKER)  # what the deployment's score.py calls
    try:
        answer = scoring.run(json.dumps({"question": QUESTION, "context": CONTEXT}))
    finally:
        assert scoring._collection is not None
        scoring._collection.close()  # the writer sends what it holds, then exits
        scoring._collection, scoring._scorer = None, None
    sent = {h["ce-type"]: (path, h, body) for path, h, body in sidecar.received}
    assert set(sent) == {"azureml.inference.model_inputs", "azureml.inference.model_outputs"}
    (path, inputs_headers, inputs), (_, outputs_headers, outputs) = (
        sent["azureml.inference.model_inputs"],
        sent["azureml.inference.model_outputs"],
    )
    assert path == "/modeldata/log"
    assert inputs == [
        {
            "question": "Which depot shipped parcel 81 for <EMAIL_ADDRESS>?",
            "context": "Parcel 81 for <EMAIL_ADDRESS> (call <PHONE_NUMBER>) left the Leeds "
            "depot on Monday.",
        }
    ]
    assert len(outputs) == 1 and answer["answer"] and EMAIL not in json.dumps(outputs)
    # one request's rows, joined by its correlation id (the exchange's id), stamped with the
    # time it was answered and labelled with the deployment's version (tasks/monitor_azure.py)
    assert inputs_headers["ce-x-request-id"] == outputs_headers["ce-x-request-id"]
    assert re.fullmatch(r"[0-9a-f]{32}", inputs_headers["ce-x-request-id"])
    assert inputs_headers["ce-time"] == outputs_headers["ce-time"]
    assert abs(int(inputs_headers["ce-time"]) - time.time()) < 600
    assert inputs_headers["ce-model-version"] == "tunegate-extractive-qa:3"


@pytest.mark.parametrize("routed", ["traffic", "named", "mirror"])
def test_how_a_request_was_routed_survives_the_azure_ml_correlation_id(routed: str) -> None:
    exchange = Exchange("green", "m:2", 200, 1.0, [{"q": 1}], [{"a": 1}], routed=routed)
    collected = correlation_id(exchange)
    assert routed_of(collected) == routed
    assert collected == (exchange.id if routed == "traffic" else f"{routed}-{exchange.id}")


def test_the_scoring_script_reads_a_named_request_from_its_headers() -> None:
    # the inference server hands `request_headers` as Flask spells them
    assert scoring.routed_by({"Azureml-Model-Deployment": "green", "Content-Type": "x"}) == "named"
    assert scoring.routed_by({"Content-Type": "application/json"}) == "traffic"
    assert scoring.routed_by({"azureml-model-deployment": ""}) == "traffic"
