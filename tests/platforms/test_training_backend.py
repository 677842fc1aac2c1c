"""The local training backend: reattach instead of resubmitting, cancel, failures name the log."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import signal
import time
from pathlib import Path

import pytest

from platforms.training import LocalTrainingBackend, TrainSpec, trainer_arguments
from tasks.records import TaskType
from tests.trainer.tiny import qa_record, tiny_model, write_dataset
from trainer.checkpoints import newest_complete
from trainer.progress import parse_progress
from trainer.train import main


def _spec(tmp_path: Path, name: str, **args) -> TrainSpec:
    return TrainSpec(
        name=name,
        data_dir=str(write_dataset(tmp_path, TaskType.extractive_qa, qa_record)),
        args={"task": "extractive-qa", "model": str(tiny_model(tmp_path, "bert")), **args},
    )


@pytest.mark.slow
def test_a_running_job_is_reattached_and_cancel_stops_it(tmp_path: Path) -> None:
    backend = LocalTrainingBackend(tmp_path / "jobs")
    spec = _spec(tmp_path, "long", max_steps=100_000, max_length=64, doc_stride=16)
    first = backend.submit(spec)
    pid = json.loads((tmp_path / "jobs" / "long" / "job.json").read_text())["pid"]
    started = [pid]
    try:
        again = backend.submit(spec)  # a retried flow: same name, the job is still running
        assert again.status == "running" and again.reused
        assert json.loads((tmp_path / "jobs" / "long" / "job.json").read_text())["pid"] == pid

        # a run killed between starting the job and recording it (an older store's empty job.json):
        # the job it started is found by the pid it wrote itself, stopped, and started again
        (tmp_path / "jobs" / "long" / "job.json").write_text("")
        deadline = time.monotonic() + 30
        while not (tmp_path / "jobs" / "long" / "pid").exists() and time.monotonic() < deadline:
            time.sleep(0.05)  # the job writes it as its first step
        assert backend.status(first) == "running"
        restarted = backend.submit(spec)
        assert restarted.status == "running" and not restarted.reused
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
        pid = json.loads((tmp_path / "jobs" / "long" / "job.json").read_text())["pid"]
        started.append(pid)

        backend.cancel(first)
        assert backend.status(first) == "cancelled"
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
    finally:  # a failing assertion leaves no training job behind
        for job in started:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(job, signal.SIGKILL)


@pytest.mark.slow
def test_a_finished_job_is_reused_and_a_failed_one_names_its_log(tmp_path: Path) -> None:
    backend = LocalTrainingBackend(tmp_path / "jobs")
    spec = _spec(tmp_path, "short", max_steps=2, max_length=64, doc_stride=16)
    lines: list[str] = []
    done = backend.wait(backend.submit(spec), lines.append)
    assert done.status == "completed", "\n".join(lines[-30:])
    assert (backend.fetch_outputs(done) / "adapter_model.safetensors").exists()
    progress = [p for p in map(parse_progress, lines) if p is not None]
    assert progress and progress[-1].step == progress[-1].total == 2  # the log was streamed
    reused = backend.submit(spec)
    assert reused.status == "completed" and reused.reused

    broken = TrainSpec(
        name="broken", data_dir=spec.data_dir, args={**spec.args, "model": str(tmp_path / "none")}
    )
    failed = backend.wait(backend.submit(broken), lambda _: None)
    assert failed.status == "failed"
    with pytest.raises(RuntimeError, match=r"broken is failed; see .*broken/train.log"):
        backend.fetch_outputs(failed)


def test_launch_commands(tmp_path: Path) -> None:
    spec = TrainSpec(name="x", data_dir="d", args={"lora": False, "lora_target_modules": ["q"]})
    single = LocalTrainingBackend.command(spec, tmp_path)
    assert single[1:3] == ["-m", "trainer.train"]
    assert "--no-lora" in single and single[-2:] == ["--lora-target-modules", "q"]
    ddp = LocalTrainingBackend.command(spec.model_copy(update={"nproc": 2}), tmp_path)
    assert ddp[1:4] == ["-m", "torch.distributed.run", "--standalone"]
    assert ddp[ddp.index("--nproc_per_node") + 1] == "2"
    accel = LocalTrainingBackend.command(
        spec.model_copy(update={"nproc": 4, "accelerate_config": "trainer/configs/fsdp.yaml"}),
        tmp_path,
    )
    assert accel[accel.index("--config_file") + 1] == "trainer/configs/fsdp.yaml"
    assert accel[accel.index("--num_processes") + 1] == "4"


@pytest.mark.slow
def test_wait_cancels_the_job_when_interrupted(tmp_path: Path) -> None:
    backend = LocalTrainingBackend(tmp_path / "jobs")
    job = backend.submit(_spec(tmp_path, "interrupted", max_steps=100_000, max_length=64))
    started = time.monotonic()

    def interrupt(_line: str) -> None:
        if time.monotonic() - started > 1:
            raise KeyboardInterrupt  # what a cancelled flow run or Ctrl-C raises in the wait

    with pytest.raises(KeyboardInterrupt):
        backend.wait(job, interrupt)
    assert backend.status(job) == "cancelled"


@pytest.mark.slow
def test_a_killed_job_resumes_from_its_newest_complete_checkpoint(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A preempted node, here: the job's processes SIGKILLed mid-epoch once a checkpoint exists,
    and a later checkpoint left torn. The trainer started again with the job's own arguments
    (a rerun: same folder, same command) resumes from the newest complete checkpoint and ends
    at an uninterrupted run's step count, its checkpoints gone from the model's folder."""
    backend = LocalTrainingBackend(tmp_path / "jobs")
    args = {"max_length": 64, "doc_stride": 16, "batch_size": 3, "epochs": 1, "save_steps": 2}
    spec = _spec(tmp_path, "preempted", **args)  # 24 records: 8 steps
    job = backend.submit(spec)
    folder = tmp_path / "jobs" / "preempted"
    checkpoints = Path(job.output_dir) / "checkpoints"
    deadline = time.monotonic() + 300
    while (saved := newest_complete(checkpoints, remove_torn=False)) is None:
        assert backend.status(job) == "running", Path(job.log_path).read_text()[-3000:]
        assert time.monotonic() < deadline, "no checkpoint written"
        time.sleep(0.02)
    os.killpg(json.loads((folder / "job.json").read_text())["pid"], signal.SIGKILL)
    while backend.status(job) == "running":
        time.sleep(0.05)
    assert not (Path(job.output_dir) / "metrics.json").exists(), "finished before the kill"
    saved = newest_complete(checkpoints, remove_torn=False)
    assert saved is not None
    # LoRA: a checkpoint holds the adapter (and its optimizer's state), not the model's weights
    files = {p.name: p.stat().st_size for p in saved.path.iterdir()}
    assert "adapter_model.safetensors" in files and "model.safetensors" not in files
    base = (Path(spec.args["model"]) / "model.safetensors").stat().st_size
    assert sum(files.values()) < base / 4
    # a later checkpoint cut short mid-save: no trainer state, half an optimizer
    torn = checkpoints / f"checkpoint-{saved.step + 1}"
    shutil.copytree(saved.path, torn)
    (torn / "trainer_state.json").unlink()
    (torn / "optimizer.pt").write_bytes((torn / "optimizer.pt").read_bytes()[:100])

    caplog.set_level(logging.INFO, logger="trainer")
    command = json.loads((folder / "job.json").read_text())["command"]
    resumed = main(command[command.index("trainer.train") + 1 :])  # the job's own arguments
    assert f"resuming from step {saved.step} ({saved.path})" in caplog.messages
    assert f"skipping incomplete checkpoint {torn} (cut short while saving)" in caplog.messages
    assert resumed["resumed_from_step"] == saved.step and 0 < saved.step < resumed["steps"]
    assert (
        not checkpoints.exists() and (Path(job.output_dir) / "adapter_model.safetensors").exists()
    )

    flags = trainer_arguments(spec.data_dir, str(tmp_path / "whole"), spec.args)
    uninterrupted = main(flags)
    assert uninterrupted["resumed_from_step"] == 0
    assert resumed["steps"] == uninterrupted["steps"] == 8
