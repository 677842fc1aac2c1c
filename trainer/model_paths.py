"""Where a base model's files are: Azure ML model assets mounted into a job, and the Hugging Face
folders inside a model folder.

An Azure ML job gets a model asset (`azureml://registries/<registry>/models/<name>/versions/<v>`
from the model catalog, or `azureml:<name>:<version>` in the workspace) as a mounted input. The
trainer is given the reference itself (`--model azureml://...`), so `model_info.json` names the
base model the same way on every machine, and the job's command says where the mount is:
`TUNEGATE_MODEL_MOUNTS` maps each reference to its folder (JSON).

A model folder need not be a `save_pretrained` folder itself: the Hugging Face files are nested
in the layouts of Azure ML's model catalog (Azure ML's own fine-tuning components read them from
the same places, azureml-assets `model_selector.py`):
- MLflow's `transformers` flavor: `model/` (config.json, weights), `components/tokenizer/`;
- Azure ML's `hftransformers` / `hftransformersv2` flavors: `data/model/`, `data/tokenizer/`
  (and `data/config/`, a config.json without weights);
- a plain `save_pretrained` folder, at the top or a few levels down.
The model is the shallowest folder with config.json and weights; the tokenizer is that folder
when it has tokenizer files, else the shallowest folder that has them.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

MOUNTS_VARIABLE = "TUNEGATE_MODEL_MOUNTS"
MAX_DEPTH = 4
WEIGHTS = ("*.safetensors", "pytorch_model*.bin", "*.index.json")  # not training_args.bin
# Files that hold weights of any kind (full, merged, adapter, exported, a trainer's state): what
# the orchestrator never downloads of an Azure ML training job's output (it reads the rest).
WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".onnx", ".gguf", ".ckpt", ".h5")
TOKENIZER_FILES = ("tokenizer_config.json", "tokenizer.json")

Part = Literal["model", "tokenizer"]


def is_model_asset(name: str) -> bool:
    """An Azure ML model asset reference (registry or workspace), not a hub id or a path."""
    return name.startswith("azureml:")


def mounted_folder(reference: str) -> Path:
    """The folder an Azure ML job mounted the model asset `reference` at."""
    raw = os.environ.get(MOUNTS_VARIABLE, "")
    try:
        mounts = json.loads(raw) if raw else {}
    except ValueError:
        raise ValueError(f"{MOUNTS_VARIABLE} is not a JSON object: {raw[:200]!r}") from None
    if reference not in mounts:
        raise FileNotFoundError(
            f"{reference} is an Azure ML model asset: it loads inside an Azure ML job that mounts "
            f"it, where the job's command maps it to its folder in {MOUNTS_VARIABLE} (mapped "
            f"here: {sorted(mounts) or 'none'})"
        )
    return Path(mounts[reference])


def _folders(root: Path) -> Iterator[Path]:
    """`root` and the folders under it, shallowest first, in name order at each depth."""
    level = [root]
    for _ in range(MAX_DEPTH + 1):
        yield from level
        level = [
            child
            for folder in level
            for child in sorted(folder.iterdir())
            if child.is_dir() and not child.name.startswith(".")
        ]


def _has_weights(folder: Path) -> bool:
    return any(next(folder.glob(pattern), None) is not None for pattern in WEIGHTS)


def model_folder(root: Path) -> Path:
    """The folder under `root` (itself included) with the model's config.json and weights: the
    shallowest, or the shallowest with config.json when none has weights next to it."""
    configured = [f for f in _folders(root) if (f / "config.json").is_file()]
    if not configured:
        inside = sorted(p.name for p in root.iterdir()) if root.is_dir() else []
        raise FileNotFoundError(
            f"no config.json in {root} or the {MAX_DEPTH} levels of folders under it: not a "
            f"Hugging Face model folder (it holds {inside or 'nothing'})"
        )
    return next((f for f in configured if _has_weights(f)), configured[0])


def tokenizer_folder(root: Path, model: Path) -> Path:
    """`model` when it has tokenizer files, else the shallowest folder under `root` with them
    (`model` again when none has: the tokenizer's loader then says what is missing)."""
    for folder in (model, *_folders(root)):
        if any((folder / name).is_file() for name in TOKENIZER_FILES):
            return folder
    return model


def resolve(name: str, part: Part = "model") -> str:
    """A loadable path for a model asset mounted into this job or a local folder (the folder
    holding the model's or the tokenizer's files), or `name` itself (a hub id)."""
    if is_model_asset(name):
        root = mounted_folder(name)
    elif os.path.isdir(name):
        root = Path(name)
        if not any((f / "config.json").is_file() for f in _folders(root)):
            return name  # not a model folder (e.g. a tokenizer's): transformers says what lacks
    else:
        return name
    model = model_folder(root)
    return str(model if part == "model" else tokenizer_folder(root, model))


def is_weight_file(name: str) -> bool:
    """Whether a file of a model folder holds weights (`WEIGHT_SUFFIXES`)."""
    return name.lower().endswith(WEIGHT_SUFFIXES)


def has_weights(model_dir: Path) -> bool:
    """Whether a trained model folder holds its weights here (an Azure ML training job's output
    is fetched without them: they stay in the job's output, registered from there)."""
    return any(p.is_file() and is_weight_file(p.name) for p in model_dir.rglob("*"))
