"""train: run `trainer/` on the split dataset through a training backend and wait for it.

The job name hashes the split dataset and the training config, so a retried flow reattaches to
its job and a later run over the same data and config reuses the finished model.
"""

from __future__ import annotations

import dataclasses
import logging
from typing import Any

from prefect import get_run_logger, task
from prefect.cache_policies import NONE
from pydantic import BaseModel, ConfigDict, Field, create_model, field_validator, model_validator

from platforms.backends import Backends, PlatformKind, check_base_model
from platforms.store import DatasetRef, combine_hashes, sha256_text, stable_json
from platforms.training import TrainingBackend, TrainingJob, TrainSpec
from trainer.args import ARGUMENTS, Argument, TrainArgs, with_task_defaults
from trainer.taskspec import task_spec

log = logging.getLogger(__name__)
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
    config_hash = sha256_text(stable_json([config.model_dump(mode="json"), resolved]))
    return "train-" + combine_hashes([data, config_hash])[:20]


def run_training(
    backend: TrainingBackend, split: DatasetRef, config: TrainConfig, on_log: Any = log.info
) -> TrainingJob:
    """Submit (or reattach to, or reuse) the job for this data and config; wait for it."""
    spec = TrainSpec(
        name=job_name(split, config),
        data_dir=split.uri,
        args=config.trainer_args(split.task),
        nproc=config.nproc,
        accelerate_config=config.accelerate_config,
    )
    job = backend.submit(spec)
    if job.status == "running":
        job = backend.wait(job, on_log)
    backend.fetch_outputs(job)  # raises with the log's path when training failed
    return job


@task(name="train", cache_policy=NONE)
def train_task(backends: Backends, split: DatasetRef, config: TrainConfig) -> TrainingJob:
    """Fine-tune the base model on the split dataset; training logs stream into this run.

    The split's files are checked against its manifest first: a model never trains on data that
    changed after it was approved and split."""
    logger = get_run_logger()
    backends.store.verify(backends.store.read_manifest(split.uri))
    return run_training(
        backends.training, split, config, lambda line: logger.info("trainer | %s", line)
    )
