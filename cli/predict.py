"""`tunegate predict`: score a registered model over files of records, with the evaluate stage's
prediction code, into the predictions file `tunegate metrics` reads.

This is how a user checks a model on their own held-out data: the records are read and validated
as ingest reads them (any input format, the config's column map), the model is the registry's
version of it (downloaded when the registry is on Azure ML), and the predictions come from
`trainer.predict.predict`, as in the gate. A record that does not validate is not scored but
counted and reported with its reason; none is lost silently.
"""

from __future__ import annotations

import json
from collections import Counter
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer

from cli.common import ConfigOpt, InputOpt, SetOpt, SplitOpt, console, fail, load_cli_config
from cli.inputs import read_inputs
from cli.models import find_version
from platforms.model_version import ModelFilesChanged


class Runtime(StrEnum):
    """What scores: the runtime the registered version serves with, or its torch weights."""

    served = "served"
    torch = "torch"


SHOWN_REASONS = 10  # reasons listed on stderr; --errors holds every skipped record

ModelOpt = Annotated[
    str,
    typer.Option(
        "--model",
        "-m",
        help="A registered model: NAME (its @champion), NAME:VERSION or NAME@ALIAS, "
        "e.g. tunegate-chat:3 or tunegate-chat@challenger.",
        show_default=False,
    ),
]


def predict(
    *,
    model: ModelOpt,
    input: InputOpt = None,
    out: Annotated[
        Path,
        typer.Option(help='Write the predictions here: JSONL of {"id", "prediction"}.'),
    ],
    errors: Annotated[
        Path | None,
        typer.Option(
            help="Write the records that were not scored here: JSONL of "
            "{source, line, id, reason, raw}."
        ),
    ] = None,
    split: SplitOpt = "test",
    batch_size: Annotated[int, typer.Option(min=1, help="Records per model call.")] = 32,
    runtime: Annotated[
        Runtime,
        typer.Option(
            help="served: the runtime the version serves with (its serving.json: ONNX Runtime "
            "fp32 or int8, or torch), as the endpoint answers; torch: its torch weights.",
        ),
    ] = Runtime.served,
    config: ConfigOpt = None,
    set: SetOpt = None,
) -> None:
    """Score a registered model over files of records into a predictions file.

    --model NAME is its champion; NAME:3 is version 3; NAME@challenger an alias.
    Records are read as `tunegate run -i` reads them (any ingest format, the
    config's column names) and need the fields of the model's task. A record
    that does not validate is skipped and counted with its reason (--errors
    writes them all). Score the predictions against the same file:

      tunegate predict -m tunegate-extractive-qa:3 -i held.jsonl --out p.jsonl
      tunegate metrics --task extractive-qa --predictions p.jsonl \\
          --references held.jsonl
    """
    if not input:
        fail("give the records to score with --input FILE (a file, directory or glob; repeat)")
    cfg = load_cli_config(config, set)
    backends = cfg.backends()
    name, ref = _parse_model(model)
    try:  # a version whose files are not as registered is refused, naming the file
        version = backends.files_here(find_version(backends.registry, name, ref))
    except ModelFilesChanged as exc:
        fail(str(exc), 1)
    from serving.scoring import load_served
    from trainer.modeling import MODEL_INFO
    from trainer.predict import predict as predict_records
    from trainer.taskspec import task_spec

    try:
        spec = task_spec(json.loads((Path(version.path) / MODEL_INFO).read_text())["task"])
    except (OSError, ValueError, KeyError) as exc:
        fail(f"{name}:{version.version} at {version.path} is no trained model ({exc})", 1)
    try:
        records, skipped, counts = read_inputs(cfg, input, spec.name, split)
    except (ValueError, OSError) as exc:
        fail(str(exc))
    if errors is not None:
        _write_jsonl(errors, skipped)
    _report_skipped(skipped, errors)
    if not records:
        fail(
            f"nothing to score: none of the {counts['read']} records read is a valid "
            f"{spec.name} record"
        )
    try:
        loaded, tokenizer, info, served = load_served(Path(version.path), runtime=runtime.value)
    except (OSError, ValueError) as exc:
        fail(f"cannot load {name}:{version.version} from {version.path}: {exc}", 1)
    predictions: list[str] = []
    with _progress() as progress:
        bar = progress.add_task(f"{name}:{version.version}", total=len(records))
        for i in range(0, len(records), batch_size):
            batch = records[i : i + batch_size]
            predictions += predict_records(
                loaded, tokenizer, info["task"], batch, batch_size=batch_size
            )
            progress.advance(bar, len(batch))
    _write_jsonl(
        out,
        [{"id": r["id"], "prediction": p} for r, p in zip(records, predictions, strict=True)],
    )
    blank = f", {_count(counts['blank'], 'blank line')} ignored" if counts["blank"] else ""
    console.print(
        f"{name}:{version.version} ({spec.name}, {served}): read {_count(counts['read'], 'record')} from "
        f"{_count(counts['files'], 'file')}, scored {len(records)}, skipped {len(skipped)}{blank}"
        f" → {out}"
    )


def _count(n: int, thing: str) -> str:
    return f"{n} {thing}" + ("s" if n != 1 else "")


def _parse_model(model: str) -> tuple[str, str]:
    """(name, version number or alias) of NAME, NAME:VERSION or NAME@ALIAS."""
    if "@" in model:
        name, ref = model.split("@", 1)
    elif ":" in model:
        name, ref = model.rsplit(":", 1)
        if not ref.isdigit():
            fail(f"--model {model}: a version is a number (NAME:3); an alias is NAME@{ref}")
    else:
        name, ref = model, "champion"
    if not name or not ref:
        fail(f"--model {model}: expected NAME, NAME:VERSION or NAME@ALIAS")
    return name, ref


def _report_skipped(skipped: list[dict[str, Any]], errors: Path | None) -> None:
    """One line per reason on stderr, most common first; where to find every skipped record."""
    if not skipped:
        return
    reasons = Counter(row["reason"] for row in skipped).most_common()
    console.print(f"[yellow]skipped {len(skipped)} records that are not valid:[/yellow]")
    for reason, n in reasons[:SHOWN_REASONS]:
        console.print(f"  {n:>6}  {reason}", markup=False, highlight=False)
    if len(reasons) > SHOWN_REASONS:
        console.print(f"  ... and {len(reasons) - SHOWN_REASONS} more reasons")
    console.print(
        f"  (every skipped record, with its line: {errors})"
        if errors is not None
        else "  (--errors FILE writes every skipped record with its line)",
        markup=False,
    )


def _write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    """Write `rows` as JSON lines all at once: a failed run leaves the old file or none, never
    half of one."""
    from platforms.store import Store

    text = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    try:
        Store(str(path.parent)).write_text_atomic(str(path.resolve()), text)
    except OSError as exc:
        fail(f"cannot write {path}: {exc}", 1)


def _progress() -> Any:
    """A progress bar on stderr when it is a terminal (nothing in logs or tests)."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=console,
        disable=not console.is_terminal,
    )
