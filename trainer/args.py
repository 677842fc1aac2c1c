"""Training arguments: dataclass defaults < `--config` YAML < command-line flags.

Unknown keys in the YAML and unknown flags are errors that name the key, so a typo never trains
a model with a default the user did not mean.
"""

from __future__ import annotations

import argparse
import dataclasses
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from trainer.taskspec import PACKAGED_ENCODER, PACKAGED_MODELS, TRAINER_TASKS, task_spec

PACKAGED_MODEL = PACKAGED_ENCODER  # the pretrained MiniLM; the other packaged models build on it
# What `python -m trainer.evaluate` writes into its output folder (the evaluation job's output).
PREDICTIONS = "predictions.json"

# LoRA target modules per architecture (model_type in config.json).
LORA_TARGETS: dict[str, list[str]] = {
    "bert": ["query", "value"],
    "roberta": ["query", "value"],
    "distilbert": ["q_lin", "v_lin"],
    "t5": ["q", "v"],
    "bart": ["q_proj", "v_proj"],
    "gpt2": ["c_attn"],
    "llama": ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"],
    "mistral": ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"],
    "phi3": ["qkv_proj", "o_proj", "gate_up_proj", "down_proj"],
}

# accelerate's name of each precision (`accelerate launch --mixed_precision`,
# ACCELERATE_MIXED_PRECISION); `auto` is resolved by the trainer on the machine it runs on.
MIXED_PRECISION: dict[str, str] = {"fp32": "no", "bf16": "bf16", "fp16": "fp16"}

# What each argument does: `python -m trainer.train --help` shows it beside the flag.
HELP: dict[str, str] = {
    "task": "extractive-qa, summarization or causal-lm (chat).",
    "model": "Base model: a Hugging Face id, a local path, or one of the packaged models "
    f"({', '.join(PACKAGED_MODELS)}). Unset: the task's packaged model.",
    "data_dir": "A split dataset folder: train/, validation/, test/ Parquet tables.",
    "output_dir": "Where the trained model, its tokenizer and metrics.json are written.",
    "max_length": "Tokens per window (QA), per document (summarization) or per conversation "
    "with its reply (chat); prediction and serving use the same.",
    "doc_stride": "QA: tokens shared by consecutive windows of a long context.",
    "max_target_length": "Tokens of the target (the summary, the assistant's reply), and the "
    "most tokens generated at prediction.",
    "epochs": "Training epochs.",
    "max_steps": "Stop after this many optimizer steps (-1: run the epochs).",
    "learning_rate": "Peak learning rate (linear warmup, then decay).",
    "weight_decay": "AdamW weight decay.",
    "warmup_ratio": "Share of the steps spent warming the learning rate up.",
    "batch_size": "Training examples per device and step.",
    "eval_batch_size": "Evaluation examples per device and step.",
    "gradient_accumulation_steps": "Steps whose gradients add up before each optimizer step.",
    "gradient_checkpointing": "Recompute activations in the backward pass to save memory.",
    "group_by_length": "Batch examples of similar length together (less padding).",
    "lora": "Train a LoRA adapter; --no-lora fine-tunes every weight.",
    "lora_r": "LoRA rank.",
    "lora_alpha": "LoRA scaling (alpha / r multiplies the update).",
    "lora_dropout": "Dropout on the LoRA layers.",
    "lora_target_modules": "Modules that get LoRA layers (default: per architecture).",
    "merge_adapter": "Also save the adapter merged into the base weights (merged/), which "
    "prediction and serving then load without the base model; nothing to merge without lora.",
    "precision": "auto (bf16 on GPUs that have it, else fp16 on GPU, fp32 on CPU), bf16, fp16 "
    "or fp32.",
    "seed": "Seed of the new head's initialisation and of data order.",
    "max_train_samples": "Train on at most this many records (0: all).",
    "logging_steps": "Log the loss every this many steps.",
    "num_workers": "Data loader worker processes.",
}


@dataclass
class TrainArgs:
    """Everything one training run needs. Paths are local directories or mounted job inputs."""

    task: str = "extractive-qa"
    model: str = PACKAGED_MODEL  # HF id, local path, or the model that ships in a package
    data_dir: str = ""  # a split dataset: train/, validation/, test/ Parquet tables
    output_dir: str = "outputs"
    max_length: int = 256
    doc_stride: int = 64
    max_target_length: int = 128
    epochs: float = 3.0
    max_steps: int = -1
    learning_rate: float = 3e-4
    weight_decay: float = 0.0
    warmup_ratio: float = 0.06
    batch_size: int = 16
    eval_batch_size: int = 32
    gradient_accumulation_steps: int = 1
    gradient_checkpointing: bool = False
    group_by_length: bool = True
    lora: bool = True
    lora_r: int = 8
    lora_alpha: int = 16
    lora_dropout: float = 0.05
    lora_target_modules: list[str] = field(default_factory=list)  # empty: per architecture
    merge_adapter: bool = False
    precision: str = "auto"  # auto: bf16 on GPUs that have it, else fp16 on GPU, fp32 on CPU
    seed: int = 42
    max_train_samples: int = 0  # 0: all
    logging_steps: int = 10
    num_workers: int = 0

    def validate(self) -> TrainArgs:
        if self.task not in TRAINER_TASKS:
            raise ValueError(f"task must be one of {TRAINER_TASKS}, got {self.task!r}")
        if self.precision not in ("auto", "bf16", "fp16", "fp32"):
            raise ValueError(f"precision must be auto, bf16, fp16 or fp32, got {self.precision!r}")
        if self.doc_stride >= self.max_length:
            raise ValueError("doc_stride must be smaller than max_length")
        if not self.data_dir:
            raise ValueError("data_dir is required (a split dataset directory)")
        if task_spec(self.task).kind == "causal" and self.max_target_length >= self.max_length:
            raise ValueError(
                "max_target_length must be smaller than max_length: a conversation's reply and "
                "at least part of its prompt share max_length tokens"
            )
        return self


def parse_args(argv: list[str] | None = None) -> TrainArgs:
    """Defaults, the task's tuned defaults (its TaskSpec.train_defaults), then the YAML given by
    --config, then flags; unknown keys are errors."""
    parser = argparse.ArgumentParser(
        prog="python -m trainer.train",
        description="Fine-tune a model on a split dataset. An argument not given takes the "
        "task's tuned value where its TaskSpec has one (trainer/taskspec.py), else the default "
        "shown.",
    )
    parser.add_argument("--config", type=Path, help="YAML file of TrainArgs fields")
    hints = typing.get_type_hints(TrainArgs)
    for f in dataclasses.fields(TrainArgs):
        kind = _kind(hints[f.name])
        flag = f"--{f.name.replace('_', '-')}"
        default = f.default_factory() if f.default is dataclasses.MISSING else f.default
        shown = f"{HELP[f.name]} (default: {default!r})"
        described = {"dest": f.name, "default": argparse.SUPPRESS, "help": shown}
        if kind is bool:
            parser.add_argument(flag, action=argparse.BooleanOptionalAction, **described)
        elif kind is list:
            parser.add_argument(flag, nargs="*", **described)
        else:
            parser.add_argument(flag, type=kind, **described)
    namespace = parser.parse_args(argv)
    values: dict[str, Any] = {}
    if namespace.config is not None:
        values.update(load_yaml(namespace.config))
    values.update({k: v for k, v in vars(namespace).items() if k != "config"})
    return with_task_defaults(values)


def with_task_defaults(values: dict[str, Any]) -> TrainArgs:
    """TrainArgs from `values`: the base model is the task's packaged model unless `values` names
    one; each field `values` does not set comes from the task's tuned defaults when the base
    model is the one they were tuned for, else from the dataclass."""
    task = values.get("task", TrainArgs.task)
    if task not in TRAINER_TASKS:
        return TrainArgs(**values).validate()  # validate() names the unknown task
    spec = task_spec(task)
    model = values.get("model") or spec.default_model
    tuned = dict(spec.train_defaults) if model == spec.default_model else {}
    return TrainArgs(**{**tuned, **values, "model": model}).validate()


def load_yaml(path: Path) -> dict[str, Any]:
    data = yaml.safe_load(path.read_text()) or {}
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a mapping of TrainArgs fields")
    known = {f.name for f in dataclasses.fields(TrainArgs)}
    unknown = sorted(set(data) - known)
    if unknown:
        raise ValueError(f"{path}: unknown training argument(s) {unknown}")
    return data


def _kind(hint: Any) -> type:
    """The argparse type of a field: bool, list, or the scalar type itself."""
    if typing.get_origin(hint) is list:
        return list
    return hint if isinstance(hint, type) else str
