"""The CUDA line each tunegate environment installs, and the GPUs that line can run.

torch's wheels bring their own CUDA runtime (`nvidia-cuda-runtime` in the environment's lock,
platforms/azureml/locks/), so the base image's toolkit does not decide what runs: the lock does.
A CUDA line runs only the GPU generations its builds carry kernels for, and needs a driver of at
least its release branch on the node (Azure ML's compute nodes bring the driver):

- CUDA 13 (the locks today: torch 2.13 from PyPI, `nvidia-*-cu13`): compute capability 7.5 and
  newer (Turing, Ampere, Ada, Hopper, Blackwell). CUDA 13.0 dropped offline compilation and
  library support for Maxwell, Pascal and Volta (CUDA 13.0 release notes, "Deprecated
  Architectures"), and torch's CUDA 13 wheels are built for sm_75 and newer: a V100 (7.0) finds
  no kernel. Driver: R580 or newer (Linux >= 580.65.06, the CUDA 13.0 GA floor).
- CUDA 12 (no lock yet; a follow-up): torch's CUDA 12 wheels come from download.pytorch.org,
  not PyPI, which the lock tool could not reach; the cu126 builds have carried sm_70 for V100
  (check 2.13's arch list before relying on it); driver R525 or newer (>= 525.60.13, the CUDA
  12.0 GA floor, enough for any 12.x through minor-version compatibility). Add a row here when
  a lock of that line exists.

A config whose training cluster or GPU deployment runs tunegate's environment on a GPU its CUDA
line cannot run is refused when it loads (`check_runs`, from platforms/azureml/config.py), naming
the field and a current size that can; a config that names its own environment is not checked.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from platforms.azureml import vm_sizes
from trainer.precision import Capability

LOCKS = Path(__file__).with_name("locks")  # {environment name}.txt: platforms/azureml/lock.py
TRAINING_ENV = "tunegate"  # the jobs' environment (platforms/azureml/environment.py)
GPU_SERVING_ENV = "tunegate-serving-gpu"  # GPU deployments' environment


@dataclass(frozen=True)
class CudaLine:
    """One CUDA major release as torch's wheels ship it: the oldest GPU it runs and the driver."""

    major: int
    min_capability: Capability
    driver: str

    def describe(self) -> str:
        major, minor = self.min_capability
        return f"CUDA {self.major} (compute capability {major}.{minor} and newer, driver {self.driver})"


CUDA_LINES = {
    13: CudaLine(13, (7, 5), "R580+, Linux >= 580.65.06"),
}
_RUNTIME = re.compile(r"^nvidia-cuda-runtime(?:-cu\d+)?==(\d+)\.", re.MULTILINE)


@cache
def lock_cuda_line(environment: str) -> CudaLine | None:
    """The CUDA line the environment's lock installs (its `nvidia-cuda-runtime` wheel's major
    version); None when it installs no CUDA runtime."""
    lock = LOCKS / f"{environment}.txt"
    if not lock.exists():
        raise ValueError(f"{lock} is missing: write it with `python -m platforms.azureml.lock`")
    found = _RUNTIME.search(lock.read_text())
    if found is None:
        return None
    major = int(found[1])
    if major not in CUDA_LINES:
        raise ValueError(
            f"{lock} installs CUDA {major}, which platforms/azureml/cuda_lines.py does not know: "
            "add its oldest compute capability and driver to CUDA_LINES"
        )
    return CUDA_LINES[major]


def check_runs(size_name: str, environment: str, field: str, environment_field: str) -> None:
    """A ValueError naming `field` when `size_name` (a GPU size of the table) has GPUs that the
    environment's CUDA line cannot run, with a current size that can (or, in
    `environment_field`, an environment of the config's own)."""
    size = vm_sizes.gpu_size(size_name)
    if size is None:  # not in the table: the workspace's list checks it at submission
        return
    line = lock_cuda_line(environment)
    if line is None:
        raise ValueError(
            f"{field} {size_name} has GPUs, but the {environment} environment's lock installs no "
            "CUDA runtime: regenerate it with `python -m platforms.azureml.lock`"
        )
    if size.model.capability >= line.min_capability:
        return
    replacement = vm_sizes.replacement_for(size, line.min_capability)
    raise ValueError(
        f"{field} {size_name}: its {size.model.describe()} GPUs cannot run the {environment} "
        f"environment, whose torch wheels are {line.describe()}; use {replacement.name} "
        f"({replacement.describe()}), or set {environment_field} to an environment built for "
        f"{size.gpu}"
    )
