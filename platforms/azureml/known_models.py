"""The configs of base models a scenario names by catalog or hub name, for a memory estimate made
before any of their files are on this machine (platforms/azureml/model_shapes.py).

An Azure ML job mounts its model catalog model, and a hub id is downloaded by the job: neither
is here when a job is exported or submitted, so their shapes are written down here, from each
model's published `config.json` (the Hugging Face repository of the same name): the fields that
decide the parameter count, and the dtype its weights are stored in. A name not in this table,
and not a folder or a cached hub download here, gets no estimate: a warning, never a refusal.

Names match whole, ignoring case, with `/`, `.` and `_` read as `-`: the catalog's
`mistralai-Mistral-7B-Instruct-v0-3` and the hub's `mistralai/Mistral-7B-Instruct-v0.3` are one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class KnownModel:
    """One architecture: the names it goes by and its config.json's shape fields."""

    label: str
    names: tuple[str, ...]
    model_type: str
    config: dict[str, Any] = field(default_factory=dict)
    dtype: str = "bfloat16"  # the checkpoint's torch_dtype: what a frozen base is held in


_LLAMA3 = {"num_attention_heads": 64, "num_key_value_heads": 8, "vocab_size": 128256}
KNOWN_MODELS = (
    KnownModel(
        "Llama-3-70B",
        (
            "Meta-Llama-3-70B",
            "Meta-Llama-3-70B-Instruct",
            "Meta-Llama-3.1-70B-Instruct",
            "Llama-3.3-70B-Instruct",
            "meta-llama/Meta-Llama-3-70B",
            "meta-llama/Meta-Llama-3-70B-Instruct",
            "meta-llama/Llama-3.1-70B-Instruct",
            "meta-llama/Llama-3.3-70B-Instruct",
        ),
        "llama",
        {
            **_LLAMA3,
            "hidden_size": 8192,
            "num_hidden_layers": 80,
            "intermediate_size": 28672,
        },
    ),
    KnownModel(
        "Llama-3-8B",
        (
            "Meta-Llama-3-8B",
            "Meta-Llama-3-8B-Instruct",
            "Meta-Llama-3.1-8B-Instruct",
            "meta-llama/Meta-Llama-3-8B",
            "meta-llama/Meta-Llama-3-8B-Instruct",
            "meta-llama/Llama-3.1-8B-Instruct",
        ),
        "llama",
        {
            **_LLAMA3,
            "num_attention_heads": 32,
            "hidden_size": 4096,
            "num_hidden_layers": 32,
            "intermediate_size": 14336,
        },
    ),
    KnownModel(
        "Mistral-7B-v0.3",
        (
            "mistralai-Mistral-7B-Instruct-v0-3",
            "mistralai/Mistral-7B-Instruct-v0.3",
            "mistralai/Mistral-7B-v0.3",
        ),
        "mistral",
        {
            "hidden_size": 4096,
            "num_hidden_layers": 32,
            "num_attention_heads": 32,
            "num_key_value_heads": 8,
            "intermediate_size": 14336,
            "vocab_size": 32768,
        },
    ),
    KnownModel(
        "Phi-3.5-mini",
        ("Phi-3.5-mini-instruct", "microsoft/Phi-3.5-mini-instruct"),
        "phi3",
        {
            "hidden_size": 3072,
            "num_hidden_layers": 32,
            "num_attention_heads": 32,
            "num_key_value_heads": 32,
            "intermediate_size": 8192,
            "vocab_size": 32064,
        },
    ),
    KnownModel(
        "GPT-2 (124M)",
        ("gpt2", "openai-community/gpt2"),
        "gpt2",
        {"n_embd": 768, "n_layer": 12, "n_head": 12, "vocab_size": 50257, "n_positions": 1024},
        dtype="float32",
    ),
    KnownModel(
        "T5-base",
        ("t5-base", "google-t5/t5-base"),
        "t5",
        {
            "d_model": 768,
            "d_ff": 3072,
            "d_kv": 64,
            "num_layers": 12,
            "num_decoder_layers": 12,
            "num_heads": 12,
            "vocab_size": 32128,
        },
        dtype="float32",
    ),
)


def _key(name: str) -> str:
    return re.sub(r"[/._]", "-", name).lower()


_BY_NAME = {_key(name): model for model in KNOWN_MODELS for name in model.names}
_REGISTRY_MODEL = re.compile(r"azureml://registries/[^/]+/models/([^/]+)/")
_WORKSPACE_MODEL = re.compile(r"azureml:([^:@/]+)[:@]")


def catalog_name(model: str) -> str:
    """The model's own name in a reference: a registry's or workspace's model name, else the
    reference itself (a hub id)."""
    found = _REGISTRY_MODEL.match(model) or _WORKSPACE_MODEL.match(model)
    return found[1] if found else model


def known_model(model: str) -> KnownModel | None:
    """The table's architecture for a model reference (catalog, workspace or hub name), None
    when the table does not know it."""
    return _BY_NAME.get(_key(catalog_name(model)))
