"""How big a base model is, counted without its weights: the parameters a memory estimate needs
(platforms/azureml/memory.py), from a model built on the meta device.

The model's config comes from, in order: a folder here (its shallowest config.json), a packaged
model (its pip package's folder), a hub download already in this machine's cache (the hub is
never asked), or the table of known architectures (platforms/azureml/known_models.py). From the
config, transformers builds the task's model under accelerate's `init_empty_weights` (every
tensor on the meta device: shapes, no memory; a 70B model in about a second), and accelerate's
`calculate_maximum_sizes` gives its largest layer, which DeepSpeed's ZeRO-3 estimate gathers
whole. A LoRA adapter's parameters are counted from the same model's Linear
layers that the target modules name (rank x (inputs + outputs) each, as peft adds them),
without building the adapter (peft on a 70B meta model takes seconds).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from platforms.azureml.known_models import known_model
from trainer.args import LORA_TARGETS
from trainer.taskspec import PACKAGED_MODELS

_HALF = ("bfloat16", "float16", "torch.bfloat16", "torch.float16")


@dataclass(frozen=True)
class ModelShape:
    """What decides a model's memory: its parameters (all, in its largest layer, in the Linear
    layers a 4-bit load quantizes, in the LoRA adapter asked for), and its activations' sizes."""

    source: str  # where the config came from, for the printed figures
    params: int
    largest_layer_params: int
    linear_params: int  # in Linear layers other than the output head: what 4-bit quantizes
    lora_params: int  # a LoRA adapter's, asked for or not (0: no target modules known)
    hidden: int
    layers: int
    logits: int  # the output's width per token: the vocabulary of a language model, else 0
    weight_bytes: int  # bytes per weight as stored (2: bf16/fp16, 4: fp32)


def model_shape(model: str, task: str, lora_r: int, targets: list[str]) -> ModelShape | None:
    """The shape of `model` with `task`'s head and the LoRA adapter of rank `lora_r` on
    `targets` (empty: the trainer's per-architecture defaults, trainer.args.LORA_TARGETS),
    counted whether LoRA is asked for or not (what it would cost); None when its config is
    nowhere to be found (not a folder, packaged, cached or a known architecture)."""
    found = _config(model)
    if found is None:
        return None
    config, source, dtype = found
    meta = _meta_model(config, task)
    from accelerate.utils import calculate_maximum_sizes

    _, (largest_bytes, _) = calculate_maximum_sizes(meta)
    element = next(meta.parameters()).element_size()
    head = meta.get_output_embeddings() if hasattr(meta, "get_output_embeddings") else None
    linears = _linear_layers(meta)
    wanted = targets or LORA_TARGETS.get(config.model_type, [])
    lora = sum(
        lora_r * (fan_in + fan_out)
        for name, (fan_in, fan_out) in linears.items()
        if any(name == t or name.endswith(f".{t}") for t in wanted)
    )
    text = config.get_text_config() if hasattr(config, "get_text_config") else config
    return ModelShape(
        source=source,
        params=sum(p.numel() for p in meta.parameters()),  # buffers left out, tied ones once
        largest_layer_params=largest_bytes // element,
        linear_params=sum(
            i * o
            for name, (i, o) in linears.items()
            if head is None or name != _name_of(meta, head)
        ),
        lora_params=lora,
        hidden=_first(text, "hidden_size", "n_embd", "d_model"),
        layers=_first(text, "num_hidden_layers", "n_layer", "num_layers"),
        logits=_first(text, "vocab_size") if head is not None else 0,
        weight_bytes=2 if str(dtype) in _HALF else 4,
    )


def _config(model: str) -> tuple[Any, str, Any] | None:
    """(config, where it came from, the stored dtype) or None."""
    from transformers import AutoConfig

    folder = _folder(model)
    if folder is not None:
        config = AutoConfig.from_pretrained(folder)
        return config, f"{folder / 'config.json'}", _dtype(config)
    known = known_model(model)
    if known is not None:
        config = AutoConfig.for_model(known.model_type, **known.config)
        return config, f"known architecture {known.label}", known.dtype
    if "://" in model or model.startswith("azureml:"):
        return None
    try:  # a hub id downloaded before: the cache only, the hub is not asked
        config = AutoConfig.from_pretrained(model, local_files_only=True)
    except (OSError, ValueError):
        return None
    return config, f"{model} (cached download)", _dtype(config)


def _folder(model: str) -> Path | None:
    """The folder holding the model's config.json: a packaged model's, or the shallowest one
    under a folder `model` names here."""
    if model in PACKAGED_MODELS:
        from trainer.modeling import resolve_model

        return Path(resolve_model(model))
    root = Path(model)
    if "://" in model or not root.is_dir():
        return None
    found = sorted(root.rglob("config.json"), key=lambda p: len(p.parts))
    usable = [p for p in found if "model_type" in json.loads(p.read_text())]
    return usable[0].parent if usable else None


def _meta_model(config: Any, task: str) -> Any:
    """The task's model from `config` with every tensor on the meta device; the bare model when
    the task's head does not fit the config (a packaged encoder asked for a decoder task is
    counted as its body: its extra layers are a few MB); tied embeddings tied."""
    from accelerate import init_empty_weights
    from transformers import AutoModel

    from trainer.modeling import model_class

    with init_empty_weights():
        try:
            meta = model_class(task).from_config(config)
        except ValueError:
            meta = AutoModel.from_config(config)
    meta.tie_weights()  # skipped on the meta device: a tied head would count twice
    return meta


def _linear_layers(meta: Any) -> dict[str, tuple[int, int]]:
    """{module name: (inputs, outputs)} of the model's Linear layers (and GPT-2's Conv1D, whose
    weight is stored transposed)."""
    import torch
    from transformers.pytorch_utils import Conv1D

    shapes = {}
    for name, module in meta.named_modules():
        if isinstance(module, torch.nn.Linear):
            shapes[name] = (module.in_features, module.out_features)
        elif isinstance(module, Conv1D):
            shapes[name] = tuple(module.weight.shape)
    return shapes


def _name_of(meta: Any, module: Any) -> str:
    return next((n for n, m in meta.named_modules() if m is module), "")


def _dtype(config: Any) -> Any:
    return getattr(config, "dtype", None) or getattr(config, "torch_dtype", None)


def _first(config: Any, *names: str) -> int:
    for name in names:
        value = getattr(config, name, None)
        if isinstance(value, int):
            return value
    return 0
