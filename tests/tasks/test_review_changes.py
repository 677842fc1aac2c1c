"""The reviewer sees what changed since the last approved dataset, and masked names stay visible."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from platforms.approvals import ApprovalMode, save_approval
from platforms.manifest import DatasetRef, table_info
from platforms.store import Store, write_table
from screening.report import EntityCount, ScreenReport, report_markdown
from tasks.approve import make_record
from tasks.review_changes import changes_markdown, changes_summary, compare, remember_approved

KEY = b"a key for this test, 32 bytes.."
SCHEMA = pa.schema([("id", pa.string()), ("text", pa.string())])


def _screened(
    store: Store, key: str, ids: list[str], persons: int
) -> tuple[DatasetRef, ScreenReport]:
    writer = store.begin_dataset("screen", key)
    write_table(
        store, writer.part_uri("screened", 0), [{"id": i, "text": "x"} for i in ids], SCHEMA
    )
    report = ScreenReport(
        task="chat",
        records_in=len(ids) + 1,
        kept=len(ids),
        redacted=persons,
        quarantined=1,
        flagged=0,
        entities=[EntityCount(entity="PERSON", action="redact", findings=persons)],
        quarantine_reasons={"bad json": 1},
        flagged_ids=[],
        samples=[
            {"id": ids[0], "outcome": "redacted", "field": "text", "excerpt": "<PERSON> reset it"}
        ],
        toxicity_threshold=0.8,
    )
    writer.write_json("report.json", report.model_dump(mode="json"))
    ref = writer.commit(
        task="chat",
        content_hash=f"hash-{key}",
        parent_hashes=[],
        config_hash="c",
        counts={"screened": len(ids)},
        tables={"screened": table_info(len(ids), ["screened/part-00000.parquet"], SCHEMA)},
    )
    return ref, report


def test_the_review_shows_counts_findings_and_ids_since_the_last_approval(tmp_path: Path) -> None:
    store = Store(str(tmp_path))
    first, first_report = _screened(store, "a", ["r1", "r2", "r3"], persons=2)
    assert "No dataset was approved before" in changes_markdown(
        compare(store, first, first_report, "qa")
    )

    approved = make_record(
        first, first_report, ApprovalMode.manual, approved=True, reviewer="ana", comment="ok"
    )
    save_approval(store, approved, KEY)
    remember_approved(store, "qa", approved, "2026-11-29T10:00:00")
    rejected_ref, rejected_report = _screened(store, "b", ["r9"], persons=9)
    save_approval(
        store,
        make_record(
            rejected_ref,
            rejected_report,
            ApprovalMode.manual,
            approved=False,
            reviewer="bo",
            comment="no",
        ),
        KEY,
    )

    second, second_report = _screened(store, "c", ["r2", "r3", "r4", "r5"], persons=5)
    changes = compare(store, second, second_report, "qa")
    assert changes is not None
    assert changes.previous_hash == "hash-a"  # the last *approved* one, not the rejected one
    assert changes.previous_reviewer == "ana"
    assert changes.counts["kept"] == (3, 4)
    assert changes.findings == {"PERSON": (2, 5)}
    assert (changes.added_ids, changes.removed_ids) == (["r4", "r5"], ["r1"])
    text = changes_markdown(changes)
    assert "| kept | 3 | 4 | +1 |" in text
    assert "| PERSON findings | 2 | 5 | +3 |" in text
    assert "**New record ids** (2): `r4`, `r5`" in text
    assert "**Gone since then** (1): `r1`" in text


def test_placeholders_survive_markdown_rendering(tmp_path: Path) -> None:
    _, report = _screened(Store(str(tmp_path)), "a", ["r1"], persons=1)
    markdown = report_markdown(report)
    assert "&lt;PERSON&gt; reset it" in markdown  # rendered as <PERSON>, not an HTML tag
    assert "<PERSON>" not in markdown.split("**Masked samples**")[1]


def test_the_diff_is_against_the_data_last_approved_for_the_same_model(tmp_path: Path) -> None:
    """Two models on one store: each review compares with its own model's last approved data,
    never the other model's newer approval; an approval reused by a model counts for it."""
    store = Store(str(tmp_path))
    qa_data, qa_report = _screened(store, "qa1", ["q1", "q2"], persons=1)
    chat_data, chat_report = _screened(store, "chat1", ["c1"], persons=4)
    qa_ok = make_record(
        qa_data, qa_report, ApprovalMode.manual, approved=True, reviewer="ana", comment=""
    )
    chat_ok = make_record(
        chat_data, chat_report, ApprovalMode.manual, approved=True, reviewer="bo", comment=""
    )
    remember_approved(store, "qa-model", qa_ok, "2026-11-29T10:00:00")
    remember_approved(store, "chat-model", chat_ok, "2026-11-29T11:00:00")  # newer, other model

    now, now_report = _screened(store, "qa2", ["q2", "q3"], persons=2)
    changes = compare(store, now, now_report, "qa-model")
    assert changes is not None
    assert (changes.previous_hash, changes.previous_reviewer, changes.model) == (
        "hash-qa1",
        "ana",
        "qa-model",
    )
    assert (changes.added_ids, changes.removed_ids) == (["q3"], ["q1"])
    assert "last approved for model `qa-model`" in changes_markdown(changes)
    assert "of `qa-model`" in changes_summary(changes)
    # a model with no approved data of its own has no baseline, whatever others approved
    assert compare(store, now, now_report, "summaries") is None
    assert "the first of `summaries`" in changes_summary(None, "summaries")
    # the same data, when it is what this model last went ahead with, is no baseline of itself;
    # the chat model reusing qa1's approval makes it chat's newest baseline
    remember_approved(store, "chat-model", qa_ok, "2026-11-29T12:00:00")
    chat_changes = compare(store, chat_data, chat_report, "chat-model")
    assert chat_changes is not None and chat_changes.previous_hash == "hash-qa1"
    assert compare(store, qa_data, qa_report, "qa-model") is None
