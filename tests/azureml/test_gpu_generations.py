"""Hardware-correct by construction: every GPU size has its generation (compute capability, native
bf16), a retired size or a GPU the environment's CUDA wheels cannot run is a config error naming
the field and a current replacement, and the shipped scenarios run on sizes one can rent today."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli.main import app
from flows.config import load_config
from platforms.azureml import cuda_lines, vm_sizes
from platforms.azureml.environment import SERVING_GPU, TRAINING, lock_file
from tests.azureml.test_export import SCENARIOS
from trainer.precision import auto_precision

ROOT = Path(__file__).resolve().parents[2]
GPT2 = ROOT / "configs" / "azureml" / "gpt2-text-deepspeed.yaml"


def _show(config: Path, *overrides: str) -> tuple[int, str]:
    args = ["config", "show", "-c", str(config)]
    for override in overrides:
        args += ["--set", override]
    result = CliRunner().invoke(app, args)
    return result.exit_code, result.output


@pytest.mark.parametrize(
    ("gpu", "capability", "bf16"),
    [
        ("V100", (7, 0), False),
        ("T4", (7, 5), False),
        ("A100", (8, 0), True),
        ("A10", (8, 6), True),
        ("L4", (8, 9), True),
        ("L40S", (8, 9), True),
        ("H100", (9, 0), True),
        ("H100 NVL", (9, 0), True),
    ],
)
def test_each_gpu_has_its_generation(gpu: str, capability: tuple[int, int], bf16: bool) -> None:
    model = vm_sizes.GPUS[gpu]
    assert (model.capability, model.native_bf16) == (capability, bf16)
    # the trainer's `auto` on that GPU follows the same rule
    assert auto_precision(model.capability) == ("bf16" if bf16 else "fp16")


def test_every_size_names_a_known_gpu_and_every_retired_size_a_current_replacement() -> None:
    for size in vm_sizes.GPU_SIZES.values():
        assert size.gpu in vm_sizes.GPUS, size.name
        if size.retired or size.replacement:
            replacement = vm_sizes.replacement_for(size, (7, 5))
            assert replacement.retired is None and replacement.gpus == size.gpus, size.name
    for size in vm_sizes.GPU_SIZES.values():  # a replacement for any size, for any CUDA line
        for needs in ((7, 5), (9, 0)):
            found = vm_sizes.replacement_for(size, needs)
            assert found.retired is None and found.model.capability >= needs, size.name
    assert vm_sizes.replacement_for(vm_sizes.GPU_SIZES["standard_nc64as_t4_v3"], (9, 0)).gpus == 8
    ncv3 = [s for s in vm_sizes.GPU_SIZES.values() if s.name.endswith("s_v3") and s.gpu == "V100"]
    assert len(ncv3) == 4 and {s.retired for s in ncv3} == {date(2025, 9, 30)}


def test_the_locks_are_cuda_13_which_runs_turing_and_newer() -> None:
    """The line is read from the locks themselves (torch's nvidia-cuda-runtime wheel)."""
    for spec in (TRAINING, SERVING_GPU):
        assert "nvidia-cuda-runtime==13." in lock_file(spec).read_text()
        line = cuda_lines.lock_cuda_line(spec.name)
        assert line is not None and (line.major, line.min_capability) == (13, (7, 5))


@pytest.mark.parametrize(
    ("override", "expected"),
    [
        # retired NCv3 sizes, for training and for serving
        (
            "azureml.compute.size=Standard_NC24s_v3",
            "azureml.compute.size: Standard_NC24s_v3 (4 GPUs (V100 16 GB)) was retired by Azure "
            "on 2025-09-30",
        ),
        (
            "azureml.endpoint.instance_type=Standard_NC6s_v3",
            "azureml.endpoint.instance_type: Standard_NC6s_v3 (1 GPU (V100 16 GB)) was retired",
        ),
    ],
)
def test_a_retired_size_exits_2_naming_the_field_and_its_replacement(
    override: str, expected: str
) -> None:
    code, output = _show(GPT2, override)
    assert code == 2, output
    [line] = output.strip().splitlines()
    assert expected in line
    replacement = "Standard_NC96ads_A100_v4" if "compute" in override else "Standard_NC24ads_A100"
    assert f"use {replacement}" in line


def test_a_v100_the_cuda_13_wheels_cannot_run_exits_2_naming_a_replacement() -> None:
    """NDv2 is not retired, but its V100s (7.0) have no kernels in CUDA 13's torch wheels."""
    code, output = _show(
        GPT2,
        "azureml.compute.size=Standard_ND40rs_v2",
        "azureml.compute.name=v100-x8",
        "azureml.launch.gpus_per_node=8",
    )
    assert code == 2, output
    [line] = output.strip().splitlines()
    assert line.startswith("invalid config: azureml.compute.size Standard_ND40rs_v2: its V100")
    assert "compute capability 7.0" in line and "CUDA 13 (compute capability 7.5" in line
    assert "R580" in line and "use Standard_ND96amsr_A100_v4" in line


def test_an_environment_the_config_names_itself_is_not_checked_against_tunegates_cuda() -> None:
    """A V100 with a CUDA 12 image of the user's own: the image is theirs to match."""
    config = load_config(
        GPT2,
        [
            "azureml.compute.size=Standard_ND40rs_v2",
            "azureml.compute.name=v100-x8",
            "azureml.launch.gpus_per_node=8",
            "azureml.environment.image=mcr.microsoft.com/azureml/my-cuda12-image:1",
        ],
    )
    assert config.azureml.compute.size == "Standard_ND40rs_v2"


def test_a_t4_runs_the_cuda_13_environments() -> None:
    """Turing (7.5) is still in CUDA 13: training and serving on T4s load."""
    code, output = _show(ROOT / "configs" / "azureml" / "t5-summarization-t4.yaml")
    assert code == 0, output


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda p: p.stem)
def test_every_scenario_runs_on_current_sizes_its_environments_can_run(scenario: Path) -> None:
    azureml = load_config(scenario).azureml
    line = cuda_lines.lock_cuda_line(TRAINING.name)
    assert line is not None
    for name in (azureml.compute.size, azureml.endpoint.instance_type):
        size = vm_sizes.gpu_size(name)
        assert size is not None, f"{scenario.stem}: {name} is not in the size table"
        assert size.retired is None, f"{scenario.stem}: {name} is retired"
        assert size.model.capability >= line.min_capability, f"{scenario.stem}: {name}"
