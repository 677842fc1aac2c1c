"""Watching a deployment: what the endpoint collects of its traffic is masked before it is written,
bounded on disk, summarised by `tunegate endpoint traffic`; Azure ML's scoring script sends the
same masked records to Azure ML's data collector."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from cli.main import app
from serving import scoring
from serving.client import EndpointClient, RunningEndpoint
from serving.collect import COLLECTED, Collection, Exchange, JsonlSink, read_records

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


def test_nothing_is_collected_unmasked_when_the_masker_fails(tmp_path: Path) -> None:
    def broken() -> None:
        raise ImportError("no presidio here")

    collection = Collection(broken, [JsonlSink(tmp_path)])  # type: ignore[arg-type]
    collection.submit(_exchange(1))
    collection.close()
    assert not list(tmp_path.iterdir())
    assert collection.failed and "no presidio here" in collection.failed


@pytest.fixture
def data_collector(monkeypatch: pytest.MonkeyPatch) -> Iterator[list]:
    """Azure ML's data collector as a deployment with data collection runs it, its sender off:
    what the scoring script collects stays in the collector's queue."""
    from azureml.ai.monitoring import init as mdc

    monkeypatch.setenv("AZUREML_MDC_ENABLED", "true")
    monkeypatch.setenv("AZUREML_MDC_WORKER_DISABLED", "true")
    mdc.teardown()
    yield []
    mdc.teardown()


def test_the_azure_ml_scoring_script_collects_masked_records(
    data_collector: list, qa_model_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from azureml.ai.monitoring.queue import get_queue

    from screening.outputs import traffic_masker

    monkeypatch.setenv("AZUREML_MODEL_DIR", str(qa_model_dir))
    scoring.init(traffic_masker)
    try:
        answer = scoring.run(json.dumps({"question": QUESTION, "context": CONTEXT}))
        assert scoring._collection is not None
        scoring._collection.flush()
    finally:
        scoring._collection, scoring._scorer = None, None
    queued = get_queue()
    payloads = [queued.dequeue()[0] for _ in range(queued.length())]
    by_name = {p.designation(): json.loads(p._data.to_json()) for p in payloads}
    assert set(by_name) == {"model_inputs", "model_outputs"}
    assert by_name["model_inputs"][0]["question"].endswith("for <EMAIL_ADDRESS>?")
    assert EMAIL not in json.dumps(by_name)
    assert EMAIL not in by_name["model_outputs"][0]["answer"]
    assert len(by_name["model_outputs"]) == 1 and answer["answer"]
    inputs, outputs = payloads if payloads[0].designation() == "model_inputs" else payloads[::-1]
    assert inputs.correlation_id() == outputs.correlation_id()  # one request's rows, joined
    assert os.environ["AZUREML_MDC_ENABLED"] == "true"
