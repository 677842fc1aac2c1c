"""The monitor: a served model's collected traffic against its champion's own data.

The champion here is a real registered version (the local MLflow registry) whose lineage names a
real split dataset on the store; its traffic is written by the endpoint's own collector code
(masked by the screen's traffic masker, written by the JSON-lines sink), then read by
`tunegate monitor` and the task behind it. In-distribution traffic is unseen records of the same
generator; shifted traffic is Wikipedia questions and paragraphs written by others
(SQuADShifts, benchmarks/corpora) with e-mail addresses pasted into some questions.
"""

from __future__ import annotations

import hashlib
import json
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from flows.config import PipelineConfig, validate_config
from flows.monitor import DRIFT_CLEAR, DRIFT_DETECTED, drift_event, result_markdown
from platforms.lineage import Lineage
from platforms.manifest import TableInfo
from samples.generate import valid_records
from screening.outputs import traffic_masker
from serving.collect import COLLECTED, Exchange, JsonlSink, mask_exchange
from tasks.drift_features import not_english, oov_share, stable_sample, vocabulary
from tasks.monitor import monitor_model, parse_time
from tests.flows.test_ui_approval import page
from trainer.taskspec import task_spec

ROOT = Path(__file__).resolve().parents[2]
SQUADSHIFTS = ROOT / "benchmarks" / "corpora" / "qa_squadshifts_wiki.json"
MODEL = "monitored-qa"
SPEC = task_spec("extractive-qa")
__all__ = ["page"]  # the headless Chromium fixture of tests/flows/test_ui_approval.py


def _masked(record: dict[str, Any], mask: Any) -> dict[str, Any]:
    """The record as the screen keeps it: its texts with personal data replaced by placeholders."""
    question, context, *answers = mask(
        [record["question"], record["context"], *record["answers"]["text"]]
    )
    found = {**record["answers"], "text": answers}
    return {**record, "question": question, "context": context, "answers": found}


def _split_dataset(config: PipelineConfig, records: list[dict[str, Any]]) -> str:
    """A split dataset on the config's store (train and test tables); returns its content hash."""
    store = config.open_store()
    content_hash = hashlib.sha256(json.dumps(records, sort_keys=True).encode()).hexdigest()
    writer = store.begin_dataset("split", content_hash[:32])
    tables = {"train": records[:240], "test": records[240:]}
    infos = {}
    for table, rows in tables.items():
        uri = writer.part_uri(table, 0)
        Path(uri).parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(pa.Table.from_pylist(rows, schema=SPEC.record_schema), uri)
        infos[table] = TableInfo(rows=len(rows), files=[f"{table}/part-00000.parquet"], schema={})
    writer.commit(
        task="extractive-qa",
        content_hash=content_hash,
        parent_hashes=[],
        config_hash="test",
        counts={k: len(v) for k, v in tables.items()},
        tables=infos,
    )
    return content_hash


@pytest.fixture
def champion(tmp_path: Path, qa_model_dir: Path) -> tuple[PipelineConfig, list[dict[str, Any]]]:
    """A store with a champion of MODEL whose lineage names its split; returns the config and
    unseen records of the same generator (for in-distribution traffic)."""
    config = validate_config(
        {"store": str(tmp_path / "store"), "monitor": {"sample_size": 150, "min_requests": 30}}
    )
    records = valid_records("extractive-qa", 500, seed=7)
    random.Random(1).shuffle(records)
    mask = traffic_masker()
    split_hash = _split_dataset(config, [_masked(r, mask) for r in records[:340]])
    registry = config.backends().registry
    version = registry.register(
        MODEL, qa_model_dir, {"f1": 60.0}, Lineage(datasets={"split": split_hash})
    )
    registry.set_alias(MODEL, "champion", version.version)
    return config, records[340:]


def _serve(
    config: PipelineConfig,
    requests: list[tuple[dict[str, Any], str]],
    at: datetime,
    status: int = 200,
    version: int = 1,
    routed: str = "traffic",
) -> None:
    """What the endpoint's collector writes for each request answered at `at` (masked);
    `routed`: a user's request (traffic), a rollout's (named) or a mirrored copy."""
    folder = Path(config.store) / "endpoints" / MODEL / COLLECTED
    sink, mask = JsonlSink(folder), traffic_masker()
    rng = random.Random(len(requests))
    for i, (request, answer) in enumerate(requests):
        outputs = (
            None
            if status >= 400
            else [
                {"answer": answer, "score": round(rng.uniform(0.5, 0.95), 3), "start": 0, "end": 1}
            ]
        )
        exchange = Exchange(
            deployment="blue",
            version=f"{MODEL}:{version}",  # as the endpoint labels a deployment's version
            status=status,
            latency_ms=12.0,
            inputs=[request],
            outputs=outputs,
            error="bad request" if status >= 400 else None,
            time=(at + timedelta(seconds=i)).isoformat(timespec="milliseconds"),
            routed=routed,
        )
        sink.write(mask_exchange(mask, exchange))
    sink.close()


def _in_distribution(records: list[dict[str, Any]]) -> list[tuple[dict[str, Any], str]]:
    return [(SPEC.request_of(r), r["answers"]["text"][0]) for r in records]


def _shifted(n: int) -> list[tuple[dict[str, Any], str]]:
    """Questions and paragraphs of Wikipedia articles (another domain, far longer), an e-mail
    address pasted into every question, and every other answer empty."""
    data = json.loads(SQUADSHIFTS.read_text())["data"]
    found = []
    for article in data:
        for paragraph in article["paragraphs"]:
            for qa in paragraph["qas"][:1]:
                found.append((qa["question"], paragraph["context"]))
    rng = random.Random(3)
    out = []
    for i, (question, context) in enumerate(found[:n]):
        question += f" reply to {rng.choice(['ana', 'li', 'sam'])}.{i}@example.org"
        out.append(({"question": question, "context": context}, "" if i % 2 else "the river"))
    return out


def _monitor(config: PipelineConfig, since: datetime, until: datetime, **kw: Any) -> Any:
    backends = config.backends()
    return monitor_model(
        backends.store,
        backends.registry,
        MODEL,
        config.monitor,
        frozenset(config.screen.all_entities()),
        since=since,
        until=until,
        **kw,
    )


@pytest.mark.slow
def test_in_distribution_traffic_is_no_drift_and_shifted_traffic_is(
    champion: tuple[PipelineConfig, list[dict[str, Any]]], tmp_path: Path
) -> None:
    config, unseen = champion
    start = datetime(2026, 11, 1, tzinfo=UTC)
    _serve(config, _in_distribution(unseen[:80]), start)  # the version's earlier traffic
    _serve(config, _in_distribution(unseen[80:]), start + timedelta(hours=1))
    _serve(config, _shifted(100), start + timedelta(hours=2))
    _serve(config, _in_distribution(unseen[:40]), start + timedelta(hours=1, minutes=30), version=9)

    calm = _monitor(config, start + timedelta(hours=1), start + timedelta(hours=2)).result
    assert calm.judged and calm.requests == len(unseen) - 80  # version 9's requests not counted
    assert not calm.drift, [s for s in calm.signals if s.drift]
    assert {s.name for s in calm.signals} >= {
        "input_length",
        "vocabulary",
        "embedding",
        "out_of_vocabulary",
        "personal_data",
        "score",
    }

    run = _monitor(
        config, start + timedelta(hours=2), start + timedelta(hours=3), report_dir=tmp_path / "r"
    )
    shifted = run.result
    assert shifted.drift and shifted.requests == 100
    assert {"input_length", "vocabulary", "embedding", "out_of_vocabulary"} <= set(shifted.drifted)
    assert {"personal_data", "empty_answers"} <= set(shifted.drifted), shifted.signals
    pii = shifted.signal("personal_data")
    assert (
        pii is not None and pii.current == 1.0 and pii.reference is not None and pii.reference < 0.9
    )
    assert not shifted.signal("malformed_requests").drift  # type: ignore[union-attr]
    page = Path(run.report).read_text()  # type: ignore[arg-type]
    assert "DRIFT" in page and "personal_data" in page and "data:image/png;base64," in page
    assert "@example.org" not in page  # masked when collected; the report never shows it

    event = drift_event(shifted, run.report)
    assert event is not None and event["event"] == DRIFT_DETECTED
    assert set(event["payload"]["drifted"]) == set(shifted.drifted)
    embedding = event["payload"]["signals"]["embedding"]
    assert embedding["value"] > embedding["chance"] and embedding["value"] >= 0.75
    assert drift_event(calm, None)["event"] == DRIFT_CLEAR  # type: ignore[index]
    assert "| personal_data | quality |" in result_markdown(shifted, run.report)
    assert "| 0.75, chance " in result_markdown(shifted, run.report)


def test_a_window_with_too_few_requests_is_not_judged(
    champion: tuple[PipelineConfig, list[dict[str, Any]]],
) -> None:
    config, unseen = champion
    start = datetime(2026, 11, 2, tzinfo=UTC)
    _serve(config, _in_distribution(unseen[:5]), start)
    result = _monitor(config, start, start + timedelta(hours=1)).result
    assert not result.judged and not result.drift and result.requests == 5
    assert "min_requests" in result.reason
    assert drift_event(result, None) is None  # nothing to trigger on


def test_a_rollouts_own_requests_are_not_users_traffic(
    champion: tuple[PipelineConfig, list[dict[str, Any]]],
) -> None:
    """The smoke and replayed requests a rollout sends the champion by name (and mirrored
    copies) are not what its users sent: the window counts only the users' requests."""
    config, unseen = champion
    start = datetime(2026, 11, 4, tzinfo=UTC)
    _serve(config, _in_distribution(unseen[:5]), start)
    _serve(config, _shifted(40), start + timedelta(minutes=5), routed="named")
    _serve(config, _shifted(10), start + timedelta(minutes=9), routed="mirror")
    result = _monitor(config, start, start + timedelta(hours=1)).result
    assert result.requests == 5 and not result.judged


@pytest.mark.slow
def test_malformed_requests_are_a_quality_signal(
    champion: tuple[PipelineConfig, list[dict[str, Any]]],
) -> None:
    config, unseen = champion
    start = datetime(2026, 11, 3, tzinfo=UTC)
    _serve(config, _in_distribution(unseen[:60]), start)
    _serve(config, [({"question": "?"}, "")] * 20, start + timedelta(minutes=5), status=400)
    result = _monitor(config, start, start + timedelta(hours=1)).result
    malformed = result.signal("malformed_requests")
    assert malformed is not None and malformed.drift and malformed.current == 0.25


def test_cli_prints_the_result_as_json_and_bad_input_exits_2(
    champion: tuple[PipelineConfig, list[dict[str, Any]]], tmp_path: Path
) -> None:
    from cli.main import app

    config, unseen = champion
    start = datetime(2026, 11, 4, tzinfo=UTC)
    _serve(config, _in_distribution(unseen[:10]), start)
    store = ["--set", f"store={config.store}"]
    result = CliRunner().invoke(
        app,
        ["monitor", MODEL, *store, "--since", "2026-11-04T00:00", "--until", "2026-11-04T01:00"],
    )
    assert result.exit_code == 0, result.output
    printed = json.loads(result.stdout[result.stdout.index("{") :].split("\nreport:")[0])
    assert printed["judged"] is False and printed["requests"] == 10 and printed["drift"] is False

    bad = CliRunner().invoke(app, ["monitor", MODEL, *store, "--since", "yesterday"])
    assert bad.exit_code == 2 and "ISO 8601" in bad.output
    unknown = CliRunner().invoke(app, ["monitor", "no-such-model", *store])
    assert unknown.exit_code == 2 and "no champion" in unknown.output
    threshold = CliRunner().invoke(
        app, ["monitor", MODEL, *store, "--set", "monitor.signals.embedding.method=cosine"]
    )
    assert threshold.exit_code == 2 and "monitor.signals.embedding.method" in threshold.output


def test_signal_features() -> None:
    known = vocabulary(["Where is my refund for order 4471"])
    assert oov_share(["where", "is", "my", "parcel"], known) == 0.25
    assert not_english("Where is the refund for my order?") is False
    assert not_english("Где мой возврат за заказ номер")
    assert not_english("wo ist meine Rückerstattung für die Bestellung bitte")
    assert stable_sample(list("abcdef"), 3, list("abcdef")) == stable_sample(
        list("abcdef"), 3, list("abcdef")
    )
    assert parse_time("2026-11-29T06:00").tzinfo is not None


@pytest.mark.slow
def test_the_report_reads_in_chromium(
    champion: tuple[PipelineConfig, list[dict[str, Any]]], tmp_path: Path, page: Any
) -> None:
    """The drifted window's report as a person sees it at 1280 px: the verdict, the signals
    table within the width, the plots drawn (screenshot in the test output)."""
    config, unseen = champion
    start = datetime(2026, 11, 5, tzinfo=UTC)
    _serve(config, _in_distribution(unseen[:60]), start)
    _serve(config, _shifted(60), start + timedelta(hours=1))
    run = _monitor(
        config, start + timedelta(hours=1), start + timedelta(hours=2), report_dir=tmp_path
    )
    page.set_viewport_size({"width": 1280, "height": 1000})
    page.goto(Path(run.report).as_uri())
    assert page.locator(".verdict").inner_text() == "DRIFT"
    drifted = page.locator("tr.drift td:first-child").all_inner_texts()
    assert set(drifted) == set(run.result.drifted)
    assert page.evaluate("document.documentElement.scrollWidth") <= 1280
    assert page.evaluate("[...document.images].every(i => i.complete && i.naturalWidth > 600)")
    shot = tmp_path / "monitor-report.png"
    page.screenshot(path=str(shot), full_page=True)
    print(f"monitor report screenshot: {shot}")
