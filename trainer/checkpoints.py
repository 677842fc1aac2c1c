"""Training checkpoints: which one a restarted job resumes from, and their removal once done.

The Hugging Face Trainer writes `checkpoint-<step>/` folders (the LoRA adapter or the weights,
the optimizer, scheduler and RNG states) and `trainer_state.json`. In a job of several processes
the main one writes that state as soon as its own part is saved, while another rank may still be
writing its RNG state (`rng_state_1.pth`): so once every rank has saved, after a barrier, the
main process writes `SAVED` last (`mark_saved`). A folder whose trainer state or `SAVED` is
missing, unreadable or of another step was cut short (the job was killed or its node preempted
mid-save): it is never resumed from, and it is removed so that the rerun writes that step afresh.
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger("trainer.checkpoints")

STATE = "trainer_state.json"  # transformers' TRAINER_STATE_NAME, written by the main process
SAVED = "tunegate-saved.json"  # written last, once every process has saved its part
_FOLDER = re.compile(r"checkpoint-(\d+)")


@dataclass(frozen=True)
class Checkpoint:
    path: Path
    step: int


def _checkpoints(folder: Path) -> list[Checkpoint]:
    """Every `checkpoint-<step>` folder in `folder`, oldest step first."""
    if not folder.is_dir():
        return []
    found = [
        Checkpoint(path, int(match[1]))
        for path in folder.iterdir()
        if (match := _FOLDER.fullmatch(path.name)) and path.is_dir()
    ]
    return sorted(found, key=lambda c: c.step)


def _step_of(path: Path, key: str) -> int | None:
    try:
        found = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return found.get(key) if isinstance(found, dict) else None


def is_complete(checkpoint: Checkpoint) -> bool:
    """Its trainer state and its `SAVED` mark were written whole, for its own step."""
    return (
        _step_of(checkpoint.path / STATE, "global_step") == checkpoint.step
        and _step_of(checkpoint.path / SAVED, "step") == checkpoint.step
    )


def mark_saved(folder: Path, step: int, processes: int) -> None:
    """Called by the main process once every process has saved `checkpoint-<step>` (after a
    barrier): the mark that makes it complete, written whole (to a temporary name, then renamed)."""
    path = folder / f"checkpoint-{step}"
    temporary = path / f".{SAVED}.tmp"
    temporary.write_text(json.dumps({"step": step, "processes": processes}))
    temporary.replace(path / SAVED)


def newest_complete(folder: Path, remove_torn: bool = True) -> Checkpoint | None:
    """The newest complete checkpoint in `folder` (None: none, train from the start). Torn ones
    are skipped with a log line and, with `remove_torn` (the main process only), removed."""
    newest = None
    for checkpoint in _checkpoints(folder):
        if is_complete(checkpoint):
            newest = checkpoint
            continue
        log.info("skipping incomplete checkpoint %s (cut short while saving)", checkpoint.path)
        if remove_torn:
            shutil.rmtree(checkpoint.path, ignore_errors=True)
    return newest


def remove_all(folder: Path) -> None:
    """Remove the checkpoints once the trained model is saved; best effort (a dropped job mount
    must not fail a finished training). The folder itself goes when nothing else is in it."""
    for checkpoint in _checkpoints(folder):
        shutil.rmtree(checkpoint.path, ignore_errors=True)
    with contextlib.suppress(OSError):  # absent, holding something else, or a job's mount
        folder.rmdir()
