"""Inputs as they come: SQuAD JSON, Hugging Face `datasets` folders and Arrow files.

Every question of a SQuAD file and every row of a datasets folder is accounted for (accepted,
quarantined with its reason and position, or a duplicate); unanswerable questions are kept with
empty answers and go through screen and split; the same data read from a datasets folder, a
`DatasetDict` or an Arrow file gives the same records as from JSON lines.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pytest
from datasets import Dataset, DatasetDict
from typer.testing import CliRunner

from cli.main import app
from flows.config import validate_config
from platforms.compute import shared_client
from platforms.store import read_table
from tasks.ingest import run_ingest
from tasks.ingest_inputs import expand_inputs
from tasks.screen import run_screen
from tasks.split import SPLITS, run_split
from tests.conftest import DASK, write_jsonl

CTX_A = "The VPN outage in the Lisbon office lasted 3 days and affected 40 users."
CTX_B = "Maria Santos replaced the router in Porto after the storm on Monday."
NO_ANSWERS: dict[str, list[Any]] = {"text": [], "answer_start": []}


def _answer(context: str, text: str, start: int | None = None) -> dict[str, Any]:
    return {"text": text, "answer_start": context.index(text) if start is None else start}


def _squad() -> dict[str, Any]:
    """A SQuAD v2.0 document: three articles, answerable and unanswerable questions, and every
    kind of malformed question, paragraph and article."""
    return {
        "version": "v2.0",
        "data": [
            {
                "title": "Outages",
                "paragraphs": [
                    {
                        "context": CTX_A,
                        "qas": [
                            {
                                "id": "a1",
                                "question": "How long did the outage last?",
                                "answers": [_answer(CTX_A, "3 days")],
                                "is_impossible": False,
                            },
                            {
                                "id": "a2",
                                "question": "Which office?",
                                "answers": [
                                    _answer(CTX_A, "Lisbon office"),
                                    _answer(CTX_A, "Lisbon"),
                                ],
                            },
                            {
                                "id": "a3",
                                "question": "Who caused the outage?",
                                "answers": [],
                                "is_impossible": True,
                                "plausible_answers": [_answer(CTX_A, "VPN")],
                            },
                            {  # the answer is not at its offset
                                "id": "a4",
                                "question": "How many users?",
                                "answers": [_answer(CTX_A, "40 users", start=0)],
                            },
                        ],
                    },
                    {
                        "context": CTX_B,
                        "qas": [
                            {"id": "b1", "answers": [_answer(CTX_B, "Porto")]},  # no question
                            {"question": "When?", "answers": [_answer(CTX_B, "Monday")]},  # no id
                            {"id": "b3", "question": "What did the storm cost?", "answers": []},
                        ],
                    },
                ],
            },
            {
                "title": "Repeats",
                "paragraphs": [
                    {
                        "context": CTX_A,
                        "qas": [
                            {  # the same question again: a duplicate
                                "id": "a1",
                                "question": "How long did the outage last?",
                                "answers": [_answer(CTX_A, "3 days")],
                                "is_impossible": False,
                            },
                            {  # a known id with another question: an id conflict
                                "id": "a2",
                                "question": "Where was the outage?",
                                "answers": [_answer(CTX_A, "Lisbon office")],
                            },
                            {
                                "id": "c1",
                                "question": "Who fixed it?",
                                "answers": [_answer(CTX_A, "VPN")],
                                "is_impossible": True,
                            },
                        ],
                    },
                    {"context": CTX_B},
                ],
            },
            {"title": "Empty"},
        ],
    }


SQUAD_ACCEPTED = [
    {
        "id": "a1",
        "question": "How long did the outage last?",
        "context": CTX_A,
        "answers": {"text": ["3 days"], "answer_start": [CTX_A.index("3 days")]},
    },
    {
        "id": "a2",
        "question": "Which office?",
        "context": CTX_A,
        "answers": {
            "text": ["Lisbon office", "Lisbon"],
            "answer_start": [CTX_A.index("Lisbon")] * 2,
        },
    },
    {"id": "a3", "question": "Who caused the outage?", "context": CTX_A, "answers": NO_ANSWERS},
    {"id": "b3", "question": "What did the storm cost?", "context": CTX_B, "answers": NO_ANSWERS},
]
SQUAD_COUNTS = {
    "files": 1,
    "read": 12,
    "blank": 0,
    "accepted": 4,
    "quarantined": 7,
    "duplicates": 1,
    "unanswerable": 2,
}


def _squad_quarantine(source: str) -> dict[int, tuple[str | None, str]]:
    """(id, reason) of every quarantined question, paragraph or article, by its number."""
    return {
        4: ("a4", "answer 0 text is not at answer_start 0 in the context"),
        5: ("b1", "missing field 'question'"),
        6: (None, "question has no 'id'"),
        9: ("a2", f"duplicate id 'a2' with other content (first at {source}:2)"),
        10: (None, "question is_impossible but has 1 answers"),
        11: (None, "data[1].paragraphs[1] has no 'qas' list"),
        12: (None, "data[2] has no 'paragraphs' list"),
    }


def _ingest(make_config, inputs: list[str], **sections):
    cfg = make_config(ingest={"inputs": inputs, **sections.pop("ingest", {})}, **sections)
    store = cfg.open_store()
    client = shared_client(cfg.dask)
    ref = run_ingest(client, store, cfg.task, cfg.columns, cfg.ingest, cfg.azure, 200)
    return cfg, store, ref


def _table(store, ref, name: str) -> list[dict[str, Any]]:
    return [r for f in store.table_files(ref, name) for r in read_table(store, f)]


def test_the_cli_ingests_squad_accounting_for_every_question(tmp_path: Path) -> None:
    path = tmp_path / "squad.json"
    path.write_text(json.dumps(_squad()))  # one line, as the SQuAD files are published
    args = ["ingest", "-i", str(path), "--set", "ingest.format=squad"]
    args += ["--set", f"store={tmp_path / 'store'}"]
    args += [x for k, v in DASK.model_dump().items() for x in ("--set", f"dask.{k}={v}") if v]

    result = CliRunner().invoke(app, args)

    assert result.exit_code == 0, result.output
    ref = json.loads(result.stdout[result.stdout.index("{") :])
    assert ref["counts"] == SQUAD_COUNTS
    store_root = Path(ref["uri"])
    store = validate_config({"store": str(tmp_path / "store")}).open_store()  # its key decrypts
    accepted = [
        row
        for part in sorted((store_root / "accepted").glob("*.parquet"))
        for row in read_table(store, str(part))
    ]
    assert accepted == SQUAD_ACCEPTED
    quarantine = [
        row
        for part in sorted((store_root / "quarantine").glob("*.parquet"))
        for row in read_table(store, str(part))
    ]
    got = {q["line"]: (q["id"], q["reason"]) for q in quarantine}
    assert got == _squad_quarantine(str(path))
    raw = {q["line"]: q["raw"] for q in quarantine}
    assert raw[6].startswith('data[0].paragraphs[1].qas[1]: {"question": "When?"')
    assert raw[12] == 'data[2]: {"title": "Empty"}'


def test_a_json_file_is_squad_when_it_is_one_document_and_json_lines_otherwise(
    make_config, tmp_path: Path
) -> None:
    squad = tmp_path / "squad.json"
    squad.write_text(json.dumps(_squad(), indent=2))  # pretty-printed: many lines, one document
    unanswerable = {"id": "j2", "question": "Who?", "context": CTX_B, "answers": NO_ANSWERS}
    answered = {**unanswerable, "id": "j1", "answers": _answer_lists(CTX_B, "Porto")}
    lines = write_jsonl(tmp_path / "lines.json", [json.dumps(answered), json.dumps(unanswerable)])

    _, store, ref = _ingest(make_config, [str(squad), str(lines)])

    assert ref.counts == {**SQUAD_COUNTS, "files": 2, "read": 14, "accepted": 6, "unanswerable": 3}
    assert _table(store, ref, "accepted") == [answered, unanswerable, *SQUAD_ACCEPTED]


def test_a_file_that_is_no_squad_is_quarantined_and_a_squad_file_needs_qa(
    make_config, tmp_path: Path
) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text('{"version": "v2.0", "data": [{"title": "x", "paragraphs": [')
    no_data = tmp_path / "no-data.json"
    no_data.write_text(json.dumps({"version": "v2.0", "articles": []}))

    _, store, ref = _ingest(make_config, [str(broken), str(no_data)], ingest={"format": "squad"})

    assert (ref.counts["read"], ref.counts["quarantined"]) == (2, 2)
    reasons = {Path(q["source"]).name: q["reason"] for q in _table(store, ref, "quarantine")}
    assert reasons["broken.json"].startswith("not a SQuAD file: unparsable JSON")
    assert reasons["no-data.json"] == (
        "not a SQuAD file: no 'data' list of articles with 'paragraphs'"
    )

    squad = tmp_path / "squad.json"
    squad.write_text(json.dumps(_squad()))
    with pytest.raises(ValueError, match=r"squad\.json is a SQuAD file: .* not summarization"):
        _ingest(make_config, [str(squad)], task="summarization")


@pytest.mark.slow
def test_unanswerable_questions_go_through_screen_and_split(make_config, tmp_path: Path) -> None:
    path = tmp_path / "squad.json"
    path.write_text(json.dumps(_squad()))
    cfg, store, ingested = _ingest(make_config, [str(path)])
    client = shared_client(cfg.dask)

    screened, _ = run_screen(client, store, ingested, cfg.screen)
    split = run_split(client, store, screened, cfg.split, [])

    rows = {r["id"]: r for s in SPLITS for r in _table(store, split, s)}
    assert set(rows) == {"a1", "a2", "a3", "b3"}
    assert rows["a3"]["answers"] == rows["b3"]["answers"] == NO_ANSWERS
    assert "Maria Santos" not in rows["b3"]["context"]  # redacted like any other record
    assert rows["b3"]["context"].startswith("<PERSON>")


def _answer_lists(context: str, text: str) -> dict[str, list[Any]]:
    return {"text": [text], "answer_start": [context.index(text)]}


def _qa_rows() -> list[dict[str, Any]]:
    """QA rows as a `datasets` user holds them: answered, unanswerable, one answer misplaced."""
    rows = [
        {
            "id": f"q{i}",
            "title": "Outages",  # a column no record field maps to: ignored
            "question": f"Question {i}?",
            "context": CTX_A if i % 2 else CTX_B,
            "answers": _answer_lists(CTX_A, "3 days") if i % 2 else NO_ANSWERS,
        }
        for i in range(8)
    ]
    rows[5]["answers"] = {"text": ["3 days"], "answer_start": [1]}
    return rows


def _summary_rows() -> list[dict[str, Any]]:
    """CNN/DailyMail-shaped rows (`article`, `highlights`), one with an empty highlight."""
    rows = [
        {
            "id": f"s{i}",
            "article": f"Ticket {i}: the VPN in office {i} dropped every hour for {i} days.",
            "highlights": f"VPN dropped for {i} days.",
        }
        for i in range(7)
    ]
    rows[3]["highlights"] = "  "
    return rows


def _write_arrow(path: Path, rows: list[dict[str, Any]], stream: bool) -> None:
    """An Arrow file: the IPC stream format `datasets` writes, or the IPC file format."""
    table = pa.Table.from_pylist(rows)
    new = pa.ipc.new_stream if stream else pa.ipc.new_file
    with pa.OSFile(str(path), "wb") as sink, new(sink, table.schema) as writer:
        writer.write_table(table)


SUMMARY_COLUMNS = {"document_key": "article", "summary_key": "highlights"}


@pytest.mark.parametrize(
    ("task", "rows", "columns", "bad_row"),
    [
        ("extractive-qa", _qa_rows(), {}, 5),
        ("summarization", _summary_rows(), SUMMARY_COLUMNS, 3),
    ],
)
def test_datasets_folders_and_arrow_files_give_the_records_json_lines_give(
    make_config, tmp_path: Path, task: str, rows: list[dict[str, Any]], columns, bad_row: int
) -> None:
    write_jsonl(tmp_path / "rows.jsonl", [json.dumps(r) for r in rows])
    Dataset.from_list(rows).save_to_disk(tmp_path / "dataset")
    splits = {"train": rows[:4], "test": rows[4:]}
    DatasetDict({k: Dataset.from_list(v) for k, v in splits.items()}).save_to_disk(
        tmp_path / "dict"
    )
    _write_arrow(tmp_path / "rows.arrow", rows, stream=False)

    outcomes = {}
    for name in ("rows.jsonl", "dataset", "dict", "rows.arrow"):
        _, store, ref = _ingest(make_config, [str(tmp_path / name)], task=task, columns=columns)
        quarantine = _table(store, ref, "quarantine")
        outcomes[name] = (
            ref.counts,
            _table(store, ref, "accepted"),
            [(q["line"], q["id"]) for q in quarantine],
        )

    expected = outcomes["rows.jsonl"]
    assert expected[0]["read"] == len(rows) and expected[0]["quarantined"] == 1
    assert expected[2] == [(bad_row + 1, rows[bad_row]["id"])]
    assert all(outcome == expected for outcome in outcomes.values()), outcomes
    if task == "summarization":
        assert expected[1][0] == {
            "id": "s0",
            "document": rows[0]["article"],
            "summary": rows[0]["highlights"],
        }
    else:
        assert expected[0]["unanswerable"] == 4


def test_a_datasets_folder_is_one_input_wherever_it_sits(make_config, tmp_path: Path) -> None:
    data = tmp_path / "data"
    rows = _qa_rows()
    DatasetDict(
        {"train": Dataset.from_list(rows[:3]), "validation": Dataset.from_list(rows[3:5])}
    ).save_to_disk(data / "dict")
    Dataset.from_list(rows[5:7]).save_to_disk(data / "nested" / "dataset")
    write_jsonl(data / "more.jsonl", [json.dumps(rows[7])])
    _write_arrow(data / "stream.arrow", rows[:2], stream=True)
    (data / "nested" / "notes.md").write_text("not an input: no known extension")
    (data / "nested" / "notes.txt").write_text("a note beside QA data, not raw-text documents")
    expected = [
        str(data / "dict"),
        str(data / "more.jsonl"),
        str(data / "nested" / "dataset"),
        str(data / "stream.arrow"),
    ]

    assert expand_inputs([str(data)], make_config().azure) == expected
    assert expand_inputs([str(data / "*")], make_config().azure) == expected
    assert expand_inputs([str(data / "dict" / "*")], make_config().azure) == [str(data / "dict")]
    # a task whose records are raw text reads the .txt files met in a directory
    raw = expand_inputs([str(data)], make_config().azure, "text-generation")
    assert raw == sorted([*expected, str(data / "nested" / "notes.txt")])
    assert expand_inputs([str(data)], make_config().azure, "extractive-qa") == expected
    _, _, ref = _ingest(make_config, [str(data)])
    assert ref.counts["files"] == 4
    assert ref.counts["read"] == len(rows) + 2  # every row of every split, and the Arrow file's
    assert (ref.counts["accepted"], ref.counts["duplicates"]) == (7, 2)

    _, _, again = _ingest(make_config, [str(data)])
    assert again.reused
    Dataset.from_list(rows[5:6]).save_to_disk(data / "nested" / "dataset")
    _, _, changed = _ingest(make_config, [str(data)])
    assert not changed.reused and changed.counts["read"] == len(rows) + 1


@pytest.mark.slow
def test_a_datasets_folder_on_blob_storage_is_one_input(
    azurite: str, make_config, monkeypatch, tmp_path: Path
) -> None:
    from azure.storage.blob import BlobServiceClient

    monkeypatch.setenv("AZURE_STORAGE_CONNECTION_STRING", azurite)
    rows = _qa_rows()
    local = tmp_path / "upload"
    DatasetDict(
        {"train": Dataset.from_list(rows[:5]), "test": Dataset.from_list(rows[5:])}
    ).save_to_disk(local / "dict")
    write_jsonl(local / "more.jsonl", [json.dumps({**rows[0], "id": "m0", "question": "More?"})])
    container = BlobServiceClient.from_connection_string(azurite).create_container("formats")
    for path in sorted(p for p in local.rglob("*") if p.is_file()):
        container.upload_blob(f"hf/{path.relative_to(local).as_posix()}", path.read_bytes())

    for spec in ("az://formats/hf", "az://formats/hf/*"):
        assert expand_inputs([spec], make_config().azure) == [
            "az://formats/hf/dict",
            "az://formats/hf/more.jsonl",
        ]
    _, store, ref = _ingest(make_config, ["az://formats/hf"])
    assert (ref.counts["files"], ref.counts["read"], ref.counts["accepted"]) == (2, 9, 8)
    assert [q["line"] for q in _table(store, ref, "quarantine")] == [6]
    _, _, again = _ingest(make_config, ["az://formats/hf"])
    assert again.reused


def test_the_same_texts_under_other_ids_or_from_another_input_are_other_datasets(
    make_config, tmp_path: Path
) -> None:
    """Issue 24 item 3: a CSV (ids hd-*), a SQuAD file (sq-hd-*) and a datasets folder (hf-hd-*)
    with the same texts got one content hash, so the SQuAD run reused the CSV run's screen,
    ids, approval and training job. Now each is its own dataset; the same input again is
    reused, and the same records under another file name are another dataset too."""
    texts = [
        (CTX_A, "How long did the outage last?", "3 days"),
        (CTX_A, "Which office had the outage?", "Lisbon"),
        (CTX_B, "Who replaced the router?", "Maria Santos"),
    ]
    flat = [
        {
            "id": f"hd-{i}",
            "question": q,
            "context": c,
            "answer_text": a,
            "answer_start": c.index(a),
        }
        for i, (c, q, a) in enumerate(texts)
    ]
    (tmp_path / "csv").mkdir()
    pd.DataFrame(flat).to_csv(tmp_path / "csv" / "tickets.csv", index=False)
    paragraphs = [
        {
            "context": c,
            "qas": [{"id": f"sq-hd-{i}", "question": q, "answers": [_answer(c, a)]}],
        }
        for i, (c, q, a) in enumerate(texts)
    ]
    squad = {"version": "v2.0", "data": [{"title": "t", "paragraphs": paragraphs}]}
    (tmp_path / "squad.json").write_text(json.dumps(squad))
    Dataset.from_list(
        [
            {"id": f"hf-hd-{i}", "question": q, "context": c, "answers": _answers(c, a)}
            for i, (c, q, a) in enumerate(texts)
        ]
    ).save_to_disk(tmp_path / "hf")
    (tmp_path / "copy").mkdir()
    (tmp_path / "copy" / "renamed.csv").write_bytes((tmp_path / "csv" / "tickets.csv").read_bytes())

    inputs = ["csv/tickets.csv", "squad.json", "hf", "copy/renamed.csv", "csv/tickets.csv"]
    refs = [_ingest(make_config, [str(tmp_path / i)])[2] for i in inputs]
    assert all(r.counts["accepted"] == 3 for r in refs)
    hashes = [r.content_hash for r in refs]
    assert len(set(hashes[:4])) == 4  # other ids, or another source: another dataset
    assert hashes[4] == hashes[0] and refs[4].reused and refs[4].uri == refs[0].uri


def _answers(context: str, text: str) -> dict[str, list[Any]]:
    return {"text": [text], "answer_start": [context.index(text)]}


def test_metrics_reads_every_input_format_and_a_split_directory_s_test_table(
    tmp_path: Path,
) -> None:
    """Issue 24 item 5: `tunegate metrics` reads what `run` and `predict` read: a CSV with the
    answer's text and offset in columns, a SQuAD file, a `datasets` folder, and a split dataset
    directory, which means its test table (never train and validation with it)."""
    from platforms.manifest import table_info
    from platforms.store import Store, write_table

    texts = [(CTX_A, "How long did the outage last?", "3 days"), (CTX_B, "Who?", "Maria Santos")]
    rows = [
        {"id": f"r{i}", "question": q, "context": c, "answers": _answers(c, a)}
        for i, (c, q, a) in enumerate(texts)
    ]
    pd.DataFrame(
        [
            {**{k: r[k] for k in ("id", "question", "context")}, "answer_text": a}
            | {"answer_start": c.index(a)}
            for r, (c, _, a) in zip(rows, texts, strict=True)
        ]
    ).to_csv(tmp_path / "refs.csv", index=False)
    paragraphs = [
        {"context": r["context"], "qas": [{"id": r["id"], "question": r["question"], "answers": [
            {"text": a, "answer_start": c.index(a)}]}]}
        for r, (c, _, a) in zip(rows, texts, strict=True)
    ]  # fmt: skip
    (tmp_path / "refs.json").write_text(json.dumps({"data": [{"paragraphs": paragraphs}]}))
    Dataset.from_list(rows).save_to_disk(tmp_path / "hf")
    store = Store(str(tmp_path / "store"))
    writer = store.begin_dataset("split", "s" * 64)
    schema = pa.Table.from_pylist(rows).schema
    train = [{**rows[0], "id": "train-only"}]
    write_table(store, writer.part_uri("test", 0), rows, schema)
    write_table(store, writer.part_uri("train", 0), train, schema)
    split_dir = writer.commit(
        task="extractive-qa",
        content_hash="c",
        parent_hashes=[],
        config_hash="x",
        counts={"test": 2, "train": 1},
        tables={
            "test": table_info(2, ["test/part-00000.parquet"], schema),
            "train": table_info(1, ["train/part-00000.parquet"], schema),
        },
    ).uri
    predictions = tmp_path / "preds.jsonl"
    predictions.write_text('{"id": "r0", "prediction": "3 days"}\n{"id": "r1", "prediction": "x"}')
    base = ["metrics", "--task", "extractive-qa", "--predictions", str(predictions)]
    expected = {"exact_match": 50.0, "f1": 50.0}
    for references in ("refs.csv", "refs.json", "hf", split_dir):
        result = CliRunner().invoke(app, [*base, "-r", str(tmp_path / references)])
        assert result.exit_code == 0, (references, result.output)
        assert json.loads(result.stdout) == pytest.approx(expected), references
    # --split train: that table alone, which has a record nobody predicted
    result = CliRunner().invoke(app, [*base, "-r", split_dir, "--split", "train"])
    assert result.exit_code == 2 and "1 references have no prediction" in result.output


def test_a_csv_quote_never_closed_loses_no_row_after_it(tmp_path: Path) -> None:
    """Python's reader takes every line after an unterminated quote into one field: the row is
    quarantined for its quote, the rows after it (one with a real multi-line cell) read as
    written, each on its own line number."""
    from tasks.readers import read_lines
    from tasks.records import ColumnMap, TaskType

    path = tmp_path / "tickets.csv"
    path.write_text(
        "id,question,context\n"
        'a,"Where is it?,The parcel is at the depot.\n'
        "b,When?,It left on Monday.\n"
        'c,Who?,"Northwind delivered it\non Friday."\n'
        "d,How many?,Three parcels.\n"
    )
    lines = list(read_lines(str(path), "csv", TaskType("extractive-qa"), ColumnMap(), {}))
    assert [line.number for line in lines] == [2, 3, 4, 6]
    assert "unterminated quote" in (lines[0].error or "")
    assert [line.obj["id"] for line in lines[1:]] == ["b", "c", "d"]
    assert lines[2].obj["context"] == "Northwind delivered it\non Friday."


def test_qa_answers_without_offsets_are_placed_from_the_context(
    make_config, tmp_path: Path
) -> None:
    """Issue 24 item 5: a CSV with its own column names, a question, a context and an answer but
    no offset column had every row quarantined as "missing field 'answers'". The answer's offset
    is now its first place in the context, counted; an answer the context does not hold is
    quarantined with a reason naming the missing offset column. JSON lines' nested answers
    without offsets are placed the same way."""
    rows = [
        ("t-1", CTX_A, "How long did the outage last?", "3 days"),
        ("t-2", CTX_A, "Which office had the outage?", "Lisbon"),
        ("t-3", CTX_B, "Who replaced the router?", "Maria Santos"),
        ("t-4", CTX_B, "When was the storm?", "Tuesday"),  # not in its context
    ]
    frame = pd.DataFrame(rows, columns=["ticket", "passage", "asked", "reply"])
    frame.to_csv(tmp_path / "own.csv", index=False)
    columns = {
        "id_key": "ticket",
        "context_key": "passage",
        "question_key": "asked",
        "answer_text_column": "reply",
    }
    _, store, ref = _ingest(make_config, [str(tmp_path / "own.csv")], columns=columns)
    assert ref.counts["accepted"] == 3 and ref.counts["answers_located"] == 3
    for record in _table(store, ref, "accepted"):
        (text,), (start,) = record["answers"]["text"], record["answers"]["answer_start"]
        assert record["context"][start : start + len(text)] == text
    (quarantined,) = _table(store, ref, "quarantine")
    assert quarantined["id"] == "t-4"
    assert "not in the context" in quarantined["reason"]
    assert "'answer_start'" in quarantined["reason"]

    nested = [
        json.dumps({"id": f"n-{i}", "question": q, "context": c, "answers": {"text": [a]}})
        for i, (_, c, q, a) in enumerate(rows[:3])
    ]
    _, store, ref = _ingest(make_config, [str(write_jsonl(tmp_path / "nested.jsonl", nested))])
    assert ref.counts["accepted"] == 3 and ref.counts["answers_located"] == 3
    starts = sorted(r["answers"]["answer_start"][0] for r in _table(store, ref, "accepted"))
    assert starts == sorted([CTX_A.index("3 days"), CTX_A.index("Lisbon"), 0])
