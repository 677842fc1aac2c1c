"""Training checkpoints: which one a restarted job resumes from, and their removal once done.

The Hugging Face Trainer writes `checkpoint-<step>/` folders (the LoRA adapter or the weights,
the optimizer, scheduler and RNG states) and, last, `trainer_state.json`. A folder whose
`trainer_state.json` is missing, unreadable or of another step was cut short (the job was killed
or its node preempted mid-save): it is never resumed from, and it is removed so that the rerun
writes that step afresh.
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

STATE = "trainer_state.json"  # transformers' TRAINER_STATE_NAME, written last in a checkpoint
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


def is_complete(checkpoint: Checkpoint) -> bool:
    """Its trainer state was written whole, for its own step (the Trainer writes it last)."""
    try:
        state = json.loads((checkpoint.path / STATE).read_text())
    except (OSError, ValueError):
        return False
    return isinstance(state, dict) and state.get("global_step") == checkpoint.step


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
