"""Model FLOPs utilisation (MFU): the FLOPs training needs for the real (non-padding) tokens it
read, a second, over the peak of the processors it ran on.

The model's FLOPs (`training_flops`), counted as in the PaLM paper's appendix: a forward pass is
2 FLOPs per weight a token meets (embedding tables aside: a lookup is no multiply) plus the
attention scores, 4 x layers x width x sequence length per token; a backward pass is twice the
forward where the weights are trained and once where they are frozen (LoRA: the input gradients
still flow through the frozen weights, theirs are never computed). An encoder-decoder's source
tokens meet the encoder's weights and its target tokens the decoder's. Padding tokens are not
counted: the work a padded batch spends on them is no use, which is what MFU shows against the
padded Trainer (benchmarks/train.py).

The peak (`peak_flops`): on a GPU, its datasheet's dense peak for the precision trained in
(bf16 or fp16 tensor cores, else fp32); on a CPU, measured here: float32 matrix products on the
threads torch uses, a tenth of a second.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

# Dense peak TFLOPS by GPU, per precision: the vendors' datasheets (no sparsity). Names as
# torch.cuda.get_device_name() gives them; the first key found in the name wins.
DATASHEET: dict[str, dict[str, float]] = {
    "H200": {"bf16": 989.4, "fp16": 989.4, "fp32": 66.9},
    "H100 PCIe": {"bf16": 756.0, "fp16": 756.0, "fp32": 51.2},
    "H100 NVL": {"bf16": 835.0, "fp16": 835.0, "fp32": 60.0},
    "H100": {"bf16": 989.4, "fp16": 989.4, "fp32": 66.9},
    "A100": {"bf16": 312.0, "fp16": 312.0, "fp32": 19.5},
    "L40S": {"bf16": 362.1, "fp16": 362.1, "fp32": 91.6},
    "L4": {"bf16": 121.0, "fp16": 121.0, "fp32": 30.3},
    "A10": {"bf16": 125.0, "fp16": 125.0, "fp32": 31.2},
    "V100-PCIE": {"fp16": 112.0, "fp32": 14.0},
    "V100": {"fp16": 125.0, "fp32": 15.7},
    "T4": {"fp16": 65.0, "fp32": 8.1},
}


@dataclass(frozen=True)
class Peak:
    flops: float  # a second, one process's device
    source: str  # where the figure comes from, for the record


def datasheet_peak(device_name: str, precision: str) -> Peak | None:
    """The datasheet's dense peak of a GPU in `precision` (bf16 on a GPU without it: none)."""
    for key, peaks in DATASHEET.items():
        if key in device_name and precision in peaks:
            return Peak(peaks[precision] * 1e12, f"datasheet: {key} {precision} dense")
    return None


def measured_cpu_peak(seconds: float = 0.1, size: int = 512) -> Peak:
    """float32 matrix products on this process's torch threads, for about `seconds`."""
    import torch

    a, b = torch.randn(size, size), torch.randn(size, size)
    torch.mm(a, b)  # warm up the kernel
    products, start = 0, time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds:
        torch.mm(a, b)
        products += 1
    flops = 2 * size**3 * products / elapsed
    return Peak(flops, f"measured: fp32 matmul on {torch.get_num_threads()} CPU thread(s)")


def peak_flops(precision: str) -> Peak | None:
    """This process's device peak: the GPU's datasheet, or the CPU measured; None for a GPU
    the datasheet table does not name."""
    import torch

    if torch.cuda.is_available():
        return datasheet_peak(torch.cuda.get_device_name(), precision)
    return measured_cpu_peak()


def _weights(module: Any) -> tuple[int, int]:
    """(trained, frozen) weights of `module` outside its embedding tables."""
    import torch

    tables = {
        id(p) for m in module.modules() if isinstance(m, torch.nn.Embedding) for p in m.parameters()
    }
    trained = frozen = 0
    for p in module.parameters():
        if id(p) in tables:
            continue
        if p.requires_grad:
            trained += p.numel()
        else:
            frozen += p.numel()
    return trained, frozen


def _per_token(trained: int, frozen: int) -> float:
    """A token's training FLOPs over these weights: forward 2 each, backward 4 (trained) or 2."""
    return 6 * trained + 4 * frozen


def training_flops(
    model: Any, lengths: Sequence[int], target_lengths: Sequence[int] | None = None
) -> float:
    """The FLOPs one epoch over sequences of `lengths` real tokens needs (an encoder-decoder:
    `lengths` the sources, `target_lengths` the targets)."""
    config = getattr(model, "config", None)
    tokens = sum(lengths)
    if getattr(config, "is_encoder_decoder", False) and target_lengths is not None:
        base = model.get_base_model() if hasattr(model, "get_base_model") else model
        encoder = _per_token(*_weights(base.get_encoder()))
        decoder = _per_token(*_weights(base.get_decoder()))
        return encoder * tokens + decoder * sum(target_lengths)
    flops = _per_token(*_weights(model)) * tokens
    layers = getattr(config, "num_hidden_layers", None) or getattr(config, "n_layer", 0)
    width = getattr(config, "hidden_size", None) or getattr(config, "n_embd", 0)
    # attention scores and their weighted sum: 4 x width x length per token and layer, forward;
    # backward twice that (no weights of their own)
    flops += 3 * 4 * layers * width * sum(n * n for n in lengths)
    return float(flops)


def utilisation(flops: float, seconds: float, peak: Peak | None, processes: int) -> float | None:
    """MFU: `flops` done in `seconds` over the peak of `processes` devices like this one."""
    if peak is None or seconds <= 0:
        return None
    return flops / seconds / (peak.flops * processes)
