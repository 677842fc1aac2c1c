"""The monitor reads Azure ML's data collector output: what tunegate's scoring script collects
there, laid out as Azure ML writes it, on a real Blob API (Azurite).

The records are made by the scoring path's own code: each exchange masked by the screen's
traffic masker (`mask_exchange`), then handed to `serving.collect.AzureMLSink`, whose
`azureml-ai-monitoring` Collector posts it to the deployment's data collector sidecar. The test
plays that sidecar (tests/serving/test_collect.py's receiver on the collector's port) and lays
each payload out as Azure ML does: one line of the documented schema in
`{endpoint}/{deployment}/{collection}/{yyyy}/{MM}/{dd}/{HH}/{instance}.jsonl` (Microsoft Learn, "Collect production data from models for real-time
inferencing", "Store collected data in Blob Storage"), uploaded to Azurite. The same exchanges
are written by the local endpoint's JSON-lines sink, so the two readers can be compared.
"""

from __future__ import annotations

import json
import uuid
from collections import Counter, defaultdict
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from flows.config import PipelineConfig, validate_config
from screening.outputs import traffic_masker
from serving.collect import COLLECTED, VERSION_ENV, AzureMLSink, Exchange, JsonlSink, mask_exchange
from tasks.monitor_azure import AzureCollected, hours, parse_event
from tests.serving.test_collect import Sidecar
from tests.tasks.test_monitor import MODEL, _in_distribution, _monitor, _shifted, champion

__all__ = ["champion"]
CONTAINER = "azureml-blobstore-test"
ROOT = "modelDataCollector"
ENDPOINT = "monitored-qa-ep"
START = datetime(2026, 11, 10, tzinfo=UTC)


class Layout:
    """What the data collector writes of the posts a deployment's sidecar received: one line of
    the documented schema a payload, in the blob folder of the payload's hour."""

    def __init__(self) -> None:
        self.blobs: dict[str, list[str]] = defaultdict(list)  # {folder}/{instance}: lines
        self.posts: Counter[str] = Counter()

    def add(self, deployment: str, received: list[tuple[str, dict[str, str], Any]]) -> None:
        for _, sent, data in received:
            headers = {k.lower(): v for k, v in sent.items()}
            at = datetime.fromtimestamp(int(headers["ce-time"]), UTC)
            size = len(json.dumps(data))
            line = {
                "specversion": "1.0",
                "id": headers["trace-id"],
                "source": "/subscriptions/s/resourceGroups/g/providers/Microsoft."
                f"MachineLearningServices/workspaces/w/onlineEndpoints/{ENDPOINT}/"
                f"deployments/{deployment}",
                "type": headers["ce-type"],
                "datacontenttype": headers["content-type"],
                "time": at.strftime("%Y-%m-%dT%H:%M:%SZ"),
                "data": data,
                "correlationid": headers.get("ce-x-request-id", ""),
                "xrequestid": headers.get("ce-x-request-id", ""),
                "modelversion": headers.get("ce-model-version", "default"),
                "collectdatatype": headers["ce-collect-data-type"],
                "agent": headers["ce-agent"],
                "contentrange": f"bytes 0-{size - 1}/{size}",
            }
            collection = headers["ce-type"].removeprefix("azureml.inference.")
            folder = f"{ROOT}/{ENDPOINT}/{deployment}/{collection}/{at:%Y/%m/%d/%H}"
            # two instances write each hour: payloads alternate between their files
            self.posts[folder] += 1
            self.blobs[f"{folder}/{'ab'[self.posts[folder] % 2]}"].append(json.dumps(line))

    def upload(self, connection: str, extra: dict[str, list[str]] | None = None) -> None:
        from azure.storage.blob import BlobServiceClient

        service = BlobServiceClient.from_connection_string(connection)
        container = service.get_container_client(CONTAINER)
        if not container.exists():
            container.create_container()
        files = {
            f"{k[:-2]}/{uuid.uuid5(uuid.NAMESPACE_URL, k)}.jsonl": v for k, v in self.blobs.items()
        }
        for path, lines in {**files, **(extra or {})}.items():
            container.upload_blob(path, "\n".join(lines) + "\n", overwrite=True)


def _exchanges(
    requests: list[tuple[dict[str, Any], str]], at: datetime, deployment: str, version: int
) -> list[Exchange]:
    """What the scoring script hands the collector for each request answered at `at` (a
    request every 10 seconds); every seventh is refused as unreadable (400, no records)."""
    out = []
    for i, (request, answer) in enumerate(requests):
        refused = i % 7 == 6
        out.append(
            Exchange(
                deployment=deployment,
                version=f"{MODEL}:{version}",
                status=400 if refused else 200,
                latency_ms=10.0,
                inputs=[] if refused else [request],
                outputs=None
                if refused
                else [
                    {
                        "answer": answer,
                        "score": round(0.5 + (i % 40) / 100, 2),
                        "start": 0,
                        "end": 1,
                    }
                ],
                error="missing field: context" if refused else None,
                time=(at + timedelta(seconds=10 * i)).isoformat(timespec="milliseconds"),
            )
        )
    return out


def _collect(
    layout: Layout,
    exchanges: list[Exchange],
    local: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`exchanges` masked, then collected by the Azure ML sink (through the sidecar) and by the
    local endpoint's sink, as the writer process does with its two kinds of sink."""
    mask = traffic_masker()
    masked = [mask_exchange(mask, e) for e in exchanges]
    by_deployment: dict[str, list[Exchange]] = defaultdict(list)
    for exchange in masked:
        by_deployment[exchange.deployment or ""].append(exchange)
    monkeypatch.setenv("AZUREML_MDC_ENABLED", "true")
    monkeypatch.setenv("AZUREML_MDC_HOST", "127.0.0.1")
    for deployment, found in by_deployment.items():
        sidecar = Sidecar()  # each deployment has its own
        monkeypatch.setenv("AZUREML_MDC_PORT", str(sidecar.port))
        monkeypatch.setenv(VERSION_ENV, found[0].version or "")
        sink = AzureMLSink()
        for exchange in found:
            sink.write(exchange)
        sink.close()
        sidecar.server.shutdown()
        layout.add(deployment, sidecar.received)
    jsonl = JsonlSink(local)
    for exchange in sorted(masked, key=lambda e: e.time):
        jsonl.write(exchange)


@pytest.fixture
def collected(
    champion: tuple[PipelineConfig, list[dict[str, Any]]],
    azurite: str,
    monkeypatch: pytest.MonkeyPatch,
) -> tuple[PipelineConfig, list[Exchange], Layout]:
    """Two deployments' traffic over five hours, blue serving the champion (v1), green v2:
    hours 0-1 in distribution, hour 2 shifted, hours 3-4 in distribution again; uploaded."""
    config, unseen = champion
    layout = Layout()
    exchanges = []
    for hour, requests in enumerate(
        [
            _in_distribution(unseen[:60]),
            _in_distribution(unseen[60:120]),
            _shifted(60),
            _in_distribution(unseen[:40]),
            _in_distribution(unseen[40:80]),
        ]
    ):
        at = START + timedelta(hours=hour)
        exchanges += _exchanges(requests, at, "blue", 1)
        exchanges += _exchanges(requests[:12], at + timedelta(minutes=20), "green", 2)
    local = Path(config.store) / "endpoints" / MODEL / COLLECTED
    _collect(layout, exchanges, local, monkeypatch)
    layout.upload(azurite)
    return config, exchanges, layout


def _reader(azurite: str, baseline_hours: float = 0.0) -> AzureCollected:
    return AzureCollected(
        uri=f"az://{CONTAINER}/{ROOT}/{ENDPOINT}",
        storage_options={"connection_string": azurite},
        baseline_hours=baseline_hours,
    )


def _in(exchanges: list[Exchange], since: datetime, until: datetime) -> set[str]:
    return {e.id for e in exchanges if since <= datetime.fromisoformat(e.time) < until}


@pytest.mark.slow  # Azurite
def test_a_window_reads_exactly_its_hours_of_both_deployments(
    collected: tuple[PipelineConfig, list[Exchange], Layout], azurite: str
) -> None:
    _, exchanges, layout = collected
    since, until = START + timedelta(hours=1), START + timedelta(hours=3)
    reader = _reader(azurite)
    records = list(reader.records(since, until))

    assert {r["id"] for r in records} == _in(exchanges, since, until)
    assert {r["deployment"] for r in records} == {"blue", "green"}
    assert {r["version"] for r in records} == {f"{MODEL}:1", f"{MODEL}:2"}
    by_id = {e.id: e for e in exchanges}
    for record in records:
        sent = by_id[record["id"]]
        assert record["status"] == sent.status
        assert record["time"] == datetime.fromisoformat(sent.time).isoformat()
        assert record["outputs"] is None if sent.outputs is None else len(record["outputs"]) == 1
    refused = [r for r in records if r["status"] == 400]
    assert refused and all(r["inputs"] == [] for r in refused)
    # the files of the window's hours only: 2 hours x 2 deployments x 2 collections x 2 files
    counts = reader.counts
    assert counts.files == 16 and counts.requests == len(records)
    assert counts.lines == sum(
        len(v) for k, v in layout.blobs.items() if "/2026/11/10/01/" in k or "/2026/11/10/02/" in k
    )
    assert counts.malformed == counts.unmatched_outputs == counts.unpaired == 0
    assert counts.unanswered == len(refused)
    answered = [r["time"] for r in records if r["outputs"] is not None]  # the scores' order
    assert answered == sorted(answered)


@pytest.mark.slow  # Azurite
def test_a_malformed_line_is_counted_and_the_rest_read(
    collected: tuple[PipelineConfig, list[Exchange], Layout], azurite: str
) -> None:
    _, exchanges, layout = collected
    hour = f"{ROOT}/{ENDPOINT}/blue/model_inputs/2026/11/10/04"
    [path] = [k for k in layout.blobs if k.startswith(hour) and k.endswith("/a")]
    good = layout.blobs[path]
    torn = good[-1][: len(good[-1]) // 2]  # a line cut short
    lines = [*good[:-1], torn, '{"specversion":"1.0","data":[{"question":"q"}]}', "[1, 2]"]
    layout.upload(azurite, {f"{hour}/{uuid.uuid5(uuid.NAMESPACE_URL, path)}.jsonl": lines})

    reader = _reader(azurite)
    since, until = START + timedelta(hours=4), START + timedelta(hours=5)
    records = list(reader.records(since, until))
    assert reader.counts.malformed == 3  # the torn line, one without a correlation id, a list
    cut = json.loads(good[-1])["correlationid"]
    assert {r["id"] for r in records} == _in(exchanges, since, until) - {cut}
    assert reader.counts.unmatched_outputs == 1  # the cut request's answer, alone
    assert parse_event(good[0].encode()) is not None


@pytest.mark.slow  # Azurite
def test_the_monitor_judges_azure_records_as_it_judges_the_same_records_read_locally(
    collected: tuple[PipelineConfig, list[Exchange], Layout], azurite: str
) -> None:
    config, _, _ = collected
    for since in (START + timedelta(hours=1), START + timedelta(hours=2)):
        until = since + timedelta(hours=1)
        local = _monitor(config, since, until).result
        azure = _monitor(config, since, until, collected=_reader(azurite, 48.0)).result
        assert local.judged and azure.source == "azureml" and local.source == "local"
        assert azure.model_dump(exclude={"source", "read"}) == local.model_dump(
            exclude={"source", "read"}
        )
        assert azure.read["malformed"] == 0 and azure.read["requests"] > local.requests
    assert azure.drift and "personal_data" in azure.drifted  # hour 2: the shifted traffic


@pytest.mark.slow  # Azurite
def test_tunegate_monitor_reads_the_azure_collector_output(
    collected: tuple[PipelineConfig, list[Exchange], Layout],
    azurite: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from cli.main import app

    config, exchanges, _ = collected
    monkeypatch.setenv("AZURE_STORAGE_CONNECTION_STRING", azurite)
    common = [
        "--set",
        f"store={config.store}",
        "--set",
        "monitor.source=azureml",
        "--set",
        f"monitor.azureml.path=az://{CONTAINER}/{ROOT}",
        "--set",
        f"monitor.azureml.endpoint={ENDPOINT}",
        "--set",
        "monitor.azureml.deployments=[blue]",
    ]
    window = ["--since", "2026-11-10T03:00", "--until", "2026-11-10T04:00"]
    result = CliRunner().invoke(app, ["monitor", MODEL, *common, *window])
    assert result.exit_code == 0, result.output
    printed = json.loads(result.stdout[result.stdout.index("{") :].split("\nreport:")[0])
    blue = [e for e in exchanges if e.deployment == "blue"]
    assert printed["source"] == "azureml" and printed["judged"]
    assert printed["requests"] == len(
        _in(blue, START + timedelta(hours=3), START + timedelta(hours=4))
    )
    # blue's two collections, two files each, of the window's hour and the three before it
    # (monitor.azureml.baseline_hours, 48, reaches back to the first collected hour)
    assert printed["read"]["files"] == 16 and printed["read"]["malformed"] == 0

    bad = CliRunner().invoke(app, ["monitor", MODEL, *common, "--set", "monitor.source=blob"])
    assert bad.exit_code == 2 and "monitor.source" in bad.output


def test_hours_and_config() -> None:
    at = datetime(2026, 11, 10, 5, 30, tzinfo=UTC)
    assert hours(at, at + timedelta(hours=1)) == [
        at.replace(minute=0),
        at.replace(hour=6, minute=0),
    ]
    assert hours(at, at) == []
    config = validate_config({"monitor": {"source": "azureml"}})
    assert config.monitor.azureml.path.endswith("/paths/modelDataCollector")


def test_a_collector_line_is_read_or_refused() -> None:
    line = {"correlationid": "c1", "time": "2026-11-10T03:00:05+02:00", "data": [{"q": "a"}]}
    event = parse_event(json.dumps(line).encode())
    assert event is not None and event.time == datetime(2026, 11, 10, 1, 0, 5, tzinfo=UTC)
    assert event.rows == [{"q": "a"}] and event.version is None
    url = {**line, "data": "https://account.blob.core.windows.net/x", "datainblob": "true"}
    assert parse_event(json.dumps(url).encode()).in_blob  # type: ignore[union-attr]
    for bad in ({**line, "correlationid": ""}, {**line, "time": "noon"}, {**line, "data": {}}):
        assert parse_event(json.dumps(bad).encode()) is None
    assert parse_event(b"not json") is None
