"""Does a training job fit in its GPUs' memory? Decided before it is exported or submitted.

The job's model, method (full fine-tune, LoRA), batch, sequence length and precision come from
its trainer arguments; its ZeRO stage and offload from the accelerate config it launches with
(trainer/configs/*.yaml; the torchrun launcher is DDP); its GPUs from `azureml.compute.size`
(platforms/azureml/vm_sizes.py) and `azureml.launch`. The estimate (platforms/azureml/memory.py)
over the GPU's memory either fits, and its figures are printed, or is refused with a ValueError
naming `azureml.compute.size` and saying what would fit (ZeRO-3, CPU offload, LoRA, QLoRA's
4-bit base, more nodes, a size with more memory per GPU, a smaller batch). A model whose shape
is unknown (platforms/azureml/model_shapes.py) or a size the table does not know gets no
estimate: a warning, never a refusal.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import yaml

from platforms.azureml import vm_sizes
from platforms.azureml.config import AzureMLConfig
from platforms.azureml.known_models import catalog_name
from platforms.azureml.memory import (
    GIB,
    MemoryEstimate,
    Method,
    Sharding,
    Workload,
    estimate,
    gib,
)
from platforms.azureml.model_shapes import ModelShape, model_shape
from trainer.args import TrainArgs, with_task_defaults

ACCELERATE_CONFIGS = Path(__file__).resolve().parents[2] / "trainer" / "configs"
MAX_NODES = 256  # azureml.launch.instance_count's bound
_METHODS = {"full": "full fine-tuning", "lora": "LoRA", "qlora": "QLoRA (4-bit base)"}


@dataclass(frozen=True)
class MemoryCheck:
    """The check's answer for a job that fits, or could not be estimated: its estimate (None
    when there is none) and the line that says so."""

    estimate: MemoryEstimate | None
    message: str


def check_memory(trainer_args: dict[str, Any], config: AzureMLConfig) -> MemoryCheck:
    """The memory per GPU of the training job with `trainer_args` (as a `train:` config passes
    them: the trainer's defaults fill the rest) on `config`'s cluster; a ValueError naming
    azureml.compute.size, with what would fit, when it needs more than a GPU there has."""
    args = with_task_defaults({**trainer_args, "data_dir": trainer_args.get("data_dir") or "-"})
    size = vm_sizes.gpu_size(config.compute.size)
    if size is None:
        return MemoryCheck(
            None,
            f"no memory estimate: azureml.compute.size {config.compute.size} is not in the "
            "table of GPU sizes (platforms/azureml/vm_sizes.py)",
        )
    shape = model_shape(args.model, args.task, args.lora_r, args.lora_target_modules)
    if shape is None:
        return MemoryCheck(
            None,
            f"no memory estimate: train.model {args.model} is not a folder here nor a known "
            "architecture (platforms/azureml/known_models.py); whether it fits a "
            f"{size.gpu} {size.gpu_memory_gb} GB is not checked",
        )
    if args.lora and not shape.lora_params and not args.lora_target_modules:
        raise ValueError(
            f"train.args.lora_target_modules: {args.model} has no default LoRA target modules "
            "(trainer.args.LORA_TARGETS): set them, or train.lora false"
        )
    if args.lora and not shape.lora_params:  # named, but no layer here: the trainer will say
        return MemoryCheck(
            None,
            f"no memory estimate: train.args.lora_target_modules {args.lora_target_modules} "
            f"match no layer of {args.model} as known here; whether it fits a {size.gpu} "
            f"{size.gpu_memory_gb} GB is not checked",
        )
    sharding = sharding_of(config)
    method: Method = "lora" if args.lora else "full"
    work = workload_of(args)
    found = estimate(shape, method, sharding, work)
    available = size.gpu_memory_gb * GIB
    figures = (
        f"{_METHODS[method]} of {catalog_name(args.model)} ({shape.params / 1e9:.2f}B parameters"
        f"{_adapter(shape, method)}, {shape.source}) under {sharding.label} on {sharding.nodes} "
        f"x {sharding.gpus_per_node} {size.gpu}: {found.describe()}"
    )
    if found.total <= available:
        return MemoryCheck(
            found, f"memory: {figures}; each {size.gpu} has {size.gpu_memory_gb} GiB"
        )
    fits = _what_fits(shape, method, sharding, work, size)
    raise ValueError(
        f"azureml.compute.size {config.compute.size}: {figures}, more than the "
        f"{size.gpu_memory_gb} GiB of each {size.gpu}. "
        + (
            "Would fit: " + "; ".join(fits)
            if fits
            else "Nothing tried fits (ZeRO-3 with offload, LoRA, QLoRA, up to "
            f"{MAX_NODES} nodes, every size in the table): pick a smaller model"
        )
    )


def sharding_of(config: AzureMLConfig) -> Sharding:
    """The job's ZeRO stage and offload, from its accelerate config's file (torchrun: DDP)."""
    launch = config.launch
    gpus = {"nodes": launch.instance_count, "gpus_per_node": launch.gpus_per_node}
    if launch.launcher == "torchrun":
        return Sharding("DDP (torchrun)", 0, False, False, **gpus)
    name = launch.accelerate_config
    path = ACCELERATE_CONFIGS / f"{name}.yaml"
    if not path.is_file():
        known = sorted(p.stem for p in ACCELERATE_CONFIGS.glob("*.yaml"))
        raise ValueError(
            f"azureml.launch.accelerate_config {name!r}: no trainer/configs/{name}.yaml; use one "
            f"of {', '.join(known)}"
        )
    accelerate = yaml.safe_load(path.read_text()) or {}
    kind = accelerate.get("distributed_type", "NO")
    if kind == "DEEPSPEED":
        ds = accelerate.get("deepspeed_config") or {}
        stage = int(ds.get("zero_stage", 0))
        optimizer = ds.get("offload_optimizer_device", "none") not in (None, "none")
        params = ds.get("offload_param_device", "none") not in (None, "none")
        label = f"DeepSpeed ZeRO-{stage}{' with CPU offload' if optimizer else ''} ({name})"
        return Sharding(label, stage, optimizer, params, **gpus)
    if kind == "FSDP":
        fsdp = accelerate.get("fsdp_config") or {}
        strategy = str(fsdp.get("fsdp_sharding_strategy", "FULL_SHARD"))
        stage = {"FULL_SHARD": 3, "HYBRID_SHARD": 3, "SHARD_GRAD_OP": 2}.get(strategy, 0)
        offload = bool(fsdp.get("fsdp_offload_params", False))
        return Sharding(f"FSDP {strategy} ({name})", stage, offload, offload, **gpus)
    return Sharding(f"DDP ({name})", 0, False, False, **gpus)


def workload_of(args: TrainArgs) -> Workload:
    """One process's batch, sequence length, checkpointing and activation precision."""
    return Workload(
        batch_size=args.batch_size,
        seq_len=args.max_length,
        gradient_checkpointing=args.gradient_checkpointing,
        activation_bytes=4 if args.precision == "fp32" else 2,
    )


def _adapter(shape: ModelShape, method: Method) -> str:
    if method == "full":
        return ""
    return f", adapter {shape.lora_params / 1e6:.1f}M"


def _what_fits(
    shape: ModelShape,
    method: Method,
    sharding: Sharding,
    work: Workload,
    size: vm_sizes.GpuSize,
) -> list[str]:
    """Each change of one or two fields that would fit, with its figure."""
    available = size.gpu_memory_gb * GIB
    zero3 = replace(sharding, label="ZeRO-3", zero_stage=3)
    offload = replace(zero3, offload_optimizer=True, offload_params=True)
    tries: list[tuple[str, Callable[[], MemoryEstimate]]] = []
    if sharding.zero_stage < 3:
        tries.append(
            (
                "azureml.launch.accelerate_config deepspeed_zero3 (launcher accelerate)",
                lambda: estimate(shape, method, zero3, work),
            )
        )
    if not sharding.offload_params:
        tries.append(
            (
                "azureml.launch.accelerate_config deepspeed_zero3_offload (CPU offload: slower)",
                lambda: estimate(shape, method, offload, work),
            )
        )
    if method == "full" and shape.lora_params:
        tries.append(("train.lora true", lambda: estimate(shape, "lora", sharding, work)))
        tries.append(
            ("train.lora true with deepspeed_zero3", lambda: estimate(shape, "lora", zero3, work))
        )
    if method != "qlora" and shape.lora_params:
        tries.append(
            (
                "QLoRA, a 4-bit base (not in tunegate's trainer yet)",
                lambda: estimate(shape, "qlora", sharding, work),
            )
        )
    if work.gradient_checkpointing is False:
        checkpointed = replace(work, gradient_checkpointing=True)
        tries.append(
            (
                "train.args.gradient_checkpointing true",
                lambda: estimate(shape, method, sharding, checkpointed),
            )
        )
    if work.batch_size > 1:
        one = replace(work, batch_size=1)
        tries.append(
            (
                "train.batch_size 1 (train.args.gradient_accumulation_steps keeps the batch)",
                lambda: estimate(shape, method, sharding, one),
            )
        )
    fits = [f"{what} ({_needs(e)})" for what, run in tries if (e := run()).total <= available]
    spread = sharding if sharding.zero_stage == 3 else zero3
    nodes = _nodes_that_fit(shape, method, spread, work, available)
    if nodes is not None and nodes != sharding.nodes:
        stage = "" if sharding.zero_stage == 3 else " with deepspeed_zero3"
        fits.append(f"azureml.launch.instance_count {nodes} (and azureml.compute.max_nodes){stage}")
    bigger = _bigger_size(shape, method, sharding, work, size)
    if bigger:
        fits.append(bigger)
    return fits


def _needs(found: MemoryEstimate) -> str:
    cpu = found.offloaded_per_node
    return f"{gib(found.total)} GiB per GPU" + (f", {gib(cpu)} GiB CPU per node" if cpu else "")


def _nodes_that_fit(
    shape: ModelShape, method: Method, sharding: Sharding, work: Workload, available: int
) -> int | None:
    """The fewest nodes (of this many GPUs each) that `sharding` fits on, if any does."""
    for nodes in range(sharding.nodes, MAX_NODES + 1):
        if estimate(shape, method, replace(sharding, nodes=nodes), work).total <= available:
            return nodes
    return None


def _bigger_size(
    shape: ModelShape,
    method: Method,
    sharding: Sharding,
    work: Workload,
    size: vm_sizes.GpuSize,
) -> str | None:
    """The current size of the table with more memory per GPU (the least that fits, then the
    fewest GPUs) that fits this launch with all its GPUs per node."""
    bigger = sorted(
        (s for s in vm_sizes.GPU_SIZES.values() if s.retired is None),
        key=lambda s: (s.gpu_memory_gb, s.gpus),
    )
    for other in bigger:
        if other.gpu_memory_gb <= size.gpu_memory_gb:
            continue
        spread = replace(sharding, gpus_per_node=other.gpus)
        found = estimate(shape, method, spread, work)
        if found.total <= other.gpu_memory_gb * GIB:
            return (
                f"azureml.compute.size {other.name} ({other.describe()}) with "
                f"azureml.launch.gpus_per_node {other.gpus} ({_needs(found)})"
            )
    return None
