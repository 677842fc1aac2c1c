"""The GPU memory one training process needs: model states from DeepSpeed's own estimators, plus
a rough allowance for activations and the CUDA context.

Model states (weights, gradients, optimizer states) per GPU:
- Trainable parameters (all of them in a full fine-tune, the adapter's with LoRA): DeepSpeed's
  `estimate_zero3_model_states_mem_needs` (ZeRO-3: 18 bytes a parameter over the GPUs, plus
  the largest layer gathered whole, 4 bytes a parameter; with CPU offload of the optimizer, 2
  over the GPUs; of the parameters too, the largest layer only) or
  `estimate_zero2_model_states_mem_needs` (ZeRO-2: 2 bytes a parameter for the 16-bit weights
  plus 18 over the GPUs: 16-bit and fp32 gradients, fp32 weights, Adam's two moments; with the
  optimizer offloaded, the 2 only). ZeRO-1 does not partition the 16-bit gradients: its figure
  is ZeRO-2's plus those, 2 bytes a parameter. DDP holds every state on every GPU: ZeRO-2's
  estimate for one GPU, 20 bytes a parameter. FSDP's FULL_SHARD is counted as ZeRO-3,
  SHARD_GRAD_OP as ZeRO-2. These are mixed-precision figures; an fp32 run needs about as much.
- A frozen base (LoRA) is held as stored, 2 bytes a weight in bf16/fp16 (4 in fp32); QLoRA's
  is 4-bit, half a byte a weight of its Linear layers (the output head and embeddings stay
  16-bit, as bitsandbytes leaves them); ZeRO-3 spreads it over the GPUs (or, offloaded, keeps
  none of it on them).

Activations are a rough allowance, not a measurement: per layer 34 x batch x sequence x hidden
bytes in 16-bit (Korthikanti et al. 2022, "Reducing Activation Recomputation in Large
Transformer Models", without the attention scores' term, which PyTorch's SDPA does not keep);
with gradient checkpointing only each layer's input is kept (batch x sequence x hidden, 16-bit)
and one layer's whole set while it is recomputed; a language model's logits add batch x
sequence x vocabulary, 16-bit and fp32 (the loss). fp32 training doubles the 16-bit terms.
Another `OVERHEAD` covers the CUDA context, NCCL's buffers and the allocator's fragmentation.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Literal

from platforms.azureml.model_shapes import ModelShape

Method = Literal["full", "lora", "qlora"]
GIB = 2**30
OVERHEAD = 2 * GIB
_NF4_BYTES = 0.5  # a 4-bit weight; the quantization constants are a few percent more


@dataclass(frozen=True)
class Sharding:
    """How a training job spreads its model states: ZeRO stage (0: DDP or one process), CPU
    offload of optimizer states and of parameters, and its GPUs."""

    label: str  # what the figures call it: "DeepSpeed ZeRO-3 (deepspeed_zero3)"
    zero_stage: int
    offload_optimizer: bool
    offload_params: bool
    nodes: int
    gpus_per_node: int

    @property
    def gpus(self) -> int:
        return self.nodes * self.gpus_per_node


@dataclass(frozen=True)
class Workload:
    """What one process computes at once: its batch, sequence length and precision."""

    batch_size: int
    seq_len: int
    gradient_checkpointing: bool
    activation_bytes: int  # 2: bf16/fp16, 4: fp32


@dataclass(frozen=True)
class MemoryEstimate:
    """Bytes one GPU needs, by part; with CPU offload, the CPU memory each node needs too
    (DeepSpeed's figure for the offloaded states, with its 1.5 buffer factor; 0 without)."""

    model_states: int
    activations: int
    offloaded_per_node: int = 0
    overhead: int = OVERHEAD

    @property
    def total(self) -> int:
        return self.model_states + self.activations + self.overhead

    def describe(self) -> str:
        cpu = (
            f"; {gib(self.offloaded_per_node)} GiB of CPU memory per node for what is offloaded"
            if self.offloaded_per_node
            else ""
        )
        return (
            f"{gib(self.total)} GiB per GPU (model states {gib(self.model_states)}, "
            f"activations {gib(self.activations)} (rough), CUDA and buffers "
            f"{gib(self.overhead)}){cpu}"
        )


def estimate(
    shape: ModelShape, method: Method, sharding: Sharding, work: Workload
) -> MemoryEstimate:
    """The memory per GPU of training `shape` by `method` under `sharding` with `work`."""
    gpu, cpu = _model_states(shape, method, sharding)
    offloaded = sharding.offload_optimizer or sharding.offload_params
    return MemoryEstimate(gpu, _activations(shape, work), cpu if offloaded else 0)


def _model_states(shape: ModelShape, method: Method, sharding: Sharding) -> tuple[int, int]:
    """(bytes per GPU, bytes per node's CPU) of the model states."""
    if method == "full":
        return _trainable(shape.params, shape.largest_layer_params, sharding)
    if method == "lora":
        frozen = shape.params * shape.weight_bytes
    else:  # qlora: the Linear layers in 4 bits, the rest as stored
        rest = shape.params - shape.linear_params
        frozen = int(shape.linear_params * _NF4_BYTES) + rest * shape.weight_bytes
    on_cpu = 0
    if sharding.zero_stage == 3 and sharding.offload_params:
        frozen, on_cpu = 0, frozen // sharding.nodes
    elif sharding.zero_stage == 3:
        frozen //= sharding.gpus
    # the adapter's states; under ZeRO-3 with the base's largest layer gathered whole
    gpu, cpu = _trainable(shape.lora_params, shape.largest_layer_params, sharding)
    return frozen + gpu, on_cpu + cpu


def _trainable(params: int, largest_layer: int, sharding: Sharding) -> tuple[int, int]:
    """DeepSpeed's estimate of one GPU's model states for `params` trainable parameters, and
    of the CPU memory per node that goes with it."""
    # DeepSpeed looks for an accelerator as it loads and warns, on a machine without a GPU, that
    # it fell back to the CPU: nothing here runs on one, so a user is not told so
    logging.disable(logging.WARNING)
    try:
        from deepspeed.runtime.zero.stage3 import estimate_zero3_model_states_mem_needs
        from deepspeed.runtime.zero.stage_1_and_2 import estimate_zero2_model_states_mem_needs
    finally:
        logging.disable(logging.NOTSET)

    if sharding.zero_stage == 3:
        cpu, gpu, _ = estimate_zero3_model_states_mem_needs(
            params,
            largest_layer,
            num_gpus_per_node=sharding.gpus_per_node,
            num_nodes=sharding.nodes,
            cpu_offload=sharding.offload_optimizer or sharding.offload_params,
            cpu_offload_params=sharding.offload_params,
        )
    elif sharding.zero_stage in (1, 2):
        cpu, gpu = estimate_zero2_model_states_mem_needs(
            params,
            num_gpus_per_node=sharding.gpus_per_node,
            num_nodes=sharding.nodes,
            cpu_offload=sharding.offload_optimizer,
        )
        if sharding.zero_stage == 1:
            gpu += 2 * params  # ZeRO-1 keeps the 16-bit gradients whole
    else:
        cpu, gpu = estimate_zero2_model_states_mem_needs(params, 1, 1, cpu_offload=False)
    return int(gpu), int(cpu)


def _activations(shape: ModelShape, work: Workload) -> int:
    tokens = work.batch_size * work.seq_len
    scale = work.activation_bytes / 2  # the 34 bytes are 16-bit ones
    one_layer = int(34 * tokens * shape.hidden * scale)
    if work.gradient_checkpointing:
        kept = tokens * shape.hidden * work.activation_bytes * shape.layers + one_layer
    else:
        kept = one_layer * shape.layers
    logits = tokens * shape.logits * (work.activation_bytes + 4)
    return kept + logits


def gib(size: int) -> str:
    """`size` bytes in GiB, one decimal, as the figures print it."""
    return f"{size / GIB:,.1f}"
