"""The trainer's progress lines: written by the trainer as it trains, read by the orchestrator.

A training job's log holds three kinds of line:

    [progress] step=40/196 epoch=0.82 loss=2.733 elapsed=17s eta=66s   how far training is
    [trainer] loaded packaged:all-MiniLM-L6-v2: new (initialised) ...  the trainer's own lines
    .../modeling_utils.py:3303: FutureWarning: ...                      anything else (libraries)

`format_progress` and `parse_progress` write and read the first; `own_message` picks out the
second. The orchestrator (tasks/train.py) turns progress lines into a progress bar and a Prefect
progress artifact, shows the trainer's own lines, and keeps every other line in the run's log file
only. Nothing here imports torch or transformers.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

PROGRESS = "[progress] "
OWN = "[trainer] "
# A log record with `extra={CONSOLE: False}` stays off the terminal (flows/run_log.py): its line
# is shown another way there (printed above a progress bar), it still reaches the run's logs.
CONSOLE = "tunegate_console"
_FIELD = re.compile(r"(\w+)=(\S+)")


@dataclass(frozen=True, slots=True)
class Progress:
    """Where a training run is: optimizer step of total, epoch, the last losses, the time."""

    step: int
    total: int
    epoch: float
    elapsed: float  # seconds since this process started training
    eta: float | None = None  # seconds left, None until a step was timed
    loss: float | None = None  # the last logged training loss
    eval_loss: float | None = None  # the last evaluation's loss

    @property
    def percent(self) -> float:
        return 100.0 * min(self.step, self.total) / self.total if self.total else 0.0


def estimate_eta(step: int, total: int, elapsed: float, first_step: int = 0) -> float | None:
    """Seconds left at the pace of the steps this process ran (a resumed run starts timing at
    its checkpoint's step `first_step`); None before it ran one."""
    done = step - first_step
    if done <= 0 or elapsed <= 0:
        return None
    return max(total - step, 0) * elapsed / done


def format_progress(progress: Progress) -> str:
    """The log line the orchestrator reads back with `parse_progress`."""
    fields = [
        f"step={progress.step}/{progress.total}",
        f"epoch={progress.epoch:.2f}",
    ]
    if progress.loss is not None:
        fields.append(f"loss={progress.loss:.4g}")
    if progress.eval_loss is not None:
        fields.append(f"eval_loss={progress.eval_loss:.4g}")
    fields.append(f"elapsed={progress.elapsed:.0f}s")
    if progress.eta is not None:
        fields.append(f"eta={progress.eta:.0f}s")
    return PROGRESS + " ".join(fields)


def parse_progress(line: str) -> Progress | None:
    """The progress a log line states, or None when it is no (well-formed) progress line."""
    if not line.startswith(PROGRESS):
        return None
    fields = dict(_FIELD.findall(line[len(PROGRESS) :]))
    try:
        step, total = (int(x) for x in fields["step"].split("/"))
        return Progress(
            step=step,
            total=total,
            epoch=float(fields["epoch"]),
            elapsed=_seconds(fields["elapsed"]),
            eta=_seconds(fields["eta"]) if "eta" in fields else None,
            loss=float(fields["loss"]) if "loss" in fields else None,
            eval_loss=float(fields["eval_loss"]) if "eval_loss" in fields else None,
        )
    except (KeyError, ValueError):
        return None


class ProgressWriter:
    """Writes a progress line as training goes (the trainer's callback calls it, on the main
    process): at each log step with its loss, or an evaluation's loss (`logged`), at least every
    `every_seconds` between them (`stepped`), and at the end (`ended`). The time left is
    paced by the steps this process ran (a resumed run starts at its checkpoint's step)."""

    def __init__(
        self, every_seconds: float = 5.0, write: Callable[[str], Any] | None = None
    ) -> None:
        self.every_seconds = every_seconds
        self.write = write or (lambda line: print(line, flush=True))
        self.start = self.last_line = time.perf_counter()
        self.first_step = 0
        self.loss: float | None = None
        self.eval_loss: float | None = None

    def began(self, step: int) -> None:
        self.start = self.last_line = time.perf_counter()
        self.first_step = step

    def stepped(self, step: int, total: int, epoch: float) -> None:
        if time.perf_counter() - self.last_line >= self.every_seconds:
            self._line(step, total, epoch)

    def logged(self, step: int, total: int, epoch: float, logs: dict[str, Any]) -> None:
        if "loss" in logs:
            self.loss = float(logs["loss"])
        if "eval_loss" in logs:
            self.eval_loss = float(logs["eval_loss"])
        if "loss" in logs or "eval_loss" in logs:
            self._line(step, total, epoch)

    def ended(self, step: int, total: int, epoch: float) -> None:
        self._line(step, total, epoch)

    def _line(self, step: int, total: int, epoch: float) -> None:
        now = time.perf_counter()
        self.last_line = now
        elapsed = now - self.start
        progress = Progress(
            step=step,
            total=total,
            epoch=epoch,
            elapsed=elapsed,
            eta=estimate_eta(step, total, elapsed, self.first_step),
            loss=self.loss,
            eval_loss=self.eval_loss,
        )
        self.write(format_progress(progress))


def own_message(line: str) -> str | None:
    """The message of one of the trainer's own log lines, or None for any other line."""
    return line[len(OWN) :] if line.startswith(OWN) else None


def describe(progress: Progress) -> str:
    """One line a person reads: `step 40/196 (20%), epoch 0.82, loss 2.733, 0:17 elapsed, ETA
    1:06`."""
    parts = [f"step {progress.step}/{progress.total} ({progress.percent:.0f}%)"]
    parts.append(f"epoch {progress.epoch:.2f}")
    if progress.loss is not None:
        parts.append(f"loss {progress.loss:.4g}")
    if progress.eval_loss is not None:
        parts.append(f"eval loss {progress.eval_loss:.4g}")
    parts.append(f"{clock(progress.elapsed)} elapsed")
    if progress.eta is not None:
        parts.append(f"ETA {clock(progress.eta)}")
    return ", ".join(parts)


def clock(seconds: float) -> str:
    """`1:06`, `1:02:03`: a duration as a clock reads."""
    minutes, secs = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def _seconds(value: str) -> float:
    return float(value.removesuffix("s"))
