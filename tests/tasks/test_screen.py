"""screen with the real spaCy model: no planted PII survives, QA records stay valid."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from platforms.compute import shared_client
from platforms.store import read_table
from samples.generate import generate_sample, write_sample
from screening.config import REVIEW_SHOWS
from screening.entities import SECRET_ENTITIES
from tasks.ingest import run_ingest
from tasks.records import check_answers_at_offsets
from tasks.screen import run_screen


def _screen(make_config, tmp_path: Path, task: str, n: int, seed: int, **sections):
    sample = generate_sample(task, n, seed=seed)
    path = tmp_path / "sample.jsonl"
    write_sample(sample, path)
    cfg = make_config(task=task, ingest={"inputs": [str(path)]}, **sections)
    client, store = shared_client(cfg.dask), cfg.open_store()
    ingested = run_ingest(client, store, cfg.task, cfg.columns, cfg.ingest, cfg.azure, 200)
    screened, report = run_screen(client, store, ingested, cfg.screen)
    kept = [r for f in store.table_files(screened, "screened") for r in read_table(store, f)]
    quarantined = [
        r for f in store.table_files(screened, "quarantine") for r in read_table(store, f)
    ]
    report_text = Path(screened.uri, "report.json").read_text()
    return sample, screened, report, kept, quarantined, report_text


@pytest.mark.parametrize(("task", "seed"), [("extractive-qa", 5), ("summarization", 9)])
@pytest.mark.slow
def test_no_planted_value_survives_in_any_field(make_config, tmp_path, task, seed) -> None:
    sample, screened, report, kept, quarantined, report_text = _screen(
        make_config, tmp_path, task, 400, seed
    )
    assert report.records_in == report.kept + report.quarantined
    kept_text = json.dumps(kept, ensure_ascii=False)
    quarantine_text = json.dumps(quarantined, ensure_ascii=False)
    redacted_kinds = {k: v for k, v in sample.planted_pii.items() if k != "LOCATION"}  # flagged
    assert redacted_kinds, "the sample plants personal data"
    for kind, values in redacted_kinds.items():
        for value in values:
            assert value not in kept_text, f"a planted {kind} survived screening"
            assert value not in quarantine_text, f"a planted {kind} is in the quarantine"
            assert value not in report_text, f"a planted {kind} is in the report"
    for kind, values in sample.planted_secrets.items():
        for value in values:
            assert value not in kept_text, f"a planted {kind} was kept"
            assert value not in report_text, f"a planted {kind} is in the report"
    # beside the records, for the reviewer: a value of a type the policy masks for reviewers
    # never shows (a name or place may: screen.review_shows), a credential never does
    # (read with the store's key: they are encrypted at rest, as the raw records are)
    store = make_config(task=task).open_store()
    beside = json.dumps(
        [read_table(store, part) for table in ("review", "changes") for part in
         store.table_files(screened, table)],
        ensure_ascii=False,
    )  # fmt: skip
    assert '"before"' in beside, "the changes to kept records are kept for the review"
    for kind, values in redacted_kinds.items():
        for value in values if kind not in REVIEW_SHOWS else ():
            assert value not in beside, f"a planted {kind} is shown to the reviewer"
    for kind, values in sample.planted_secrets.items():
        for value in values:
            assert value not in beside, f"a planted {kind} is shown to the reviewer"
    kept_ids = {r["id"] for r in kept}
    assert not kept_ids & set(sample.toxic_ids), "toxic records must be quarantined"
    reasons = " ".join(r["reason"] for r in quarantined)
    assert "toxicity" in reasons and any(e in reasons for e in SECRET_ENTITIES)
    if task == "extractive-qa":
        for record in kept:
            check_answers_at_offsets(record)  # raises when an answer_start points elsewhere
        assert any("<" in a for r in kept for a in r["answers"]["text"]), "answers were redacted"
    assert report.flagged > 0 and report.needs_review  # LOCATION is flagged by default


@pytest.mark.slow
def test_policy_can_drop_or_flag_instead_of_redacting(make_config, tmp_path) -> None:
    screen = {
        "entities": {"EMAIL_ADDRESS": {"action": "drop"}, "PERSON": {"action": "flag"}},
        "toxicity": {"action": "flag", "threshold": 0.8},
    }
    sample, _, report, kept, quarantined, _ = _screen(
        make_config, tmp_path, "extractive-qa", 300, 2, screen=screen
    )
    kept_text = json.dumps(kept)
    assert not any(v in kept_text for v in sample.planted_pii["EMAIL_ADDRESS"])
    assert any("EMAIL_ADDRESS in" in r["reason"] for r in quarantined)
    assert any(name in kept_text for name in sample.planted_pii["PERSON"])  # flagged, kept
    assert set(sample.toxic_ids) & {r["id"] for r in kept}  # flagged, kept
    actions = {(c.entity, c.action) for c in report.entities}
    assert ("PERSON", "flag") in actions and ("EMAIL_ADDRESS", "drop") in actions
    assert ("TOXICITY", "flag") in actions


def test_the_screening_package_screens_records_without_a_store_or_a_cluster() -> None:
    """screening.scan decides every record; the stage around it only reads and writes tables."""
    from screening.config import ScreenConfig
    from screening.scan import Tally, screen_records, screen_report

    records = [
        {"id": "a", "document": "Write to dana.silva@example.com about it.", "summary": "Mail."},
        {"id": "b", "document": "My password is hunter2hunter2 for the VPN.", "summary": "VPN."},
        {"id": "c", "document": "The router arrived after five days.", "summary": "Late."},
    ]
    config = ScreenConfig()
    screening = screen_records("summarization", records, config)
    assert [r["id"] for r in screening.kept] == ["a", "c"]
    assert "<EMAIL_ADDRESS>" in screening.kept[0]["document"]
    assert screening.kept[1] == records[2]
    [quarantined] = screening.quarantined
    assert quarantined.id == "b" and "in document" in quarantined.reason
    tally = screening.tally
    assert (tally.records_in, tally.kept, tally.redacted, tally.quarantined) == (3, 2, 1, 1)

    report = screen_report("summarization", [tally, tally], config)
    assert (report.records_in, report.kept, report.redacted, report.quarantined) == (6, 4, 2, 2)
    assert report.task == "summarization"
    assert {(c.entity, c.action) for c in report.entities} >= {("EMAIL_ADDRESS", "redact")}
    assert "hunter2hunter2" not in report.model_dump_json()
    lost = Tally(2, 1, 0, 0, (), (), {}, ())
    with pytest.raises(RuntimeError, match="screen lost records"):
        screen_report("summarization", [lost], config)
