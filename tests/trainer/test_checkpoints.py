"""Which checkpoint a restarted trainer resumes from: the newest one saved whole, never one cut
short mid-save (killed, or its node preempted, while writing it)."""

from __future__ import annotations

import json
from pathlib import Path

from trainer.checkpoints import SAVED, STATE, newest_complete, remove_all


def _checkpoint(folder: Path, step: int, state: str | None, saved: bool = True) -> Path:
    path = folder / f"checkpoint-{step}"
    path.mkdir(parents=True)
    (path / "adapter_model.safetensors").write_bytes(b"\0" * 64)
    if state is not None:
        (path / STATE).write_text(state)
        if saved:
            (path / SAVED).write_text(json.dumps({"step": step, "processes": 2}))
    return path


def _state(step: int) -> str:
    return json.dumps({"global_step": step, "max_steps": 100, "log_history": []})


def test_the_newest_complete_checkpoint_is_chosen_and_torn_ones_are_skipped(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "checkpoints"
    _checkpoint(folder, 90, _state(90))
    complete = _checkpoint(folder, 200, _state(200))  # newer than 90 by step, not by name
    torn = [
        _checkpoint(folder, 400, None),  # killed before the trainer state was written
        _checkpoint(folder, 600, _state(600)[:25]),  # killed while writing it
        _checkpoint(folder, 800, _state(600)),  # another step's state: not this folder's own
        # the main process wrote its state while another rank was still saving its own part
        _checkpoint(folder, 1000, _state(1000), saved=False),
    ]
    (folder / "checkpoint-900.tmp").mkdir()  # not a checkpoint folder at all

    # a process other than the main one only reads
    assert newest_complete(folder, remove_torn=False).path == complete  # type: ignore[union-attr]
    assert all(path.exists() for path in torn)
    found = newest_complete(folder)
    assert found is not None and (found.path, found.step) == (complete, 200)
    assert not any(path.exists() for path in torn)  # the rerun writes those steps afresh


def test_no_checkpoint_means_training_from_the_start_and_done_means_removed(
    tmp_path: Path,
) -> None:
    assert newest_complete(tmp_path / "absent") is None
    folder = tmp_path / "mount"
    assert newest_complete(folder) is None
    _checkpoint(folder, 2, _state(2))
    (folder / "other.txt").write_text("not ours")
    remove_all(folder)  # the model is saved: checkpoints go, anything else stays
    assert [p.name for p in folder.iterdir()] == ["other.txt"]
    (folder / "other.txt").unlink()
    _checkpoint(folder, 4, None)
    remove_all(folder)
    assert not folder.exists()
