"""Input file readers that never fail on one bad line.

Each reader yields `Line`s: the parsed object, or the reason it could not be parsed, with the
line (or row) number and a printable copy of the raw text for the quarantine. Blank lines are
yielded too, flagged, so ingest can count them apart.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import fsspec
import pyarrow.parquet as pq

from tasks.records import ColumnMap

FORMATS = ("jsonl", "csv", "parquet")
_RAW_LIMIT = 2000


@dataclass(frozen=True)
class Line:
    """One input line or row: `obj` when parsed, `error` when not, `blank` for empty lines."""

    number: int
    obj: Any = None
    error: str | None = None
    raw: str = ""
    blank: bool = False


def detect_format(uri: str) -> str:
    """The format from the file extension, or a ValueError that says which ones are known."""
    name = uri.lower().removesuffix(".gz")
    for fmt, suffixes in (
        ("jsonl", (".jsonl", ".json", ".ndjson")),
        ("csv", (".csv",)),
        ("parquet", (".parquet", ".pq")),
    ):
        if name.endswith(suffixes):
            return fmt
    raise ValueError(
        f"cannot tell the format of {uri!r} from its extension: use .jsonl, .csv or .parquet, "
        "or set ingest.format"
    )


def read_lines(
    uri: str, fmt: str, columns: ColumnMap, storage_options: dict[str, Any]
) -> Iterator[Line]:
    """Yield every line/row of one file in the given format."""
    with fsspec.open(uri, "rb", compression="infer", **storage_options) as f:
        if fmt == "parquet":
            yield from _parquet_rows(f)
            return
        data = f.read()
    if fmt == "jsonl":
        yield from _jsonl_lines(data)
    elif fmt == "csv":
        yield from _csv_rows(data, columns)
    else:
        raise ValueError(f"ingest.format must be one of {FORMATS}, got {fmt!r}")


def _jsonl_lines(data: bytes) -> Iterator[Line]:
    for number, line in enumerate(data.split(b"\n"), start=1):
        line = line.rstrip(b"\r")
        raw = line.decode("utf-8", errors="backslashreplace")[:_RAW_LIMIT]
        if not line.strip():
            if number == data.count(b"\n") + 1 and not line:
                return  # the empty remainder after the final newline is not a line
            yield Line(number, raw=raw, blank=True)
            continue
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError as exc:
            yield Line(number, error=f"non-UTF-8 bytes at byte {exc.start}", raw=raw)
            continue
        try:
            yield Line(number, obj=json.loads(text), raw=raw)
        except json.JSONDecodeError as exc:
            yield Line(number, error=f"unparsable JSON: {exc.msg} at column {exc.colno}", raw=raw)


def _csv_rows(data: bytes, columns: ColumnMap) -> Iterator[Line]:
    text = data.decode("utf-8", errors="surrogateescape")
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader)
    except StopIteration:
        return
    except csv.Error as exc:
        yield Line(1, error=f"unparsable CSV header: {exc}")
        return
    while True:
        start = reader.line_num + 1
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            yield Line(start, error=f"unparsable CSV row: {exc}")
            continue
        raw = ",".join(row).encode("utf-8", errors="surrogateescape")
        raw_text = raw.decode("utf-8", errors="backslashreplace")[:_RAW_LIMIT]
        if not any(cell.strip() for cell in row):
            yield Line(start, raw=raw_text, blank=True)
            continue
        if any(_has_surrogates(cell) for cell in row):
            yield Line(start, error="non-UTF-8 bytes in CSV row", raw=raw_text)
            continue
        if len(row) != len(header):
            yield Line(
                start,
                error=f"CSV row has {len(row)} fields, the header has {len(header)}",
                raw=raw_text,
            )
            continue
        obj: dict[str, Any] = dict(zip(header, row, strict=True))
        start_value = obj.get(columns.answer_start_key)
        if isinstance(start_value, str) and start_value.strip().isdigit():
            obj[columns.answer_start_key] = int(start_value)  # CSV cells are all text
        yield Line(start, obj=obj, raw=raw_text)


def _parquet_rows(f: Any) -> Iterator[Line]:
    table = pq.read_table(f)
    for number, row in enumerate(table.to_pylist(), start=1):
        yield Line(number, obj=row, raw=json.dumps(row, default=str)[:_RAW_LIMIT])


def _has_surrogates(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False
