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
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from platforms.backends import Backends, PlatformKind, check_base_model
from platforms.store import DatasetRef, combine_hashes, sha256_text, stable_json
from platforms.training import TrainingBackend, TrainingJob, TrainSpec
from trainer.args import PACKAGED_MODEL, TrainArgs, with_task_defaults
from trainer.taskspec import PACKAGED_DECODER, PACKAGED_SEQ2SEQ, task_spec

log = logging.getLogger(__name__)
_TRAIN_ARG_NAMES = set(TrainArgs.__dataclass_fields__) - {"task", "data_dir", "output_dir"}
_TUNED = " Unset: the task's tuned value (README, Config reference), else the trainer's default."


class TrainConfig(BaseModel):
    """How the model is fine-tuned."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    backend: PlatformKind = Field(
        PlatformKind.local,
        description="local: a subprocess on this machine; azureml: a command job on the "
        "azureml section's compute cluster.",
    )
    model: str | None = Field(
        None,
        description="Base model: a Hugging Face id or local path (where a hub is reachable), or "
        f"a model built from the pretrained MiniLM shipped in a pip package ({PACKAGED_MODEL}; "
        f"{PACKAGED_SEQ2SEQ}, an encoder-decoder; {PACKAGED_DECODER}, a causal decoder). "
        "Unset: the task's packaged model, with its tuned settings.",
    )
    nproc: int = Field(1, ge=1, le=64, description="Processes on this machine (>1: torchrun DDP).")
    accelerate_config: str | None = Field(
        None, description="An accelerate config from trainer/configs/ (ddp, fsdp, deepspeed_zero*)."
    )
    epochs: float | None = Field(None, gt=0, description="Training epochs." + _TUNED)
    learning_rate: float | None = Field(
        None, gt=0, lt=1, description="Peak learning rate." + _TUNED
    )
    batch_size: int | None = Field(
        None, ge=1, le=4096, description="Per-device training batch size." + _TUNED
    )
    max_length: int | None = Field(
        None, ge=16, le=32768, description="Tokens per window / sequence." + _TUNED
    )
    lora: bool | None = Field(
        None, description="Train a LoRA adapter (False: full fine-tuning)." + _TUNED
    )
    lora_r: int | None = Field(None, ge=1, le=1024, description="LoRA rank." + _TUNED)
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
        """The trainer's flags: what this config sets; the trainer fills in the rest from the
        task's tuned defaults (TaskSpec.train_defaults) and its own."""
        chosen = {
            "epochs": self.epochs,
            "learning_rate": self.learning_rate,
            "batch_size": self.batch_size,
            "max_length": self.max_length,
            "lora": self.lora,
            "lora_r": self.lora_r,
        }
        return {
            "task": task_spec(task_type).trainer_task,
            "model": self.model or task_spec(task_type).default_model,
            **{k: v for k, v in chosen.items() if v is not None},
            **self.args,
        }

    def resolved_args(self, task_type: str) -> TrainArgs:
        """Every argument the trainer will run with, defaults included."""
        return with_task_defaults({**self.trainer_args(task_type), "data_dir": "-"})


def job_name(split: DatasetRef, config: TrainConfig) -> str:
    """Same split and same resolved training (tuned defaults included): same job."""
    resolved = dataclasses.asdict(config.resolved_args(split.task))
    del resolved["data_dir"], resolved["output_dir"]
    config_hash = sha256_text(stable_json([config.model_dump(mode="json"), resolved]))
    return "train-" + combine_hashes([split.content_hash, config_hash])[:20]


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
