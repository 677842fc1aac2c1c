"""Text generation's data: the generated logbook passages and plain `.txt` files read as
documents separated by blank lines."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from samples.generate import MALFORMED_BY_TASK, generate_sample, valid_records, write_sample
from tasks.readers import detect_format, read_lines
from tasks.records import ColumnMap, TaskType, validate_record

TEXT = TaskType("text-generation")


def test_same_seed_same_bytes_and_every_line_accounted_for() -> None:
    sample = generate_sample("text-generation", 300, seed=4)
    assert sample.lines == generate_sample("text-generation", 300, seed=4).lines
    assert sample.lines != generate_sample("text-generation", 300, seed=5).lines
    assert len(sample.lines) == 300
    assert set(sample.malformed) == set(MALFORMED_BY_TASK["text-generation"])
    records = valid_records("text-generation", 1000, seed=4)
    assert all(set(r) == {"id", "text"} and "\n" not in r["text"] for r in records)
    assert len({r["text"] for r in records}) == len(records)  # only planted copies repeat
    # personal data is planted, each value in some document's text
    values = [v for vs in sample.planted_pii.values() for v in vs]
    assert values and all(any(v in r["text"] for r in records) for v in values)


def test_every_broken_line_is_invalid_and_every_other_validates() -> None:
    sample = generate_sample("text-generation", 200, seed=1)
    valid = bad = 0
    for line in sample.lines:
        if not line.strip():
            continue
        try:
            validate_record(TEXT, ColumnMap(), json.loads(line))
            valid += 1
        except ValueError:  # JSON, UTF-8 and record errors alike
            bad += 1
    assert bad == sum(sample.malformed.values())
    assert valid == 200 - bad - sample.blank_lines


def test_a_txt_file_is_documents_separated_by_blank_lines(tmp_path: Path) -> None:
    path = tmp_path / "log.txt"
    path.write_bytes(
        b"\xef\xbb\xbfFirst passage,\nits second line.\n\n\n  \nSecond passage.\n\n"
        b"Broken \xff bytes.\n\nLast one, no newline"
    )
    assert detect_format(str(path)) == "text"
    lines = list(read_lines(str(path), "text", TEXT, ColumnMap(), {}))
    assert [(line.number, line.obj) for line in lines if line.obj] == [
        (1, {"id": "log.txt:1", "text": "First passage,\nits second line."}),
        (6, {"id": "log.txt:6", "text": "Second passage."}),
        (10, {"id": "log.txt:10", "text": "Last one, no newline"}),
    ]
    (broken,) = [line for line in lines if line.error]
    assert broken.number == 8 and "non-UTF-8" in broken.error and "\\xff" in broken.raw


def test_a_txt_file_is_only_for_raw_text_records(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("A passage.\n")
    with pytest.raises(ValueError, match="text-generation task"):
        list(read_lines(str(path), "text", TaskType("chat"), ColumnMap(), {}))


def test_the_generated_sample_writes_as_a_txt_file_the_reader_reads_back(tmp_path: Path) -> None:
    sample = generate_sample("text-generation", 60, seed=2)
    write_sample(sample, tmp_path / "sample.txt")
    read = [
        line.obj["text"]
        for line in read_lines(str(tmp_path / "sample.txt"), "text", TEXT, ColumnMap(), {})
    ]
    texts = [json.loads(r)["text"] for r in sample.lines if _valid(r)]
    assert read == texts  # duplicates included, in order
    with pytest.raises(ValueError, match="text-generation documents"):
        write_sample(generate_sample("summarization", 60), tmp_path / "tickets.txt")


def _valid(line: bytes) -> bool:
    from samples.generate import _valid_record

    return _valid_record(line) is not None


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_documents_read_back_from_the_table_formats(tmp_path: Path, suffix: str) -> None:
    sample = generate_sample("text-generation", 40, seed=3)
    path = tmp_path / f"sample{suffix}"
    write_sample(sample, path)
    read = [
        validate_record(TEXT, ColumnMap(), line.obj)
        for line in read_lines(str(path), detect_format(str(path)), TEXT, ColumnMap(), {})
    ]
    expected = [json.loads(line) for line in sample.lines if _valid(line)]
    assert read == expected  # every valid document, duplicates included, in order
