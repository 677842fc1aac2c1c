"""Bounded work: a huge line is quarantined without being held whole, a record over
`ingest.max_record_chars` never reaches the screen, and a text the analyzer cannot take fails only
its own record."""

from __future__ import annotations

import io
import json
import tracemalloc
from pathlib import Path

import pytest

from platforms.compute import shared_client
from platforms.store import Store, read_table, write_table
from tasks.ingest import run_ingest
from tasks.readers import _bounded_lines
from tasks.records import TaskType
from tests.conftest import write_jsonl


def _qa(record_id: str, context: str) -> str:
    return json.dumps(
        {"id": record_id, "question": "Who?", "context": context,
         "answers": {"text": [context[:3]], "answer_start": [0]}}
    )  # fmt: skip


@pytest.mark.parametrize("chunk", [1, 3, 7, 64, 1 << 20])
def test_bounded_lines_split_like_lines_whatever_the_chunk(chunk: int) -> None:
    data = b"\xef\xbb\xbfab\n\ncdefghij\r\nk\n" + b"x" * 30 + b"\nlast"
    lines = list(_bounded_lines(io.BytesIO(data), limit=12, chunk=chunk))
    assert lines == [b"ab", b"", b"cdefghij\r", b"k", 30, b"last"]


def test_a_huge_line_is_never_held_in_memory_whole() -> None:
    data = io.BytesIO(b'{"id": "big", "context": "' + b"z" * 50_000_000 + b'"}\n{"id": "ok"}\n')
    tracemalloc.start()
    try:
        lines = list(_bounded_lines(data, limit=800_000))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert lines == [50_000_028, b'{"id": "ok"}']
    assert peak < 5_000_000, f"peak {peak} bytes for a 50 MB line"


def test_records_over_max_record_chars_are_quarantined_with_the_limit(
    make_config, tmp_path: Path
) -> None:
    path = write_jsonl(
        tmp_path / "in.jsonl",
        [
            _qa("fine", "Ana wrote the ticket about the router."),
            _qa("long", "y" * 1_500),  # parses, but over 1,000 characters
            _qa("huge", "w" * 20_000),  # over 8 x 1,000 bytes: never parsed
        ],
    )
    cfg = make_config(ingest={"inputs": [str(path)], "max_record_chars": 1_000})
    client, store = shared_client(cfg.dask), cfg.open_store()
    ref = run_ingest(client, store, cfg.task, cfg.columns, cfg.ingest, cfg.azure, 200)
    assert (ref.counts["accepted"], ref.counts["quarantined"]) == (1, 2)
    rows = [r for f in store.table_files(ref, "quarantine") for r in read_table(store, f)]
    reasons = {r["line"]: r["reason"] for r in rows}
    assert reasons[2] == "context has 1500 characters, over ingest.max_record_chars=1000"
    assert reasons[3].startswith("line of 20") and "over the size limit" in reasons[3]
    assert all(len(r["raw"]) <= 2000 for r in rows)


def test_a_text_the_analyzer_cannot_take_fails_only_its_record(make_config, tmp_path: Path) -> None:
    from screening.detectors import AnalysisFailed, detectors_for
    from tasks.screen import screen_partition
    from trainer.taskspec import task_spec

    cfg = make_config()
    detectors = detectors_for(
        cfg.screen.spacy_model, cfg.screen.language, cfg.screen.all_entities()
    )
    nlp = detectors.analyzer.nlp_engine.nlp["en"]
    limit = nlp.max_length
    nlp.max_length = 2_000  # what spaCy does past 1,000,000 characters (E088), here at 2,000
    try:
        findings = detectors.analyze(["Write to ana@example.com", "q" * 3_000])
        assert isinstance(findings[1], AnalysisFailed) and "ValueError" in findings[1].reason
        assert "EMAIL_ADDRESS" in {s.entity for s in findings[0]}  # the others still analysed

        store = Store(str(tmp_path / "store"))
        records = [
            json.loads(_qa("ok", "Write to ana@example.com about the router.")),
            json.loads(_qa("odd", "q" * 3_000)),
        ]
        part = f"{store.uri}/part.parquet"
        write_table(store, part, records, task_spec("extractive-qa").record_schema)
        result = screen_partition(
            part, 0, work_uri=f"{store.uri}/out", store_uri=store.uri, store_options={},
            task_type=TaskType.extractive_qa, config=cfg.screen,
        )  # fmt: skip
    finally:
        nlp.max_length = limit
    assert (result.tally.kept, result.tally.quarantined) == (1, 1)
    assert result.tally.reasons == {
        "screen could not analyse context: ValueError in the analyzer": 1
    }
    [quarantined] = read_table(store, f"{store.uri}/out/{result.quarantine_files[0]}")
    assert "q" * 100 not in quarantined["raw"]  # nothing unscreened is copied anywhere


def test_reading_a_file_holds_one_partition_not_the_whole_file(tmp_path: Path) -> None:
    from tasks.ingest_files import Spill, read_file
    from tasks.records import ColumnMap

    context = "The router from order 77 arrived after 5 days and the refund was late. " * 12
    path = write_jsonl(
        tmp_path / "many.jsonl", [_qa(f"r{i}", f"{i} {context}") for i in range(6000)]
    )

    def peak(spill: Spill | None) -> tuple[int, int]:
        tracemalloc.start()
        try:
            read = read_file(str(path), "jsonl", {}, spill, task=TaskType.extractive_qa,
                             columns=ColumnMap())  # fmt: skip
            return tracemalloc.get_traced_memory()[1], len(read.keys)
        finally:
            tracemalloc.stop()

    in_memory, n = peak(None)
    store = tmp_path / "store"
    spilled, m = peak(Spill(str(store / "work"), str(store), {}, 200, 0))
    assert n == m == 6000
    assert spilled < in_memory / 2, (spilled, in_memory)  # a 200-record chunk and the row keys
    assert len(list((store / "work" / "pending").glob("*.parquet"))) == 30


def test_ingest_leaves_no_pending_chunk_in_the_dataset(make_config, tmp_path: Path) -> None:
    lines = [_qa(f"r{i}", f"Ticket {i}: Ana wrote about the router.") for i in range(450)]
    path = write_jsonl(tmp_path / "in.jsonl", [*lines, lines[0]])  # and a duplicate
    cfg = make_config(ingest={"inputs": [str(path)]})
    client, store = shared_client(cfg.dask), cfg.open_store()
    ref = run_ingest(client, store, cfg.task, cfg.columns, cfg.ingest, cfg.azure, 200)
    assert (ref.counts["accepted"], ref.counts["duplicates"]) == (450, 1)
    assert not list(Path(ref.uri).glob("pending*")) and not list(Path(ref.uri).rglob("pending"))
    files = store.table_files(ref, "accepted")
    assert [len(read_table(store, f)) for f in files] == [200, 200, 50]
