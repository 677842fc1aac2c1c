"""train: run `trainer/` on the split dataset through a training backend and wait for it.

The job name hashes the split dataset and the training config, so a retried flow reattaches to
its job and a later run over the same data and config reuses the finished model.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import sys
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from prefect import get_run_logger, task
from prefect.cache_policies import NONE
from pydantic import BaseModel, ConfigDict, Field, create_model, field_validator, model_validator

from platforms.backends import Backends, PlatformKind, check_base_model
from platforms.hashing import combine_hashes, sha256_text, stable_json
from platforms.job_failures import diagnose
from platforms.manifest import DatasetRef
from platforms.training import TrainingBackend, TrainingJob, TrainSpec
from trainer.args import ARGUMENTS, Argument, TrainArgs, with_task_defaults
from trainer.progress import CONSOLE, Progress, clock, describe, own_message, parse_progress
from trainer.taskspec import task_spec

log = logging.getLogger(__name__)
# A training job's lines that are neither progress nor the trainer's own (a library's warnings,
# a traceback): the run's log file keeps them (flows/run_log.py), the terminal does not.
job_output = logging.getLogger("job_output")
job_output.setLevel(logging.INFO)
PROGRESS_ARTIFACT = "training-progress"
# The trainer arguments a `train:` config sets as fields of its own, unset by default (the
# trainer then takes the task's choice); any other goes under `args`. Type, description and
# bounds are the trainer's declaration of the argument (trainer/args.py).
OWN_ARGUMENTS = (
    "model",
    "epochs",
    "learning_rate",
    "batch_size",
    "max_length",
    "lora",
    "lora_r",
    "save_steps",
    "save_total_limit",
)
# Not the config's to set: the task comes from `task`, the folders from the training backend.
_SET_BY_PIPELINE = ("task", "data_dir", "output_dir", "checkpoint_dir")
_TRAIN_ARG_NAMES = set(ARGUMENTS) - set(_SET_BY_PIPELINE)
_TUNED = " Unset: the task's tuned value (docs/config.md), else the trainer's default."


def _own_field(argument: Argument) -> tuple[Any, Any]:
    """The config field of a trainer argument: its type or None (unset), its help, its bounds."""
    unset = "" if argument.name == "model" else _TUNED  # the model's help says what unset means
    field = Field(None, description=argument.help + unset, **argument.bounds)
    return argument.type | None, field


class _Launch(BaseModel):
    """Where and how the trainer runs: the part of `train:` that is no trainer argument."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    backend: PlatformKind = Field(
        PlatformKind.local,
        description="local: a subprocess on this machine; azureml: a command job on the "
        "azureml section's compute cluster.",
    )
    nproc: int = Field(1, ge=1, le=64, description="Processes on this machine (>1: torchrun DDP).")
    accelerate_config: str | None = Field(
        None, description="An accelerate config from trainer/configs/ (ddp, fsdp, deepspeed_zero*)."
    )
    resubmits: int = Field(
        2,
        ge=0,
        le=20,
        description="Within one run, how many times a training job that failed for a cause "
        "outside it (a preempted or lost node, killed processes, ranks that lost each other) is "
        "submitted again; it resumes from its newest complete checkpoint. A job whose trainer "
        "raised an error of its own is not (it would fail the same way). 0: never.",
    )


_OwnArguments: type[_Launch] = create_model(
    "_OwnArguments",
    __base__=_Launch,
    __module__=__name__,
    **{name: _own_field(ARGUMENTS[name]) for name in OWN_ARGUMENTS},
)


class TrainConfig(_OwnArguments):
    """How the model is fine-tuned."""

    args: dict[str, Any] = Field(
        default_factory=dict,
        description="Any other trainer argument (see `python -m trainer.train --help`).",
    )

    @field_validator("args")
    @classmethod
    def _known_args(cls, args: dict[str, Any]) -> dict[str, Any]:
        unknown = sorted(set(args) - _TRAIN_ARG_NAMES)
        if unknown:
            raise ValueError(f"unknown trainer argument(s) {unknown}")
        return args

    @model_validator(mode="after")
    def _model_asset_needs_azureml(self) -> TrainConfig:
        """An Azure ML model asset is mounted into Azure ML jobs; nothing here can load it."""
        check_base_model(self.backend, self.model)
        return self

    def trainer_args(self, task_type: str) -> dict[str, Any]:
        """The trainer's flags: what this config sets (the task's packaged model when it names
        none); the trainer fills in the rest from the task's tuned defaults
        (TaskSpec.train_defaults) and its own."""
        spec = task_spec(task_type)
        chosen = {name: getattr(self, name) for name in OWN_ARGUMENTS}
        chosen["model"] = chosen["model"] or spec.default_model
        return {
            "task": spec.trainer_task,
            **{k: v for k, v in chosen.items() if v is not None},
            **self.args,
        }

    def resolved_args(self, task_type: str) -> TrainArgs:
        """Every argument the trainer will run with, defaults included."""
        return with_task_defaults({**self.trainer_args(task_type), "data_dir": "-"})


def job_name(split: DatasetRef, config: TrainConfig) -> str:
    """Same split and same resolved training (tuned defaults included): same job."""
    return job_name_for(split.content_hash, split.task, config)


def job_name_for(data: str, task: str, config: TrainConfig) -> str:
    """The job of training `task` on `data` (a split's content hash, or the reference a job
    reads, e.g. `azureml:tunegate-split@latest`) with `config`."""
    resolved = dataclasses.asdict(config.resolved_args(task))
    del resolved["data_dir"], resolved["output_dir"], resolved["checkpoint_dir"]
    # how often a failed job is submitted again is no part of what it trains
    launch = config.model_dump(mode="json", exclude={"resubmits"})
    config_hash = sha256_text(stable_json([launch, resolved]))
    return "train-" + combine_hashes([data, config_hash])[:20]


def run_training(
    backend: TrainingBackend,
    split: DatasetRef,
    config: TrainConfig,
    on_log: Any = log.info,
    tracking: tuple[str, str] | None = None,
    say: Callable[[str], None] = log.warning,
) -> TrainingJob:
    """Submit (or reattach to, or reuse) the job for this data and config; wait for it. With
    `tracking` (tracking URI, run id) the trainer logs its curves into that MLflow run.

    A job that fails for a cause outside it (`platforms.job_failures`) is submitted again, up to
    `config.resubmits` times, and resumes from its newest complete checkpoint; `say` tells the
    run why and that it waits."""
    uri, run_id = tracking or (None, None)
    spec = TrainSpec(
        name=job_name(split, config),
        data_dir=split.uri,
        args=config.trainer_args(split.task),
        nproc=config.nproc,
        accelerate_config=config.accelerate_config,
        tracking_uri=uri,
        tracking_run_id=run_id,
    )
    return train_until_done(backend, spec, config.resubmits, on_log, say)


def train_until_done(
    backend: TrainingBackend,
    spec: TrainSpec,
    resubmits: int,
    on_log: Callable[[str], None],
    say: Callable[[str], None],
) -> TrainingJob:
    """Submit `spec` (or reattach to, or reuse its job) and wait; a job that failed for a cause
    outside it is submitted again, up to `resubmits` times. Raises when it did not complete."""
    tail: deque[str] = deque(maxlen=50)

    def follow(line: str) -> None:
        tail.append(line)
        on_log(line)

    job = backend.submit(spec)
    for resubmitted in range(resubmits + 1):
        if job.status == "running":
            job = backend.wait(job, follow)
        if job.status != "failed" or resubmitted == resubmits:
            break
        failure = diagnose(tail)
        if not failure.transient:
            say(f"training job {job.name} failed: {failure.reason}; not submitted again")
            break
        tail.clear()
        say(
            f"training job {job.name} failed: {failure.reason}; submitting it again "
            f"({resubmitted + 1} of {resubmits}, train.resubmits): it resumes from its "
            "newest complete checkpoint, and this run waits for it"
        )
        job = backend.submit(spec)
    backend.fetch_outputs(job)  # raises with the log's path when training failed
    return job


class TrainerOutput:
    """What the train stage makes of each line of the training job's log (trainer/progress.py):
    progress lines move a progress bar on the terminal (when stdout and stderr are one; else a
    concise `train: step 40/196 (20%), ...` line every `line_every` seconds, at the first and at
    the last step) and a Prefect progress artifact (`artifact`); the trainer's own lines are
    logged as `trainer | ...`; any other line goes to the `job_output` logger, which the run's
    log file keeps (the last ones are kept in `tail` too: a failed job's error)."""

    def __init__(
        self,
        logger: logging.Logger | logging.LoggerAdapter,
        bar: bool | None = None,
        artifact: bool = False,
        line_every: float = 30.0,
    ) -> None:
        self.logger = logger
        self.bar = sys.stdout.isatty() and sys.stderr.isatty() if bar is None else bar
        self.artifact = artifact
        self.line_every = line_every
        self.last: Progress | None = None
        self.tail: deque[str] = deque(maxlen=20)
        self._shown = -math.inf  # when the last concise line was logged
        self._said: tuple[Any, ...] = ()  # its step and losses: the last step's said once
        self._artifact_id: Any = None
        self._live: Any = None  # rich's Progress, once the first progress line came
        self._bar_task: Any = None

    def __call__(self, line: str) -> None:
        progress = parse_progress(line)
        if progress is not None:
            self._progress(progress)
        elif (message := own_message(line)) is not None:
            if self._live is not None:  # above the bar; the run's logs get it too
                self._live.console.print(f"trainer | {message}", markup=False, highlight=False)
                self.logger.info("trainer | %s", message, extra={CONSOLE: False})
            else:
                self.logger.info("trainer | %s", message)
        elif line.strip():
            self.tail.append(line)
            job_output.info("%s", line)

    def close(self) -> None:
        """Stop the bar (its last state stays on the terminal)."""
        if self._live is not None:
            self._live.stop()
            self._live = None

    def _progress(self, progress: Progress) -> None:
        self.last = progress
        if self.artifact:
            self._update_artifact(progress)
        if self.bar:
            self._draw(progress)
        now = time.monotonic()
        last_step = progress.step >= progress.total
        said = (progress.step, progress.loss, progress.eval_loss)
        if now - self._shown >= self.line_every or (last_step and said != self._said):
            self._shown, self._said = now, said
            extra = {CONSOLE: False} if self.bar else None  # the bar shows it
            self.logger.info("train: %s", describe(progress), extra=extra)

    def _draw(self, progress: Progress) -> None:
        fields = {
            "epoch": f"epoch {progress.epoch:.2f}",
            "loss": f"loss {progress.loss:.4g}" if progress.loss is not None else "",
            "eta": f"ETA {clock(progress.eta)}" if progress.eta is not None else "",
        }
        if self._live is None:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, TextColumn
            from rich.progress import Progress as Bar

            self._live = Bar(
                TextColumn("train"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[epoch]}  {task.fields[loss]}  {task.fields[eta]}"),
                console=Console(stderr=True),
                transient=False,
            )
            self._live.start()
            self._bar_task = self._live.add_task("train", total=progress.total, **fields)
        self._live.update(self._bar_task, completed=progress.step, total=progress.total, **fields)

    def _update_artifact(self, progress: Progress) -> None:
        """Create the artifact, then update it; an API that fails it never stops training."""
        from prefect.artifacts import create_progress_artifact, update_progress_artifact

        try:
            if self._artifact_id is None:
                self._artifact_id = create_progress_artifact(
                    progress=progress.percent,
                    key=PROGRESS_ARTIFACT,
                    description=describe(progress),
                )
            else:
                update_progress_artifact(
                    self._artifact_id, progress=progress.percent, description=describe(progress)
                )
        except Exception as exc:  # noqa: BLE001 (the progress display only)
            self.artifact = False
            self.logger.warning("train: no progress artifact (%s: %s)", type(exc).__name__, exc)


@task(name="train", cache_policy=NONE)
def train_task(
    backends: Backends, split: DatasetRef, config: TrainConfig, tracking_run_id: str | None = None
) -> TrainingJob:
    """Fine-tune the base model on the split dataset; its progress shows as a bar (or concise
    lines) and the `training-progress` artifact, the trainer's own lines stream into this run,
    and the loss and evaluation curves go into the MLflow run `tracking_run_id` (when given).

    The split's files are checked against its manifest first: a model never trains on data that
    changed after it was approved and split."""
    logger = get_run_logger()
    backends.store.verify(backends.store.read_manifest(split.uri))
    tracking = (backends.tracking_uri, tracking_run_id) if tracking_run_id else None
    output = TrainerOutput(logger, artifact=True)
    try:
        return run_training(backends.training, split, config, output, tracking, logger.warning)
    except RuntimeError:  # the job failed: its error (its last line) here, the rest in its log
        if output.tail:
            logger.error("trainer | %s", output.tail[-1])
        raise
    finally:
        output.close()
