"""One set of versions: what the Azure ML images install is what this machine's tests ran on.

Every package an image's lock (platforms/azureml/locks/) shares with `constraints.txt` is at
constraints.txt's version: `python -m platforms.azureml.lock` resolves each image with
constraints.txt as pip's constraints, and tests/azureml/test_shared_pins.py fails on any drift
(`drift`). The exceptions are listed here, each with its reason, and nowhere else:

- `SERVER_PINS`: in the serving images only, the packages Azure ML's inference server
  (azureml-inference-server-http, `azmlinfsrv`) pins to other versions than Prefect's side of
  constraints.txt. The lock takes the server's; the scoring code runs on them
  (tests/azureml/test_inference_server.py starts that server here).
- `IMAGE_ONLY`: packages an image holds that this machine does not install at all, so
  constraints.txt cannot pin them: the CUDA wheels of torch's Linux build (this machine runs
  torch's CPU build), DeepSpeed's build-time helpers, and the inference server's own
  dependencies.
"""

from __future__ import annotations

import re
from pathlib import Path

from platforms.azureml.environment import CONSTRAINTS, EnvSpec, normalize

_SERVER = "azureml-inference-server-http 1.5.1"
SERVER_PINS: dict[str, str] = {
    "pydantic": f"{_SERVER} requires pydantic~=2.12.0 (constraints.txt has Prefect's newer one)",
    "pydantic-core": "the release pydantic 2.12 pins",
    "opentelemetry-api": f"{_SERVER} requires opentelemetry-api==1.33.0",
    "opentelemetry-sdk": f"{_SERVER} requires opentelemetry-sdk==1.33.0",
    "opentelemetry-semantic-conventions": "the release opentelemetry-sdk 1.33.0 pins (0.54b0)",
    "azure-monitor-opentelemetry-exporter": (
        f"the newest release that takes the OpenTelemetry 1.33 of {_SERVER}"
    ),
    "importlib-metadata": "opentelemetry-api 1.33.0 requires importlib-metadata<8.7",
    "wrapt": f"inference-schema 1.8 (required by {_SERVER}) requires wrapt<=1.16.0",
}
IMAGE_ONLY: dict[str, str] = {
    r"nvidia-.*": "torch's CUDA wheels on Linux (GPU only; this machine has torch's CPU build)",
    r"cuda-(bindings|pathfinder|toolkit)": "torch's CUDA wheels on Linux (GPU only)",
    r"triton": "torch's GPU kernel compiler on Linux (GPU only)",
    r"hjson|ninja|py-cpuinfo|einops": "DeepSpeed's dependencies (deepspeed is in the images only)",
    r"setuptools": "pulled by torch's Linux build and DeepSpeed; not pinned on this machine",
    r"inference-schema|fixedint|deprecated": f"the dependencies of {_SERVER} and its exporter",
}
_LOCK_LINE = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+)", re.MULTILINE)


def _versions(text: str) -> dict[str, str]:
    return {normalize(name): version for name, version in _LOCK_LINE.findall(text)}


def excepted(spec: EnvSpec) -> dict[str, str]:
    """The packages of `spec`'s image that may differ from constraints.txt, with why."""
    return dict(SERVER_PINS) if spec.serves else {}


def image_only(name: str) -> str | None:
    """Why a package is in the images and not constraints.txt; None when it has no reason."""
    return next((why for pattern, why in IMAGE_ONLY.items() if re.fullmatch(pattern, name)), None)


def constraint_lines(spec: EnvSpec, constraints: Path = CONSTRAINTS) -> list[str]:
    """constraints.txt's pins that bind `spec`'s resolution (all but its excepted packages)."""
    skip = excepted(spec)
    return [
        f"{name}=={version}"
        for name, version in _versions(constraints.read_text()).items()
        if name not in skip
    ]


def drift(spec: EnvSpec, lock_text: str, constraints: Path = CONSTRAINTS) -> list[str]:
    """Every way `lock_text` (spec's lock) disagrees with constraints.txt, one line each: a
    shared package at another version (not excepted), or a package constraints.txt does not pin
    that is not image-only."""
    pinned = _versions(constraints.read_text())
    skip = excepted(spec)
    found = []
    for name, version in sorted(_versions(lock_text).items()):
        if name in pinned:
            if version != pinned[name] and name not in skip:
                found.append(f"{name}: {version} in the lock, {pinned[name]} in constraints.txt")
        elif image_only(name) is None:
            found.append(f"{name}: {version} in the lock, not in constraints.txt")
    return found
