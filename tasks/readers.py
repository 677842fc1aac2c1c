"""Input file readers that never fail on one bad line.

Each reader yields `Line`s: the parsed object, or the reason it could not be parsed, with the
line (or row) number and a printable copy of the raw text for the quarantine. Blank lines are
yielded too, flagged, so ingest can count them apart.

Formats: JSON lines, CSV, Parquet, SQuAD (one nested JSON document: a `Line` per question, its
number counting questions through the file), plain text (text-generation's documents, separated
by blank lines: a `Line` per document, numbered by the line it starts on), Arrow files (the IPC stream or file format) and
Hugging Face `datasets` folders (tasks/datasets_folders.py; a `Line` per row, counted through the
folder). A file that cannot be parsed at all is one quarantined `Line` where that is possible (a
SQuAD file that is no JSON, or has no `data`), as a CSV file with a broken header is; an Arrow
file or datasets folder that cannot be read is a ValueError that names it.
"""

from __future__ import annotations

import codecs
import csv
import io
import itertools
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import fsspec
import pyarrow as pa
import pyarrow.parquet as pq

from tasks.datasets_folders import arrow_files
from tasks.records import ColumnMap, TaskType
from trainer.taskspec import task_spec

FORMATS = ("jsonl", "csv", "parquet", "squad", "arrow", "hf", "text")
_RAW_LIMIT = 2000
_NON_SPACE = re.compile(rb"\S")


@dataclass(frozen=True)
class Line:
    """One input line or row: `obj` when parsed, `error` when not, `blank` for empty lines."""

    number: int
    obj: Any = None
    error: str | None = None
    raw: str = ""
    blank: bool = False


def detect_format(uri: str) -> str:
    """The format from the file extension, or a ValueError that says which ones are known.

    `.json` gives `json`, decided when the file is read: SQuAD when the whole file is one object
    with a `data` list of articles, JSON lines otherwise (a SQuAD file is often a single line).
    """
    name = uri.lower().removesuffix(".gz")
    for fmt, suffixes in (
        ("jsonl", (".jsonl", ".ndjson")),
        ("json", (".json",)),
        ("csv", (".csv",)),
        ("parquet", (".parquet", ".pq")),
        ("arrow", (".arrow",)),
        ("text", (".txt",)),
    ):
        if name.endswith(suffixes):
            return fmt
    raise ValueError(
        f"cannot tell the format of {uri!r} from its extension: use .jsonl, .json, .csv, "
        ".parquet, .arrow or .txt, a datasets folder, or set ingest.format"
    )


def read_lines(
    uri: str,
    fmt: str,
    task: TaskType,
    columns: ColumnMap,
    storage_options: dict[str, Any],
    max_line_bytes: int | None = None,
) -> Iterator[Line]:
    """Yield every line/row of one file (or datasets folder) in the given format.

    JSON lines, CSV, Parquet and Arrow are streamed (a JSON line longer than `max_line_bytes` is
    counted and quarantined without ever being held in memory whole); a SQuAD or `.json` file is
    one JSON document and is read whole.
    """
    if fmt == "hf":
        yield from _row_lines(_datasets_folder_rows(uri, storage_options))
        return
    with fsspec.open(uri, "rb", compression="infer", **storage_options) as f:
        if fmt == "parquet":
            batches = pq.ParquetFile(f).iter_batches(batch_size=1024)
            yield from _row_lines(row for batch in batches for row in batch.to_pylist())
            return
        if fmt == "arrow":
            yield from _row_lines(_arrow_rows(f, uri))
            return
        if fmt == "jsonl":
            yield from _jsonl_lines(_bounded_lines(f, max_line_bytes))
            return
        if fmt == "csv":  # streamed; utf-8-sig drops the BOM of Excel's "CSV UTF-8"
            text = io.TextIOWrapper(f, encoding="utf-8-sig", errors="surrogateescape", newline="")
            yield from _csv_rows(text, columns)
            return
        if fmt == "text":
            text = io.TextIOWrapper(f, encoding="utf-8-sig", errors="surrogateescape")
            yield from text_documents(text, uri, task, columns)
            return
        data = f.read()  # a SQuAD or .json file is one JSON document: read whole
    data = data.removeprefix(codecs.BOM_UTF8)
    if fmt in ("json", "squad"):
        yield from _squad_or_jsonl(uri, fmt, data, task, columns)
    else:
        raise ValueError(f"ingest.format must be one of {FORMATS}, got {fmt!r}")


def _bounded_lines(f: Any, limit: int | None, chunk: int = 1 << 20) -> Iterator[bytes | int]:
    """The file's lines without their newline, read a chunk at a time; a line over `limit`
    bytes comes as its length (an int) instead, its bytes dropped as they are read. A UTF-8 BOM
    before the first line is removed."""
    pending = bytearray()
    skipped = 0  # bytes of an over-long line dropped so far (0: not in one)
    head = f.read(len(codecs.BOM_UTF8)).removeprefix(codecs.BOM_UTF8)
    for block in itertools.chain([head], iter(lambda: f.read(chunk), b"")):
        start = 0
        while (end := block.find(b"\n", start)) != -1:
            if skipped:
                yield skipped + end - start
                skipped = 0
            else:
                pending += block[start:end]
                if limit is not None and len(pending) > limit:
                    yield len(pending)
                else:
                    yield bytes(pending)
            pending.clear()
            start = end + 1
        rest = block[start:]
        if skipped:
            skipped += len(rest)
        elif limit is not None and len(pending) + len(rest) > limit:
            skipped = len(pending) + len(rest)
            pending.clear()
        else:
            pending += rest
    if skipped:
        yield skipped
    elif pending:
        yield bytes(pending)


def _jsonl_lines(lines: Iterable[bytes | int]) -> Iterator[Line]:
    for number, line in enumerate(lines, start=1):
        if isinstance(line, int):
            yield Line(number, error=f"line of {line} bytes is over the size limit (see ingest."
                       "max_record_chars); not parsed")  # fmt: skip
            continue
        line = line.rstrip(b"\r")
        raw = line[: _RAW_LIMIT * 4].decode("utf-8", errors="backslashreplace")[:_RAW_LIMIT]
        if not line.strip():
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


class _Recorded:
    """A text stream that remembers the physical lines the CSV reader took for its last row."""

    def __init__(self, text: Iterable[str]) -> None:
        self.text = iter(text)
        self.taken: list[str] = []

    def __iter__(self) -> _Recorded:
        return self

    def __next__(self) -> str:
        line = next(self.text)
        self.taken.append(line)
        return line


def _csv_rows(text: Iterable[str], columns: ColumnMap) -> Iterator[Line]:
    """The rows of a CSV text stream (undecodable bytes kept as surrogates, then quarantined).

    A quote opened and never closed makes Python's reader take every following line into one
    field: such a row (several lines, and not the header's number of fields) is quarantined as
    an unterminated quote on its first line, and the lines it swallowed are read again as rows
    of their own, so no valid row is lost with it."""
    recorded = _Recorded(text)
    reader = csv.reader(recorded)
    try:
        header = next(reader)
    except StopIteration:
        return
    except csv.Error as exc:
        yield Line(1, error=f"unparsable CSV header: {exc}")
        return
    offset = 0  # lines before the reader's first (a reader restarts after a broken quote)
    while True:
        recorded.taken = []
        start = offset + reader.line_num + 1
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            yield Line(start, error=f"unparsable CSV row: {exc}")
            continue
        taken = recorded.taken
        if len(taken) > 1 and len(row) != len(header) and '"' in taken[0]:
            yield Line(
                start,
                error='unterminated quote in CSV row (a " opened and never closed): the '
                "lines after it are read as rows of their own",
                raw=taken[0].rstrip("\r\n")[:_RAW_LIMIT],
            )
            recorded = _Recorded(itertools.chain(taken[1:], recorded.text))
            reader, offset = csv.reader(recorded), start
            continue
        yield _csv_line(start, row, header, columns)


def _csv_line(start: int, row: list[str], header: list[str], columns: ColumnMap) -> Line:
    raw = ",".join(row).encode("utf-8", errors="surrogateescape")
    raw_text = raw.decode("utf-8", errors="backslashreplace")[:_RAW_LIMIT]
    if not any(cell.strip() for cell in row):
        return Line(start, raw=raw_text, blank=True)
    if any(_has_surrogates(cell) for cell in row):
        return Line(start, error="non-UTF-8 bytes in CSV row", raw=raw_text)
    if len(row) != len(header):
        return Line(
            start,
            error=f"CSV row has {len(row)} fields, the header has {len(header)}",
            raw=raw_text,
        )
    obj: dict[str, Any] = dict(zip(header, row, strict=True))
    start_value = obj.get(columns.answer_start_key)
    if isinstance(start_value, str) and start_value.strip().isdigit():
        obj[columns.answer_start_key] = int(start_value)  # CSV cells are all text
    return Line(start, obj=obj, raw=raw_text)


def reads_plain_text(task: TaskType | str) -> bool:
    """Whether the task's records are raw-text documents, so `.txt` files are its inputs."""
    return task_spec(task).fields == ("id", "text")


def text_documents(
    lines: Iterable[str], uri: str, task: TaskType, columns: ColumnMap
) -> Iterator[Line]:
    """The documents of a plain text file: runs of lines between blank lines, each joined as
    it is written (its line breaks kept). A document's id is the file's name and the line it
    starts on (`book.txt:41`). Only a task whose records are raw text reads them."""
    fields = task_spec(task).fields
    if not reads_plain_text(task):
        raise ValueError(
            f"{uri}: a plain text file holds raw-text documents ({{id, text}} records, the "
            f"text-generation task); {task} records are {{{', '.join(fields)}}}"
        )
    name = uri.rstrip("/").rsplit("/", 1)[-1]
    if name.lower().endswith(".gz"):
        name = name[:-3]
    document: list[str] = []
    start = 0
    for number, line in enumerate(itertools.chain(lines, [""]), start=1):
        if line.strip():
            start = start or number
            document.append(line.rstrip("\r\n"))
            continue
        if document:
            text = "\n".join(document)
            raw = text.encode("utf-8", errors="surrogateescape").decode(
                "utf-8", errors="backslashreplace"
            )[:_RAW_LIMIT]
            if _has_surrogates(text):
                yield Line(start, error="non-UTF-8 bytes in the document", raw=raw)
            else:
                obj = {columns.id_key: f"{name}:{start}", columns.text_key: text}
                yield Line(start, obj=obj, raw=raw)
            document, start = [], 0


def _row_lines(rows: Iterable[dict[str, Any]]) -> Iterator[Line]:
    """Rows of a table (Parquet, Arrow), numbered from 1 through the input."""
    for number, row in enumerate(rows, start=1):
        yield Line(number, obj=row, raw=json.dumps(row, default=str)[:_RAW_LIMIT])


def _arrow_rows(f: Any, source: str) -> Iterator[dict[str, Any]]:
    """The rows of an Arrow IPC stream (what `datasets` writes) or IPC file, batch by batch."""
    try:
        batches: Iterator[pa.RecordBatch] = iter(pa.ipc.open_stream(f))
    except pa.ArrowInvalid:
        f.seek(0)
        try:
            reader = pa.ipc.open_file(f)
        except pa.ArrowInvalid as exc:
            raise ValueError(f"{source} is not an Arrow IPC stream or file: {exc}") from None
        batches = (reader.get_batch(i) for i in range(reader.num_record_batches))
    rows = 0
    try:
        for batch in batches:
            yield from batch.to_pylist()
            rows += batch.num_rows
    except pa.ArrowInvalid as exc:
        raise ValueError(f"{source}: unreadable Arrow data after {rows} rows: {exc}") from None


def _datasets_folder_rows(uri: str, storage_options: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Every row of a `datasets` folder: every split of a `DatasetDict`, file by file."""
    fs, path = fsspec.core.url_to_fs(uri, **storage_options)
    for file in arrow_files(fs, path):
        with fs.open(file, "rb") as f:
            yield from _arrow_rows(f, file)


def _squad_or_jsonl(
    uri: str, fmt: str, data: bytes, task: TaskType, columns: ColumnMap
) -> Iterator[Line]:
    """`squad`: the file's questions, or one quarantined `Line` when it is no SQuAD file;
    `json` (an auto-detected `.json` file): the same when it is one, JSON lines otherwise."""
    document, error = _json_document(data)
    if error is None and not _is_squad(document):
        error = "no 'data' list of articles with 'paragraphs'"
    if fmt == "json" and error is not None:
        yield from _jsonl_lines(_bounded_lines(io.BytesIO(data), None))
    elif error is not None:
        yield Line(1, error=f"not a SQuAD file: {error}", raw=_excerpt(data))
    elif "answers" not in task_spec(task).fields:
        raise ValueError(
            f"{uri} is a SQuAD file: its questions make extractive-qa records, not {task.value}"
        )
    else:
        yield from _squad_questions(document["data"], columns)


def _json_document(data: bytes) -> tuple[Any, str | None]:
    """(the file's content as one JSON value, None), or (None, why it is not one).

    JSON lines hold a value per line: when the first line parses on its own and more follows, the
    rest is not parsed to tell (a SQuAD file is one value, on one line or pretty-printed).
    """
    end = data.find(b"\n")
    if end != -1 and _NON_SPACE.search(data, end + 1) and _parses(data[:end]):
        return None, "a JSON value on each line, not one document"
    try:
        return json.loads(data), None
    except UnicodeDecodeError as exc:
        return None, f"non-UTF-8 bytes at byte {exc.start}"
    except json.JSONDecodeError as exc:
        return None, f"unparsable JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"


def _parses(data: bytes) -> bool:
    try:
        json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError):
        return False
    return True


def _is_squad(document: Any) -> bool:
    """A SQuAD document: one object whose `data` is a list of articles with `paragraphs` (some
    may be malformed: their questions are quarantined, not the file)."""
    articles = document.get("data") if isinstance(document, dict) else None
    return isinstance(articles, list) and (
        not articles or any(isinstance(a, dict) and "paragraphs" in a for a in articles)
    )


def _squad_questions(articles: list[Any], columns: ColumnMap) -> Iterator[Line]:
    """A `Line` per question of a SQuAD v1.1 / v2.0 document's articles, numbered through the file.

    Each question becomes a QA object under the configured column names, with its paragraph's
    context, for `validate_record` to check like any other; an unanswerable one (v2's
    `is_impossible`, or no answers) gets empty answer lists. An article or paragraph that holds
    no list of questions is one quarantined `Line`, so nothing in the file goes uncounted.
    """
    number = 0
    for a, article in enumerate(articles):
        paragraphs = article.get("paragraphs") if isinstance(article, dict) else None
        if not isinstance(paragraphs, list):
            number += 1
            raw = _excerpt(article, f"data[{a}]")
            yield Line(number, error=f"data[{a}] has no 'paragraphs' list", raw=raw)
            continue
        for p, paragraph in enumerate(paragraphs):
            where = f"data[{a}].paragraphs[{p}]"
            questions = paragraph.get("qas") if isinstance(paragraph, dict) else None
            if not isinstance(questions, list):
                number += 1
                yield Line(
                    number, error=f"{where} has no 'qas' list", raw=_excerpt(paragraph, where)
                )
                continue
            for q, question in enumerate(questions):
                number += 1
                yield _squad_question(
                    number, f"{where}.qas[{q}]", question, paragraph.get("context"), columns
                )


def _squad_question(number: int, where: str, qa: Any, context: Any, columns: ColumnMap) -> Line:
    """One SQuAD question as a QA object, or the reason it is not one (SQuAD ids are required)."""
    raw = _excerpt(qa, where)
    if not isinstance(qa, dict):
        return Line(number, error=f"{where} is not a question object", raw=raw)
    if qa.get("id") is None or (isinstance(qa["id"], str) and not qa["id"].strip()):
        return Line(number, error="question has no 'id'", raw=raw)
    impossible = qa.get("is_impossible") is True
    answers = qa.get("answers", [] if impossible else None)
    if answers is None:
        return Line(number, error="missing field 'answers'", raw=raw)
    if not isinstance(answers, list) or not all(isinstance(x, dict) for x in answers):
        return Line(
            number, error="field 'answers' must be a list of {text, answer_start} objects", raw=raw
        )
    if impossible and answers:
        return Line(number, error=f"question is_impossible but has {len(answers)} answers", raw=raw)
    obj = {
        columns.id_key: qa["id"],
        columns.question_key: qa.get("question"),
        columns.context_key: context,
        columns.answers_key: {
            columns.answer_text_key: [x.get("text") for x in answers],
            columns.answer_start_key: [x.get("answer_start") for x in answers],
        },
    }
    return Line(number, obj=obj, raw=raw)


def _excerpt(value: Any, where: str = "") -> str:
    """A printable start of a value (raw bytes or parsed JSON) for the quarantine's `raw`."""
    if isinstance(value, bytes):
        text = value[:_RAW_LIMIT].decode("utf-8", errors="backslashreplace")
    else:
        text = json.dumps(value, ensure_ascii=False, default=str)
    return (f"{where}: {text}" if where else text)[:_RAW_LIMIT]


def _has_surrogates(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False
