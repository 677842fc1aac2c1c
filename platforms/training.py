"""Training backends: where `trainer/` runs. The local one runs it as a subprocess on this machine.

A job's name is derived from the run and the data (the caller decides), and its state lives in
`{store}/jobs/{name}/`: `job.json`, `train.log`, `exit_code` and `outputs/`. Submitting a name that
already ran to completion reuses it; one still running (a retried flow) is reattached to, not
started twice.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict

from platforms.locks import process_alive, write_text_atomic
from trainer.args import command_line
from trainer.tracking import job_variables

if TYPE_CHECKING:
    from platforms.model_version import ModelRegistry, ModelVersion

JobStatus = Literal["running", "completed", "failed", "cancelled"]
_ROOT = Path(__file__).resolve().parents[1]


class TrainSpec(BaseModel):
    """What to train: trainer arguments, the split dataset and how many processes."""

    model_config = ConfigDict(frozen=True)
    name: str
    data_dir: str
    args: dict[str, Any]
    nproc: int = 1
    accelerate_config: str | None = None
    tracking_uri: str | None = None  # the flow's MLflow run, which the trainer logs into
    tracking_run_id: str | None = None


class TrainingJob(BaseModel):
    """A submitted job, as the flow hands it from train to evaluate."""

    model_config = ConfigDict(frozen=True)
    name: str
    backend: str
    status: JobStatus
    output_dir: str
    log_path: str
    reused: bool = False


Predictions = dict[str, list[str] | None]  # "base", "candidate", "champion" -> one per record


class ModelScores(BaseModel):
    """One model's scores, as the evaluation job computed them (`trainer.evaluate.score_models`):
    the task's metric values and each record's primary score (the gate's paired bootstrap)."""

    model_config = ConfigDict(frozen=True)
    metrics: dict[str, float]
    per_example: list[float]


class Evaluation(BaseModel):
    """What an evaluation backend hands the evaluate stage: each model's predictions of the test
    records and, where a job scored and screened them where they were made (Azure ML), its
    numbers (`scores`: "base", "candidate", "champion" -> `ModelScores`, None for a model with
    no predictions) and its screen of the candidate's outputs (`output_screen`:
    `screening.outputs.OutputScreen` as JSON), which the stage takes instead of scoring and
    screening again. In-process evaluation leaves both None: the stage scores and screens."""

    model_config = ConfigDict(frozen=True)
    predictions: Predictions
    scores: dict[str, ModelScores | None] | None = None
    output_screen: dict[str, Any] | None = None


class TrainingBackend(Protocol):
    """Where the trainer runs, and where trained models predict a test split (evaluate)."""

    name: str

    def submit(self, spec: TrainSpec) -> TrainingJob: ...
    def status(self, job: TrainingJob) -> JobStatus: ...
    def wait(self, job: TrainingJob, on_log: Callable[[str], None]) -> TrainingJob: ...
    def fetch_outputs(self, job: TrainingJob) -> Path:
        """The job's output folder here with what the stages read (model_info.json,
        metrics.json, the tokenizer): a remote job's weights stay where it wrote them."""
        ...

    def fetch_model(self, job: TrainingJob) -> Path:
        """The job's whole model folder here, weights included: for what loads it here."""
        ...

    def cancel(self, job: TrainingJob) -> None: ...
    def evaluate(
        self,
        data_dir: str,
        job: TrainingJob,
        champion: ModelVersion | None,
        registry: ModelRegistry,
        on_log: Callable[[str], None],
        max_test_records: int = 0,
        batch_size: int = 32,
        screen: dict[str, Any] | None = None,
    ) -> Evaluation:
        """The base model's, the job's model's and `champion`'s prediction of every test record
        of `data_dir` (champion None when there is none); a backend that evaluates in a job
        also scores them there and screens the candidate's under `screen` (the run's
        `ScreenConfig` as JSON)."""
        ...


def trainer_arguments(data_dir: str, output_dir: str, args: dict[str, Any]) -> list[str]:
    """`trainer.train` command-line flags for a spec's arguments: the data and output folders
    first, then `args` in their order (`trainer.args.command_line`)."""
    return command_line({"data_dir": data_dir, "output_dir": output_dir, **args})


class LocalTrainingBackend:
    """Runs `python -m trainer.train` (or torchrun / accelerate launch) in a new process group."""

    name = "local"

    def __init__(
        self,
        jobs_root: Path,
        storage_options: dict[str, Any] | None = None,
        model_of: Callable[[TrainingJob], Path] | None = None,
    ) -> None:
        """`model_of`: where a job's whole model folder is here (default `fetch_model`): the
        training backend's own, when this one only evaluates a job trained elsewhere."""
        self.jobs_root = jobs_root
        self.storage_options = storage_options or {}
        self.model_of = model_of or self.fetch_model

    def submit(self, spec: TrainSpec) -> TrainingJob:
        folder = self.jobs_root / spec.name
        if _recorded_pid(folder) is not None:
            job = self._job(folder, reused=True)
            status = self.status(job)
            if status in ("completed", "running"):
                return job.model_copy(update={"status": status})
        else:  # a submit killed before it recorded the job: its process may still be training
            _stop_group(_pid_file(folder), grace_seconds=4.0)
        folder.mkdir(parents=True, exist_ok=True)
        for stale in ("exit_code", "train.log", "cancelled", "pid"):
            (folder / stale).unlink(missing_ok=True)
        command = self.command(spec, folder / "outputs")
        log = (folder / "train.log").open("w")
        process = subprocess.Popen(
            # the job writes its own pid first: a submit killed before job.json leaves it findable
            ["bash", "-c", _WRAPPER, "train", *command],
            cwd=_ROOT,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env={
                **os.environ,
                "TUNEGATE_EXIT_FILE": str(folder / "exit_code"),
                "HF_HUB_OFFLINE": "1",
                "PYTHONUNBUFFERED": "1",
                **job_variables(spec.tracking_uri, spec.tracking_run_id),
            },
        )
        log.close()
        record = {
            "name": spec.name,
            "pid": process.pid,
            "command": command,
            "spec": spec.model_dump(),
        }
        write_text_atomic(folder / "job.json", json.dumps(record, indent=2))
        return self._job(folder, reused=False)

    @staticmethod
    def command(spec: TrainSpec, output_dir: Path) -> list[str]:
        """The launch command: one process, torchrun for several, or accelerate with a config."""
        args = trainer_arguments(spec.data_dir, str(output_dir), spec.args)
        if spec.accelerate_config:
            return [
                sys.executable,
                "-m",
                "accelerate.commands.launch",
                "--config_file",
                spec.accelerate_config,
                "--num_processes",
                str(spec.nproc),
                # a free port, not accelerate's fixed 29500 that two jobs at once would share
                "--main_process_port",
                "0",
                "-m",
                "trainer.train",
                *args,
            ]
        if spec.nproc > 1:
            return [
                sys.executable,
                "-m",
                "torch.distributed.run",
                "--standalone",  # rendezvous on a free local port (--master_port 0 hangs)
                "--nproc_per_node",
                str(spec.nproc),
                "-m",
                "trainer.train",
                *args,
            ]
        return [sys.executable, "-m", "trainer.train", *args]

    def status(self, job: TrainingJob) -> JobStatus:
        folder = Path(job.log_path).parent
        exit_file = folder / "exit_code"
        if exit_file.exists() and exit_file.read_text().strip():
            code = int(exit_file.read_text())
            return "completed" if code == 0 else "cancelled" if code < 0 or code > 128 else "failed"
        pid = _recorded_pid(folder) or _pid_file(folder)
        if pid is not None and _alive(pid):
            return "running"
        return "cancelled" if (folder / "cancelled").exists() else "failed"

    def wait(self, job: TrainingJob, on_log: Callable[[str], None]) -> TrainingJob:
        """Stream the log until the job ends; stop the job if this wait is interrupted."""
        position = 0
        try:
            while True:
                position = _stream(Path(job.log_path), position, on_log)
                status = self.status(job)
                if status != "running":
                    _stream(Path(job.log_path), position, on_log)
                    return job.model_copy(update={"status": status})
                time.sleep(1.0)
        except BaseException:  # cancelled flow, Ctrl-C, SIGTERM: never leave training behind
            self.cancel(job)
            raise

    def fetch_outputs(self, job: TrainingJob) -> Path:
        if job.status != "completed":
            raise RuntimeError(f"training job {job.name} is {job.status}; see {job.log_path}")
        return Path(job.output_dir)

    def fetch_model(self, job: TrainingJob) -> Path:
        return self.fetch_outputs(job)  # trained here: its weights are here

    def evaluate(
        self,
        data_dir: str,
        job: TrainingJob,
        champion: ModelVersion | None,
        registry: ModelRegistry,
        on_log: Callable[[str], None],
        max_test_records: int = 0,
        batch_size: int = 32,
        screen: dict[str, Any] | None = None,
    ) -> Evaluation:
        """Predict the test split in this process, with the candidate's and the champion's files
        here (downloaded from a remote training job or registry once); the evaluate stage scores
        and screens them in the same process (`screen` is its)."""
        # torch, transformers and datasets load here, not when the CLI or the config loads
        from trainer.data import read_split
        from trainer.evaluate import predict_models

        records = read_split(data_dir, "test", max_test_records, self.storage_options)
        champion_dir = registry.download(champion) if champion is not None else None
        on_log(f"predicting {len(records)} test records here")
        return Evaluation(
            predictions=predict_models(records, self.model_of(job), champion_dir, batch_size)
        )

    def cancel(self, job: TrainingJob, grace_seconds: float = 4.0) -> None:
        """Stop the job's whole process group: SIGTERM, then SIGKILL after `grace_seconds`."""
        folder = Path(job.log_path).parent
        pid = _recorded_pid(folder) or _pid_file(folder)
        if pid is not None and _alive(pid):
            (folder / "cancelled").touch()
            _stop_group(pid, grace_seconds)

    def _job(self, folder: Path, *, reused: bool) -> TrainingJob:
        return TrainingJob(
            name=folder.name,
            backend=self.name,
            status="running",
            output_dir=str(folder / "outputs"),
            log_path=str(folder / "train.log"),
            reused=reused,
        )


_WRAPPER = 'echo $$ > "$TUNEGATE_EXIT_FILE.pid" && mv "$TUNEGATE_EXIT_FILE.pid" "${TUNEGATE_EXIT_FILE%/*}/pid"; "$@"; echo $? > "$TUNEGATE_EXIT_FILE"'


def _recorded_pid(folder: Path) -> int | None:
    """The job's pid from `job.json`, or None when there is none (never submitted, or a submit
    killed before it wrote it; written whole since, older stores may hold an empty one)."""
    try:
        return int(json.loads((folder / "job.json").read_text())["pid"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _pid_file(folder: Path) -> int | None:
    """The pid the job wrote itself (its process group's id), if it did."""
    try:
        return int((folder / "pid").read_text())
    except (OSError, ValueError):
        return None


def _stop_group(pid: int | None, grace_seconds: float) -> None:
    """SIGTERM a job's process group, then SIGKILL after `grace_seconds`."""
    if pid is None or not _alive(pid):
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace_seconds
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    if _alive(pid):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signal.SIGKILL)


def _alive(pid: int) -> bool:
    if not process_alive(pid):
        return False
    try:  # a zombie child of this process has exited
        finished, _ = os.waitpid(pid, os.WNOHANG)
        return finished == 0
    except ChildProcessError:
        return True


def _stream(path: Path, position: int, on_log: Callable[[str], None]) -> int:
    if not path.exists():
        return position
    with path.open("r", errors="replace") as f:
        f.seek(position)
        for line in f:
            on_log(line.rstrip("\n"))
        return f.tell()
