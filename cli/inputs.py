"""One reader for the commands that read records (`tunegate predict`, `tunegate metrics`): every
input `tunegate run -i` reads (JSON lines, CSV, Parquet, SQuAD, `datasets` folders, globs,
folders; the config's column names), read and validated as ingest reads them, and a split dataset
directory (what the split stage writes), which means one of its tables: `test` unless asked.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from flows.config import PipelineConfig

SPLIT_TABLES = ("test", "validation", "train")


def split_dataset(spec: str) -> Path | None:
    """The folder, when `spec` is a split dataset directory (a `manifest.json` of stage split)."""
    folder = Path(spec)
    try:
        manifest = json.loads((folder / "manifest.json").read_text())
    except (OSError, ValueError):
        return None
    return folder if isinstance(manifest, dict) and manifest.get("stage") == "split" else None


def read_inputs(
    cfg: PipelineConfig, inputs: list[str], task: str, table: str = "test"
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, int]]:
    """(records, skipped rows with their reasons, counts) of every input, in order. A split
    dataset directory gives its `table`'s records (validated when they were split); any other
    input is read as ingest reads it. A later record with an id already read is skipped: ids
    must be unique where predictions are matched to records by id."""
    from platforms.blob import storage_options
    from tasks.ingest_files import read_file
    from tasks.ingest_inputs import expand_inputs, input_format
    from tasks.records import TaskType
    from trainer.data import read_split

    if table not in SPLIT_TABLES:
        raise ValueError(f"--split must be one of {', '.join(SPLIT_TABLES)}, not {table!r}")
    splits = [folder for spec in inputs if (folder := split_dataset(spec)) is not None]
    others = [spec for spec in inputs if split_dataset(spec) is None]
    files = expand_inputs(others, cfg.azure, cfg.task) if others else []
    records: list[dict[str, Any]] = []
    skipped: list[dict[str, Any]] = []
    first: dict[str, str] = {}
    counts = Counter(files=len(files) + len(splits), read=0, blank=0)

    def take(record: dict[str, Any], source: str, line: int) -> None:
        if record["id"] in first:
            reason = f"duplicate id {record['id']!r} (first at {first[record['id']]})"
            skipped.append(
                {"source": source, "line": line, "id": record["id"], "reason": reason, "raw": ""}
            )
        else:
            first[record["id"]] = f"{source}:{line}"
            records.append(record)

    for folder in splits:
        rows = read_split(folder, table)
        counts.update(read=len(rows))
        for number, record in enumerate(rows, start=1):
            take(record, f"{folder}/{table}", number)
    for uri in files:
        options = storage_options(uri, cfg.azure)
        fmt = input_format(uri, cfg.ingest.format, options)
        read = read_file(uri, fmt, options, task=TaskType(task), columns=cfg.columns)
        counts.update(read=read.read, blank=read.blank)
        skipped += [{k: v for k, v in row.items() if k != "stage"} for row in read.quarantine]
        for record, line in zip(read.accepted, read.keys.lines, strict=True):
            take(record, uri, line)
    if counts["read"] != len(records) + len(skipped):
        raise RuntimeError(f"records lost while reading: {dict(counts)}")  # a bug, never data
    return records, skipped, dict(counts)
