"""`tunegate data`: sample data (support tickets or support conversations with planted PII,
secrets, toxicity and broken lines)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from cli.common import console, fail
from samples.generate import TASKS as SAMPLE_TASKS

data_app = typer.Typer(help="Sample data.", no_args_is_help=True)


@data_app.command("sample")
def data_sample(
    task: Annotated[
        str,
        typer.Option(
            help=f"{', '.join(SAMPLE_TASKS[:-1])} or {SAMPLE_TASKS[-1]} (chat: support "
            "conversations whose last message is the agent's reply; text-generation: raw-text "
            "passages of a weather station's logbook)."
        ),
    ] = "extractive-qa",
    n: Annotated[int, typer.Option(help="Number of lines (valid, duplicate and broken).")] = 600,
    out: Annotated[
        Path, typer.Option(help="Output file: .jsonl, .csv, .parquet or .txt (text-generation).")
    ] = Path("sample.jsonl"),
    seed: Annotated[int, typer.Option(help="Same seed, same bytes.")] = 0,
) -> None:
    """Generate support-ticket records (or, for chat, conversations) with planted PII, secrets,
    toxicity and broken lines."""
    from samples.generate import generate_sample, write_sample

    try:
        sample = generate_sample(task, n, seed)
    except ValueError as exc:
        fail(str(exc))
    out.parent.mkdir(parents=True, exist_ok=True)
    write_sample(sample, out)
    console.print(
        f"wrote {len(sample.lines)} lines to {out}: {sum(sample.malformed.values())} malformed, "
        f"{sample.duplicate_count} duplicates, {sample.blank_lines} blank"
    )
