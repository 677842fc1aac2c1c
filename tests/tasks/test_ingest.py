"""ingest on a real LocalCluster: every line accounted for, reasons right, outputs reusable."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from platforms.compute import shared_client
from platforms.store import read_table
from tasks.ingest import run_ingest
from tests.conftest import write_jsonl

CTX = "The VPN outage in the Lisbon office lasted 3 days and affected 40 users."


def _qa(rid: str, question: str = "How long did the outage last?", **over: object) -> str:
    record = {
        "id": rid,
        "question": question,
        "context": CTX,
        "answers": {"text": ["3 days"], "answer_start": [CTX.index("3 days")]},
    }
    record.update(over)
    return json.dumps(record)


BROKEN = {
    '{"id": "t1", "question": "truncated': "unparsable JSON",
    b'{"id": "t2", "question": "caf\xe9?", "context": "x", "answers": {}}': "non-UTF-8 bytes",
    "[1, 2, 3]": "not a JSON object (got array)",
    '"just a string"': "not a JSON object (got string)",
    _qa("t3", context=None): "missing field 'context'",
    _qa("t4", question=42): "field 'question' must be a string, got int",
    _qa("t5", question="   "): "field 'question' is empty",
    _qa(
        "t6", answers={"text": ["3 days"], "answer_start": [0]}
    ): "answer 0 text is not at answer_start 0",
    _qa("t7", answers={"text": ["3 days"], "answer_start": "12"}): "must be a list of int",
    _qa("t8", answers={"text": [], "answer_start": [12]}): "has 0 texts but 1 offsets",
}


def _ingest(make_config, inputs: list[str], **sections):
    cfg = make_config(ingest={"inputs": inputs}, **sections)
    store = cfg.open_store()
    ref = run_ingest(
        shared_client(cfg.dask),
        store,
        cfg.task,
        cfg.columns,
        cfg.ingest,
        cfg.azure,
        cfg.dask.partition_rows,
    )
    return cfg, store, ref


def test_every_broken_line_is_quarantined_with_its_reason(make_config, tmp_path: Path) -> None:
    good = [
        _qa("g1"),
        _qa(
            "g2",
            question="Which office had the outage?",
            answers={"text": ["Lisbon"], "answer_start": [CTX.index("Lisbon")]},
        ),
    ]
    lines = [*good, "", *BROKEN, good[0], "   ", _qa("g1", question="Same id, other content?")]
    path = write_jsonl(tmp_path / "in.jsonl", lines)

    _, store, ref = _ingest(make_config, [str(path)])

    c = ref.counts
    assert c["blank"] == 2
    assert c["read"] == len(lines) - 2
    assert (c["accepted"], c["duplicates"], c["quarantined"]) == (2, 1, len(BROKEN) + 1)
    assert c["read"] == c["accepted"] + c["quarantined"] + c["duplicates"]
    quarantine = [r for f in store.table_files(ref, "quarantine") for r in read_table(store, f)]
    by_line = {q["line"]: q["reason"] for q in quarantine}
    for offset, expected in enumerate(BROKEN.values()):
        assert expected in by_line[4 + offset], (offset, by_line[4 + offset])
    assert "duplicate id 'g1' with other content" in by_line[len(lines)]
    assert all(q["source"] == str(path) for q in quarantine)
    accepted = [r for f in store.table_files(ref, "accepted") for r in read_table(store, f)]
    assert [r["id"] for r in accepted] == ["g1", "g2"]


def test_csv_parquet_and_globs_give_the_same_records(make_config, tmp_path: Path) -> None:
    rows = [
        {
            "id": f"r{i}",
            "question": f"Question {i}?",
            "context": CTX,
            "answer_text": "Lisbon",
            "answer_start": CTX.index("Lisbon"),
        }
        for i in range(5)
    ]
    (tmp_path / "d").mkdir()
    pd.DataFrame(rows).to_csv(tmp_path / "d" / "a.csv", index=False)
    nested = [
        {
            "id": f"p{i}",
            "question": f"Other {i}?",
            "context": CTX,
            "answers": {"text": ["3 days"], "answer_start": [CTX.index("3 days")]},
        }
        for i in range(4)
    ]
    pd.DataFrame(nested).to_parquet(tmp_path / "d" / "b.parquet")
    with (tmp_path / "d" / "a.csv").open("a") as f:
        f.write("r9,too,many,fields,here,!\n")

    _, store, ref = _ingest(make_config, [str(tmp_path / "d" / "*")])

    assert ref.counts["files"] == 2
    assert (ref.counts["accepted"], ref.counts["quarantined"]) == (9, 1)
    accepted = [r for f in store.table_files(ref, "accepted") for r in read_table(store, f)]
    assert {r["id"] for r in accepted} == {
        *(f"r{i}" for i in range(5)),
        *(f"p{i}" for i in range(4)),
    }
    assert all(
        CTX[r["answers"]["answer_start"][0] :].startswith(r["answers"]["text"][0]) for r in accepted
    )


def test_same_input_and_config_reuse_the_dataset(make_config, tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "in.jsonl", [_qa("a"), _qa("b", question="Where?")])
    _, _, first = _ingest(make_config, [str(path)])
    _, _, second = _ingest(make_config, [str(path)])
    assert not first.reused and second.reused and second.uri == first.uri
    write_jsonl(path, [_qa("a"), _qa("c", question="Where else?")])
    _, _, third = _ingest(make_config, [str(path)])
    assert third.uri != first.uri and not third.reused
    assert not any(p.name.startswith(".tmp") for p in Path(first.uri).parent.iterdir())


def test_a_missing_input_is_a_clear_error(make_config, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="nothing matches"):
        _ingest(make_config, [str(tmp_path / "nope" / "*.jsonl")])


@pytest.mark.parametrize("kind", ["device", "fifo"])
def test_a_device_or_fifo_input_is_refused_not_read_forever(tmp_path: Path, kind: str) -> None:
    import os

    from platforms.blob import AzureStorageConfig
    from tasks.ingest_inputs import expand_inputs

    if kind == "fifo":
        path = str(tmp_path / "pipe")
        os.mkfifo(path)  # nobody writes: opening it would block
    else:
        path = "/dev/zero"  # never ends
    with pytest.raises(ValueError, match="not a regular file"):
        expand_inputs([path], AzureStorageConfig())


def test_records_without_ids_get_stable_content_ids(make_config, tmp_path: Path) -> None:
    record = json.loads(_qa("x"))
    del record["id"]
    path = write_jsonl(tmp_path / "in.jsonl", [json.dumps(record)])
    _, store, ref = _ingest(make_config, [str(path)])
    [row] = [r for f in store.table_files(ref, "accepted") for r in read_table(store, f)]
    assert row["id"].startswith("rec-") and len(row["id"]) == 20


def _chat(*roles: str) -> dict:
    return {"id": "c1", "messages": [{"role": r, "content": f"{r} says hi"} for r in roles]}


@pytest.mark.parametrize(
    ("record", "reason"),
    [
        (
            _chat("user", "robot"),
            "messages[1]: field 'role' must be one of system, user, assistant",
        ),
        (_chat("customer", "assistant"), "messages[0]: field 'role' must be one of"),
        (_chat("User", "assistant"), "messages[0]: field 'role' must be one of"),
        (_chat("user", "assistant", "user"), "must end with the assistant's reply"),
        (_chat("system", "user"), "must end with the assistant's reply"),
        ({"id": "c1", "messages": [{"content": "hi"}]}, "messages[0]: missing field 'role'"),
        ({"id": "c1", "messages": []}, "must be a non-empty list"),
    ],
)
def test_chat_records_need_known_roles_and_end_with_the_reply(record: dict, reason: str) -> None:
    """A chat record's reference is its last message: one that ends with the customer's turn
    (or a role the endpoint would refuse) is quarantined, not trained and scored on."""
    from tasks.records import ColumnMap, Invalid, TaskType, validate_record

    with pytest.raises(Invalid) as caught:
        validate_record(TaskType.chat, ColumnMap(), record)
    assert reason in str(caught.value)
    ok = _chat("system", "user", "assistant", "user", "assistant")
    assert validate_record(TaskType.chat, ColumnMap(), ok) == ok
