"""Which precision a GPU computes in natively: the one rule the trainer, the evaluation job and the
endpoint follow for `auto` (and the Azure ML size table shows for each GPU).

bfloat16 only where the chip has it in hardware, compute capability 8.0 and newer (Ampere: A100,
A10; Ada: L4, L40S; Hopper: H100). `torch.cuda.is_bf16_supported()` is not that question: by
default it also answers yes where bfloat16 is emulated (V100 7.0, T4 7.5), which runs slower
than float16 and gains nothing. Older GPUs take float16, which the HF Trainer runs with dynamic
loss scaling (`fp16=True`: a GradScaler), so small gradients do not underflow; a CPU computes in
float32.
"""

from __future__ import annotations

from typing import Literal

Precision = Literal["bf16", "fp16", "fp32"]
Capability = tuple[int, int]  # (major, minor), as torch.cuda.get_device_capability() gives it

NATIVE_BF16 = (8, 0)  # Ampere: the first generation with bfloat16 tensor cores


def native_bf16(capability: Capability) -> bool:
    """Whether a GPU of this compute capability computes in bfloat16 in hardware."""
    return tuple(capability) >= NATIVE_BF16


def auto_precision(capability: Capability | None) -> Precision:
    """The precision `auto` means on a GPU of this compute capability (None: no GPU): bf16 where
    it is native, fp16 (with loss scaling) on an older GPU, fp32 on a CPU."""
    if capability is None:
        return "fp32"
    return "bf16" if native_bf16(capability) else "fp16"


def device_capability() -> Capability | None:
    """The compute capability of this process's GPU (torch's current device), None without one."""
    import torch  # the Azure ML size table reads this module's rule without loading torch

    if not torch.cuda.is_available():
        return None
    major, minor = torch.cuda.get_device_capability()
    return (major, minor)
