"""`tunegate metrics`: score a predictions file offline with the gate's metric code."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import typer

from cli.common import ConfigOpt, SetOpt, SplitOpt, TaskOpt, fail, load_cli_config
from cli.inputs import read_inputs


def metrics(
    task: TaskOpt,
    predictions: Annotated[Path, typer.Option(help='JSONL of {"id", "prediction"}.')],
    references: Annotated[
        list[str],
        typer.Option(
            "--references",
            "-r",
            help="The records predicted: any input `tunegate run -i` reads (JSON lines, CSV, "
            "Parquet, SQuAD, a `datasets` folder, a folder or glob), or a split dataset "
            "directory (its --split table); repeat.",
        ),
    ],
    split: SplitOpt = "test",
    config: ConfigOpt = None,
    set: SetOpt = None,
) -> None:
    """Score a predictions file offline with the same metric code as the gate; print JSON.

    The references are read as `tunegate predict` and `tunegate run` read them (the config's
    column names); a split dataset directory means its test table unless --split says another.
    """
    from trainer.metrics import score_records

    cfg = load_cli_config(config, set, task=task)
    try:
        preds = {str(row["id"]): row["prediction"] for row in _jsonl(predictions)}
        records, skipped, _ = read_inputs(cfg, references, task, split)
        if skipped:
            reasons = sorted({row["reason"] for row in skipped})
            raise ValueError(
                f"{len(skipped)} references are not valid {task} records, e.g. {reasons[0]}"
            )
        missing = [str(r["id"]) for r in records if str(r["id"]) not in preds]
        if missing:
            raise ValueError(f"{len(missing)} references have no prediction, e.g. {missing[:3]}")
        values, _ = score_records(task, [preds[str(r["id"])] for r in records], records)
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
