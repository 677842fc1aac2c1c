"""`auto` precision follows the chip: bfloat16 only where the GPU computes it natively (compute
capability 8.0 and newer), float16 with loss scaling on older GPUs, float32 on a CPU. Decided on
the capabilities real GPUs report (`torch.cuda.get_device_capability()`)."""

from __future__ import annotations

import pytest
import torch

from trainer.args import TrainArgs
from trainer.precision import auto_precision, device_capability, native_bf16
from trainer.train import _training_arguments


@pytest.mark.parametrize(
    ("gpu", "capability", "expected"),
    [
        ("V100", (7, 0), "fp16"),  # bf16 only emulated: slower than fp16
        ("T4", (7, 5), "fp16"),
        ("A100", (8, 0), "bf16"),
        ("A10", (8, 6), "bf16"),
        ("L4 / L40S", (8, 9), "bf16"),
        ("H100", (9, 0), "bf16"),
        ("B200", (10, 0), "bf16"),
        ("CPU", None, "fp32"),
    ],
)
def test_auto_is_bf16_only_where_the_gpu_has_it_natively(
    gpu: str, capability: tuple[int, int] | None, expected: str
) -> None:
    assert auto_precision(capability) == expected, gpu
    if capability is not None:
        assert native_bf16(capability) is (expected == "bf16")


def test_this_machine_without_a_gpu_trains_in_fp32() -> None:
    """No mock: this machine's torch has no GPU, so the trainer's `auto` is fp32 here."""
    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    assert device_capability() is None
    arguments = _training_arguments(TrainArgs(task="extractive-qa"), has_eval=False)
    assert not arguments.bf16 and not arguments.fp16


@pytest.mark.parametrize(
    ("capability", "bf16", "fp16"), [((7, 5), False, True), ((9, 0), True, False)]
)
def test_the_choice_reads_the_gpus_capability_not_whether_bf16_is_emulated(
    monkeypatch: pytest.MonkeyPatch, capability: tuple[int, int], bf16: bool, fp16: bool
) -> None:
    """A T4 says yes to `is_bf16_supported()` (emulation counts); what the trainer and the
    endpoint ask (`device_capability`) still picks fp16 there, which HF's Trainer runs with
    dynamic loss scaling."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *a, **kw: True)
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda *a: capability)
    assert auto_precision(device_capability()) == ("bf16" if bf16 else "fp16")
