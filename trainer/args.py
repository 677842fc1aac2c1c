"""Training arguments: dataclass defaults < `--config` YAML < command-line flags.

Each argument is declared once, as a `TrainArgs` field made with `arg()` (default, help, bounds):
the command-line parser, the flags a backend passes (`command_line`) and the pipeline's `train:`
config (tasks/train.py) are all built from `ARGUMENTS`, so a new argument is one edit.

Unknown keys in the YAML and unknown flags are errors that name the key, so a typo never trains
a model with a default the user did not mean.
"""

from __future__ import annotations

import argparse
import dataclasses
import operator
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from trainer.taskspec import (
    PACKAGED_DECODER,
    PACKAGED_ENCODER,
    PACKAGED_SEQ2SEQ,
    TRAINER_TASKS,
    task_spec,
)

PACKAGED_MODEL = PACKAGED_ENCODER  # the pretrained MiniLM; the other packaged models build on it
# What the evaluation job writes into its output folder, all that comes back of it:
# `python -m trainer.evaluate`'s predictions and each model's scores, and
# `python -m screening.outputs`'s screen of the candidate's outputs.
PREDICTIONS = "predictions.json"
SCORES = "scores.json"
OUTPUT_SCREEN = "output-screen.json"
EVALUATION_FILES = (PREDICTIONS, SCORES, OUTPUT_SCREEN)

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
PRECISIONS = ("auto", *MIXED_PRECISION)


def arg(
    default: Any,
    help: str,
    *,
    gt: float | None = None,
    ge: float | None = None,
    lt: float | None = None,
    le: float | None = None,
) -> Any:
    """One trainer argument's whole declaration, as a `TrainArgs` field: its default, what it
    does (shown beside its flag by `python -m trainer.train --help`, and the description of the
    pipeline config's field for it) and the bounds a value must keep (pydantic's names: the
    pipeline config passes them on; `TrainArgs.validate` checks them)."""
    bounds = {k: v for k, v in {"gt": gt, "ge": ge, "lt": lt, "le": le}.items() if v is not None}
    metadata = {"help": help, "bounds": bounds}
    if isinstance(default, list):
        return field(default_factory=lambda: list(default), metadata=metadata)
    return field(default=default, metadata=metadata)


@dataclass
class TrainArgs:
    """Everything one training run needs. Paths are local directories or mounted job inputs.

    Each field is one argument, declared once with `arg()`: the command line (`parse_args`,
    `command_line`) and the pipeline's `train:` config (tasks/train.py) are built from these."""

    task: str = arg("extractive-qa", "extractive-qa, summarization or causal-lm (chat).")
    model: str = arg(
        PACKAGED_MODEL,
        "Base model: a Hugging Face id or local path (where a hub is reachable), or a model "
        f"built from the pretrained MiniLM shipped in a pip package ({PACKAGED_ENCODER}; "
        f"{PACKAGED_SEQ2SEQ}, an encoder-decoder; {PACKAGED_DECODER}, a causal decoder). "
        "Unset: the task's packaged model, with its tuned settings.",
    )
    data_dir: str = arg("", "A split dataset folder: train/, validation/, test/ Parquet tables.")
    output_dir: str = arg(
        "outputs", "Where the trained model, its tokenizer and metrics.json are written."
    )
    max_length: int = arg(
        256,
        "Tokens per window (QA, text-generation), per document (summarization) or per "
        "conversation with its reply (chat); prediction and serving use the same.",
        ge=16,
        le=32768,
    )
    doc_stride: int = arg(64, "QA: tokens shared by consecutive windows of a long context.")
    max_target_length: int = arg(
        128,
        "Tokens of the target (the summary, the assistant's reply), and the most tokens "
        "generated at prediction.",
    )
    earlier_replies: float = arg(
        1.0,
        "Chat: the share of a conversation's earlier assistant replies in the loss, besides its "
        "last (0: the last reply only; 1: every reply), picked by a hash of the record's id.",
        ge=0,
        le=1,
    )
    epochs: float = arg(3.0, "Training epochs.", gt=0)
    max_steps: int = arg(-1, "Stop after this many optimizer steps (-1: run the epochs).")
    learning_rate: float = arg(3e-4, "Peak learning rate (linear warmup, then decay).", gt=0, lt=1)
    weight_decay: float = arg(0.0, "AdamW weight decay.")
    warmup_ratio: float = arg(0.06, "Share of the steps spent warming the learning rate up.")
    batch_size: int = arg(16, "Training examples per device and step.", ge=1, le=4096)
    eval_batch_size: int = arg(32, "Evaluation examples per device and step.")
    gradient_accumulation_steps: int = arg(
        1, "Steps whose gradients add up before each optimizer step."
    )
    gradient_checkpointing: bool = arg(
        False, "Recompute activations in the backward pass to save memory."
    )
    group_by_length: bool = arg(True, "Batch examples of similar length together (less padding).")
    lora: bool = arg(True, "Train a LoRA adapter (false, --no-lora: fine-tune every weight).")
    lora_r: int = arg(8, "LoRA rank.", ge=1, le=1024)
    lora_alpha: int = arg(16, "LoRA scaling (alpha / r multiplies the update).")
    lora_dropout: float = arg(0.05, "Dropout on the LoRA layers.")
    lora_target_modules: list[str] = arg(  # noqa: RUF009 (arg() gives a default_factory)
        [], "Modules that get LoRA layers (empty: per architecture, LORA_TARGETS)."
    )
    merge_adapter: bool = arg(
        False,
        "Also save the adapter merged into the base weights (merged/), which prediction and "
        "serving then load without the base model; nothing to merge without lora.",
    )
    precision: str = arg(
        "auto",
        "auto (bf16 on GPUs that have it natively, compute capability 8.0+; else fp16 with loss "
        "scaling on GPU; fp32 on CPU), bf16, fp16 or fp32.",
    )
    seed: int = arg(42, "Seed of the new head's initialisation and of data order.")
    max_train_samples: int = arg(0, "Train on at most this many records (0: all).")
    logging_steps: int = arg(10, "Log the loss every this many steps.")
    save_steps: int = arg(
        200,
        "Save a checkpoint every this many optimizer steps (0: none); a restarted job (a "
        "preempted Azure ML job's rerun, a local job run again) resumes from the newest complete "
        "one. With lora only the adapter is saved, with the optimizer's state.",
        ge=0,
    )
    save_total_limit: int = arg(2, "Checkpoints kept (the newest); older ones are removed.", ge=1)
    checkpoint_dir: str = arg(
        "",
        "Where checkpoints are written and resumed from (empty: checkpoints/ in the output "
        "folder); removed once the trained model is saved.",
    )
    num_workers: int = arg(0, "Data loader worker processes.")

    def validate(self) -> TrainArgs:
        if self.task not in TRAINER_TASKS:
            raise ValueError(f"task must be one of {TRAINER_TASKS}, got {self.task!r}")
        for argument in ARGUMENTS.values():
            argument.check(getattr(self, argument.name))
        if self.precision not in PRECISIONS:
            raise ValueError(f"precision must be one of {PRECISIONS}, got {self.precision!r}")
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


_BOUND_CHECKS: dict[str, tuple[Callable[[Any, float], bool], str]] = {
    "gt": (operator.gt, "greater than"),
    "ge": (operator.ge, "at least"),
    "lt": (operator.lt, "less than"),
    "le": (operator.le, "at most"),
}


@dataclass(frozen=True)
class Argument:
    """One `TrainArgs` field as the command line and the pipeline config see it."""

    name: str
    type: Any  # the field's annotation: str, int, float, bool or list[str]
    default: Any
    help: str
    bounds: Mapping[str, float]

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")

    def check(self, value: Any) -> None:
        """A ValueError naming the argument when `value` is out of its bounds."""
        for bound, limit in self.bounds.items():
            holds, words = _BOUND_CHECKS[bound]
            if not isinstance(value, int | float) or not holds(value, limit):
                raise ValueError(f"{self.name} must be {words} {limit}, got {value!r}")


def _arguments() -> dict[str, Argument]:
    hints = typing.get_type_hints(TrainArgs)
    undeclared = [f.name for f in dataclasses.fields(TrainArgs) if "help" not in f.metadata]
    if undeclared:
        raise TypeError(f"TrainArgs fields not declared with arg() (no help): {undeclared}")
    return {
        f.name: Argument(
            name=f.name,
            type=hints[f.name],
            default=f.default_factory() if f.default is dataclasses.MISSING else f.default,
            help=f.metadata["help"],
            bounds=f.metadata["bounds"],
        )
        for f in dataclasses.fields(TrainArgs)
    }


# Every trainer argument by name, in declaration order.
ARGUMENTS: dict[str, Argument] = _arguments()


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
    for argument in ARGUMENTS.values():
        kind = _kind(argument.type)
        shown = f"{argument.help} (default: {argument.default!r})"
        described = {"dest": argument.name, "default": argparse.SUPPRESS, "help": shown}
        if kind is bool:
            parser.add_argument(argument.flag, action=argparse.BooleanOptionalAction, **described)
        elif kind is list:
            parser.add_argument(argument.flag, nargs="*", **described)
        else:
            parser.add_argument(argument.flag, type=kind, **described)
    namespace = parser.parse_args(argv)
    values: dict[str, Any] = {}
    if namespace.config is not None:
        values.update(load_yaml(namespace.config))
    values.update({k: v for k, v in vars(namespace).items() if k != "config"})
    return with_task_defaults(values)


def command_line(values: Mapping[str, Any]) -> list[str]:
    """The flags `parse_args` reads back as `values` (argument names), in their order: booleans
    as --x / --no-x, lists as several words, anything else (a number, or a placeholder such as
    Azure ML's `${{inputs.epochs}}`) as one. An unknown name is a ValueError naming it."""
    unknown = sorted(set(values) - set(ARGUMENTS))
    if unknown:
        raise ValueError(f"unknown training argument(s) {unknown}")
    flags: list[str] = []
    for name, value in values.items():
        flag = ARGUMENTS[name].flag
        if isinstance(value, bool):
            flags.append(flag if value else "--no-" + flag[2:])
        elif isinstance(value, list):
            flags += [flag, *map(str, value)]
        else:
            flags += [flag, str(value)]
    return flags


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
    unknown = sorted(set(data) - set(ARGUMENTS))
    if unknown:
        raise ValueError(f"{path}: unknown training argument(s) {unknown}")
    return data


def _kind(hint: Any) -> type:
    """The argparse type of a field: bool, list, or the scalar type itself."""
    if typing.get_origin(hint) is list:
        return list
    return hint if isinstance(hint, type) else str
