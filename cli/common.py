"""What every `tunegate` command group shares: the stderr console, the common options, loading the
pipeline config (a ConfigError exits 2), the error exits, and printing an endpoint.

Imported by the command modules; it imports none of them.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn, TypeVar

import typer
from rich.console import Console

from trainer.taskspec import TASK_SPECS

if TYPE_CHECKING:
    from flows.config import PipelineConfig

T = TypeVar("T")

# Messages, warnings and errors go to stderr; results (JSON, YAML, tables) to stdout.
console = Console(stderr=True, soft_wrap=True)

ConfigOpt = Annotated[
    Path | None, typer.Option("--config", "-c", help="Pipeline config YAML (configs/local.yaml).")
]
SetOpt = Annotated[
    list[str] | None,
    typer.Option("--set", help="Override a config field: --set screen.toxicity.threshold=0.9"),
]
InputOpt = Annotated[
    list[str] | None,
    typer.Option("--input", "-i", help="Input file, directory or glob (local or az://); repeat."),
]
SplitOpt = Annotated[
    str,
    typer.Option(
        help="Which table of a split dataset directory given as input: test, validation or train."
    ),
]
ExcludeOpt = Annotated[list[str] | None, typer.Option(help="Record id to leave out; repeat.")]
TaskOpt = Annotated[str, typer.Option(help="The task: " + ", ".join(TASK_SPECS) + ".")]


def load_cli_config(
    path: Path | None, overrides: list[str] | None, **fields: Any
) -> PipelineConfig:
    """The config at `path` (defaults when None) with `--set` overrides and the `fields` a command
    takes as options (dotted names, None for not given); a ConfigError exits 2 with its message."""
    from flows.config import ConfigError, field_overrides, load_config  # prefect, Dask load here

    try:
        return load_config(path, [*(overrides or []), *field_overrides(fields)])
    except ConfigError as exc:
        fail(str(exc))


def fail(message: str, code: int = 2) -> NoReturn:
    """Print `message` in red on stderr and exit with `code` (2: bad input, 1: it did not work)."""
    console.print(f"[red]{message}[/red]")
    raise typer.Exit(code) from None


def run_stage(fn: Callable[[], T]) -> T:
    """`fn()`, a stage's ValueError or FileNotFoundError (bad dataset, bad input) exiting 2."""
    try:
        return fn()
    except (ValueError, FileNotFoundError) as exc:
        fail(str(exc))


def print_table(table: Any, to: Console | None = None) -> None:
    """A rich table on stdout (or the console `to`: the stderr `console` for what is no result),
    sized for the terminal (or COLUMNS) at the time of the call. A cell too wide for its column
    wraps (a word longer than the column folds onto the next line): nothing is cut off with an
    ellipsis, so a name, version or path shows whole at 80 columns."""
    for column in table.columns:
        if column.overflow == "ellipsis":  # rich's default: "long-model-na…"
            column.overflow = "fold"
    (to or Console(soft_wrap=True)).print(table)


def print_endpoint(endpoint: dict[str, Any]) -> None:
    """Where a rollout's endpoint serves, its traffic and key file, a curl example, and that it
    stays up after the run, with the command that stops it."""
    traffic = ", ".join(f"{k} {v}%" for k, v in endpoint["traffic"].items())
    console.print(f"endpoint {endpoint['url']}  ({traffic}; key in {endpoint['key_file']})")
    example = endpoint.get("example")
    if example:
        console.print(
            f"curl -s {endpoint['url']}/score -H 'Content-Type: application/json' "
            f'-H "Authorization: Bearer $(cat {endpoint["key_file"]})" '
            f"-d {shlex.quote(json.dumps(example['request']))}",
            markup=False,  # JSON's brackets are no rich markup
        )
        console.print(f"→ {json.dumps(example['response'])}", markup=False)
    if endpoint.get("stays_up"):
        console.print(endpoint["stays_up"], markup=False)
