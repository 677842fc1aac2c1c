"""The local training backend: reattach instead of resubmitting, cancel, failures name the log;
a killed job submitted again within the run resumes where it stopped."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import threading
import time
from pathlib import Path

import psutil
import pytest

from platforms.training import LocalTrainingBackend, TrainSpec
from tasks.records import TaskType
from tasks.train import train_until_done
from tests.trainer.adapters import assert_same_adapter
from tests.trainer.tiny import qa_record, tiny_model, write_dataset
from trainer.checkpoints import Checkpoint, newest_complete
from trainer.progress import parse_progress


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
    said: list[str] = []
    # the trainer's own error would come again: the job is not submitted again
    with pytest.raises(RuntimeError, match=r"broken is failed; see .*broken/train.log"):
        train_until_done(backend, broken, 2, lambda _: None, said.append)
    assert len(said) == 1 and "failed: the trainer raised" in said[0], said
    assert said[0].endswith("the same job would fail again; not submitted again")
    assert "Traceback" in (tmp_path / "jobs" / "broken" / "train.log").read_text()


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
    assert accel[accel.index("--main_process_port") + 1] == "0"  # free, not a shared 29500


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


# How a job runs its processes: (processes, accelerate config); per-process batch 3 on one
# process, 2 on two: 8 or 6 optimizer steps over the 24 records
LAUNCHES = {
    "one process": (1, None),
    "DDP (torchrun, two processes)": (2, None),
    "DeepSpeed ZeRO-2 (accelerate, two processes)": (2, "trainer/configs/deepspeed_zero2.yaml"),
}


@pytest.mark.slow
@pytest.mark.parametrize("launch", list(LAUNCHES))
def test_a_killed_job_is_submitted_again_and_resumes_from_its_newest_complete_checkpoint(
    tmp_path: Path, launch: str, request: pytest.FixtureRequest
) -> None:
    """A preempted node, here: the job's processes SIGKILLed mid-epoch once a checkpoint exists,
    and a later checkpoint left torn. The run's wait sees the job end without an error of its
    own and submits it again (`train.resubmits`); the rerun resumes from the newest complete
    checkpoint (adapter, optimizer, scheduler, RNG and data position: under DeepSpeed its own
    engine's state) and ends where an uninterrupted run ends: same steps, same adapter."""
    nproc, accelerate_config = LAUNCHES[launch]
    if accelerate_config and "deepspeed" in accelerate_config:
        request.getfixturevalue("deepspeed_cpu_ops")  # built before the job, never in it
    backend = LocalTrainingBackend(tmp_path / "jobs")
    args = {"max_length": 64, "doc_stride": 16, "batch_size": 3 if nproc == 1 else 2}
    spec = _spec(tmp_path, "preempted", **args, epochs=2, save_steps=4).model_copy(
        update={"nproc": nproc, "accelerate_config": accelerate_config}
    )
    folder = tmp_path / "jobs" / "preempted"
    checkpoints = folder / "outputs" / "checkpoints"
    killed: list[int] = []

    def preempt() -> None:
        deadline = time.monotonic() + 300
        while newest_complete(checkpoints, remove_torn=False) is None:
            if time.monotonic() > deadline:
                return
            time.sleep(0.02)
        killed.append(json.loads((folder / "job.json").read_text())["pid"])
        # every process of the job at once, as a lost node takes them: torchrun starts its
        # workers in sessions of their own, out of the job's process group
        job = psutil.Process(killed[0])
        for process in [job, *job.children(recursive=True)]:
            with contextlib.suppress(psutil.NoSuchProcess):
                process.kill()

    said: list[str] = []
    saved: list[Checkpoint] = []

    def tear_and_say(message: str) -> None:
        """Called once the job has ended, before it is submitted again: a later checkpoint cut
        short mid-save (no trainer state, a file half written) is left beside the newest one."""
        said.append(message)
        if not saved and (newest := newest_complete(checkpoints, remove_torn=False)):
            saved.append(newest)
            files = {p.name: p.stat().st_size for p in newest.path.iterdir()}
            assert "adapter_model.safetensors" in files and "model.safetensors" not in files
            if accelerate_config is None:  # LoRA: the adapter and its optimizer, not the weights
                base = (Path(spec.args["model"]) / "model.safetensors").stat().st_size
                assert sum(files.values()) < base / 4
            torn = checkpoints / f"checkpoint-{newest.step + 1}"
            shutil.copytree(newest.path, torn)
            (torn / "trainer_state.json").unlink()
            half = torn / "adapter_model.safetensors"
            half.write_bytes(half.read_bytes()[:100])

    killer = threading.Thread(target=preempt)
    killer.start()
    lines: list[str] = []
    job = train_until_done(backend, spec, 2, lines.append, tear_and_say)
    killer.join()

    assert killed, "finished before the kill"
    assert len(said) == 1 and saved, said
    assert said[0].startswith(
        "training job preempted failed: its processes ended without an error of their own"
    )
    assert "submitting it again (1 of 2, train.resubmits)" in said[0]
    step, torn = saved[0].step, checkpoints / f"checkpoint-{saved[0].step + 1}"
    assert any(f"resuming from step {step} ({saved[0].path})" in line for line in lines)
    assert any(f"skipping incomplete checkpoint {torn} (cut short" in line for line in lines)
    resumed = json.loads((Path(job.output_dir) / "metrics.json").read_text())
    assert resumed["resumed_from_step"] == step and 0 < step < resumed["steps"]
    assert resumed["world_size"] == nproc
    if accelerate_config is not None:  # ZeRO-2: every rank holds the whole model
        zero = [line for line in lines if "DeepSpeed ZeRO stage 2" in line]
        assert len(zero) == 2 * nproc, zero  # each rank, before the kill and after
        for line in zero:
            held, total = map(int, re.search(r"holds (\d+) of the model's (\d+)", line).groups())
            assert "partitioned at load: no" in line and held == total, line
    assert (
        not checkpoints.exists() and (Path(job.output_dir) / "adapter_model.safetensors").exists()
    )

    # the same job uninterrupted, in a process of its own as the preempted one: run in this test
    # worker's process instead (with what earlier tests left in it), the two once ended 5e-4 apart
    whole = spec.model_copy(update={"name": "uninterrupted"})
    done = backend.wait(backend.submit(whole), lambda _: None)
    assert done.status == "completed"
    output = Path(done.output_dir)
    uninterrupted = json.loads((output / "metrics.json").read_text())
    assert uninterrupted["resumed_from_step"] == 0
    assert resumed["steps"] == uninterrupted["steps"] == (16 if nproc == 1 else 12)
    assert_same_adapter(Path(job.output_dir), output)
