"""`tunegate metrics`: score a predictions file offline with the gate's metric code."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import typer

from cli.common import TaskOpt, fail


def metrics(
    task: TaskOpt,
    predictions: Annotated[Path, typer.Option(help='JSONL of {"id", "prediction"}.')],
    references: Annotated[
        Path, typer.Option(help="Records of the task's schema: JSONL, or a dataset directory.")
    ],
) -> None:
    """Score a predictions file offline with the same metric code as the gate; print JSON."""
    from tasks.scoring import score
    from trainer.data import read_split

    try:
        preds = {str(row["id"]): row["prediction"] for row in _jsonl(predictions)}
        if references.is_dir():
            tables = [t for t in ("test", "validation", "train") if (references / t).is_dir()]
            records = [r for t in tables for r in read_split(references, t)]
        else:
            records = list(_jsonl(references))
        missing = [str(r["id"]) for r in records if str(r["id"]) not in preds]
        if missing:
            raise ValueError(f"{len(missing)} references have no prediction, e.g. {missing[:3]}")
        values, _ = score(task, [preds[str(r["id"])] for r in records], records)
    except (ValueError, KeyError, OSError) as exc:
        fail(str(exc))
    print(json.dumps(values, indent=2))


def _jsonl(path: Path) -> Iterator[Any]:
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        if line.strip():
            try:
                yield json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path}:{number}: not JSON ({exc.msg})") from None
