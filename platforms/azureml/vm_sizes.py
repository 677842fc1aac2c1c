"""Compute that exists: the GPUs of Azure's GPU VM sizes, and the checks of a cluster and its
launch against them (this table when the config loads; the workspace's own list of sizes and
its existing cluster when a job is submitted).

The table (GPUs per VM, GPU model, memory per GPU) is from Microsoft's VM size pages, read
November 2026:
- NC A100 v4: https://learn.microsoft.com/azure/virtual-machines/sizes/gpu-accelerated/nca100v4-series
- ND A100 v4: https://learn.microsoft.com/azure/virtual-machines/sizes/gpu-accelerated/ndasra100v4-series
- NDm A100 v4: https://learn.microsoft.com/azure/virtual-machines/sizes/gpu-accelerated/ndma100v4-series
- NC H100 v5: https://learn.microsoft.com/azure/virtual-machines/sizes/gpu-accelerated/ncadsh100v5-series
- ND H100 v5: https://learn.microsoft.com/azure/virtual-machines/sizes/gpu-accelerated/ndh100v5-series
- NCv3 (V100): https://learn.microsoft.com/azure/virtual-machines/sizes/gpu-accelerated/ncv3-series
- NDv2 (V100): https://learn.microsoft.com/azure/virtual-machines/sizes/gpu-accelerated/ndv2-series
- NC T4 v3: https://learn.microsoft.com/azure/virtual-machines/sizes/gpu-accelerated/ncast4v3-series
- NV A10 v5: https://learn.microsoft.com/azure/virtual-machines/sizes/gpu-accelerated/nvadsa10v5-series
A size not in the table is checked only against the workspace's list (`MLClient.compute.
list_sizes`), which knows every size of its region.

Each GPU's generation is its compute capability, from NVIDIA's CUDA GPUs page
(https://developer.nvidia.com/cuda-gpus): V100 7.0 (Volta), T4 7.5 (Turing), A100 8.0 and A10 8.6
(Ampere), L4 and L40S 8.9 (Ada), H100 and H100 NVL 9.0 (Hopper); bfloat16 is native from 8.0
(`trainer.precision`, the rule `auto` precision follows).

Retired sizes stay in the table, with the date and Microsoft's replacement, so a config naming one
is refused when it loads rather than when the cluster fails to start: all NCv3 sizes (V100) were
retired on 2025-09-30 (https://learn.microsoft.com/azure/virtual-machines/ncv3-retirement and
.../nc24rsv3-retirement, replacements from those pages: NC A100 v4 of the same GPU count). No
retirement of NDv2 (ND40rs_v2) was found on Microsoft's retirement pages (read November 2026);
its V100s are refused by the CUDA 13 environments anyway (platforms/azureml/cuda_lines.py).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date
from typing import Any, Protocol

from trainer.precision import Capability, native_bf16


class ComputeConfig(Protocol):
    """What the checks read of `azureml.compute` (platforms/azureml/config.py imports this
    module, so it is not imported here)."""

    @property
    def name(self) -> str: ...
    @property
    def size(self) -> str: ...
    @property
    def max_nodes(self) -> int: ...
    @property
    def tier(self) -> str: ...


class LaunchConfig(Protocol):
    """What the checks read of `azureml.launch`."""

    @property
    def instance_count(self) -> int: ...
    @property
    def gpus_per_node(self) -> int: ...


@dataclass(frozen=True)
class Gpu:
    """One NVIDIA GPU model: its architecture and compute capability (what CUDA builds target)."""

    name: str
    architecture: str
    capability: Capability

    @property
    def native_bf16(self) -> bool:
        return native_bf16(self.capability)

    def describe(self) -> str:
        major, minor = self.capability
        return f"{self.name} ({self.architecture}, compute capability {major}.{minor})"


GPUS = {
    gpu.name: gpu
    for gpu in (
        Gpu("V100", "Volta", (7, 0)),
        Gpu("T4", "Turing", (7, 5)),
        Gpu("A100", "Ampere", (8, 0)),
        Gpu("A10", "Ampere", (8, 6)),
        Gpu("L4", "Ada Lovelace", (8, 9)),
        Gpu("L40S", "Ada Lovelace", (8, 9)),
        Gpu("H100", "Hopper", (9, 0)),
        Gpu("H100 NVL", "Hopper", (9, 0)),
    )
}


@dataclass(frozen=True)
class GpuSize:
    """One Azure VM size: how many GPUs of which model, the memory of each, and, for a retired
    size, when it was retired and the current size that replaces it."""

    name: str
    gpus: int
    gpu: str
    gpu_memory_gb: int
    retired: date | None = None
    replacement: str | None = None

    @property
    def model(self) -> Gpu:
        return GPUS[self.gpu]

    def describe(self) -> str:
        plural = "s" if self.gpus > 1 else ""
        return f"{self.gpus} GPU{plural} ({self.gpu} {self.gpu_memory_gb} GB)"


_NCV3_RETIRED = date(2025, 9, 30)
_SIZES = (
    # NC A100 v4: A100 80 GB PCIe
    GpuSize("Standard_NC24ads_A100_v4", 1, "A100", 80),
    GpuSize("Standard_NC48ads_A100_v4", 2, "A100", 80),
    GpuSize("Standard_NC96ads_A100_v4", 4, "A100", 80),
    # ND A100 v4 (A100 40 GB SXM) and NDm A100 v4 (A100 80 GB SXM)
    GpuSize("Standard_ND96asr_v4", 8, "A100", 40),
    GpuSize("Standard_ND96amsr_A100_v4", 8, "A100", 80),
    # NC H100 v5 (H100 NVL 94 GB) and ND H100 v5 (H100 80 GB SXM)
    GpuSize("Standard_NC40ads_H100_v5", 1, "H100 NVL", 94),
    GpuSize("Standard_NC80adis_H100_v5", 2, "H100 NVL", 94),
    GpuSize("Standard_ND96isr_H100_v5", 8, "H100", 80),
    # NCv3 (V100 16 GB), retired, and NDv2 (V100 32 GB): replaced by A100s of the same count
    GpuSize("Standard_NC6s_v3", 1, "V100", 16, _NCV3_RETIRED, "Standard_NC24ads_A100_v4"),
    GpuSize("Standard_NC12s_v3", 2, "V100", 16, _NCV3_RETIRED, "Standard_NC48ads_A100_v4"),
    GpuSize("Standard_NC24s_v3", 4, "V100", 16, _NCV3_RETIRED, "Standard_NC96ads_A100_v4"),
    GpuSize("Standard_NC24rs_v3", 4, "V100", 16, _NCV3_RETIRED, "Standard_NC96ads_A100_v4"),
    GpuSize("Standard_ND40rs_v2", 8, "V100", 32, replacement="Standard_ND96amsr_A100_v4"),
    # NC T4 v3 (T4 16 GB)
    GpuSize("Standard_NC4as_T4_v3", 1, "T4", 16),
    GpuSize("Standard_NC8as_T4_v3", 1, "T4", 16),
    GpuSize("Standard_NC16as_T4_v3", 1, "T4", 16),
    GpuSize("Standard_NC64as_T4_v3", 4, "T4", 16),
    # NV A10 v5: whole A10 24 GB GPUs (the smaller NVads A10 v5 sizes hold a fraction of one)
    GpuSize("Standard_NV36ads_A10_v5", 1, "A10", 24),
    GpuSize("Standard_NV72ads_A10_v5", 2, "A10", 24),
)
GPU_SIZES = {size.name.lower(): size for size in _SIZES}


def gpu_size(name: str) -> GpuSize | None:
    """The table's entry for a VM size (any case), None when the table does not know it."""
    return GPU_SIZES.get(name.lower())


def check_current(name: str, today: date | None = None) -> None:
    """A ValueError when `name` is a size Azure has retired, naming the size that replaces it
    (the caller's field validator puts the field's name before it)."""
    size = gpu_size(name)
    if size is None or size.retired is None or size.retired > (today or date.today()):
        return
    replacement = replacement_for(size, size.model.capability)
    raise ValueError(
        f"{name} ({size.describe()}) was retired by Azure on {size.retired.isoformat()}: no "
        f"cluster or deployment can start on it; use {replacement.name} "
        f"({replacement.describe()}), its current replacement"
    )


def replacement_for(size: GpuSize, min_capability: Capability) -> GpuSize:
    """The current size to use instead of `size`: the table's named replacement, else the
    current size of at least `min_capability` nearest to it: as many GPUs (or the fewest more,
    or the most there are), as much memory per GPU where possible."""
    named = gpu_size(size.replacement) if size.replacement else None
    if named is not None and named.model.capability >= min_capability:
        return named
    current = [s for s in _SIZES if s.retired is None and s.model.capability >= min_capability]
    return min(
        current,
        key=lambda s: (
            s.gpus < size.gpus,  # fewer GPUs would refuse the launch: last
            abs(s.gpus - size.gpus),
            s.gpu_memory_gb < size.gpu_memory_gb,
        ),
    )


def check_launch(compute: ComputeConfig, launch: LaunchConfig) -> None:
    """A ValueError naming the field when the launch asks for more than the cluster has: more
    GPUs per node than the size (from the table) has, or more nodes than `max_nodes`."""
    if launch.instance_count > compute.max_nodes:
        raise ValueError(
            f"azureml.launch.instance_count {launch.instance_count} is more than "
            f"azureml.compute.max_nodes {compute.max_nodes}: the job would wait for nodes the "
            "cluster never starts; lower instance_count or raise max_nodes"
        )
    size = gpu_size(compute.size)
    if size is not None:
        _check_gpus(launch.gpus_per_node, compute.size, size.gpus, size.describe())


def _check_gpus(wanted: int, size_name: str, gpus: int, has: str) -> None:
    if wanted > gpus:
        raise ValueError(
            f"azureml.launch.gpus_per_node {wanted} is more than a {size_name} node "
            f"(azureml.compute.size) has: {has}; set gpus_per_node to at most {gpus} or pick a "
            "size with more GPUs"
        )


def check_offered(
    sizes: Iterable[Any], compute: ComputeConfig, launch: LaunchConfig, region: str
) -> None:
    """A ValueError naming the field when the workspace's region does not offer `compute.size`
    for compute clusters, offers it without enough GPUs, or not as low priority when
    `compute.tier` asks for it. `sizes` are `MLClient.compute.list_sizes()`'s `VmSize`s."""
    offered = {str(_field(s, "name")).lower(): s for s in sizes}
    found = offered.get(compute.size.lower())
    if found is None:
        gpu_sizes = sorted(str(_field(s, "name")) for s in offered.values() if _field(s, "gpus"))
        raise ValueError(
            f"azureml.compute.size {compute.size} is not offered for compute clusters in the "
            f"workspace's region {region}; GPU sizes there: {', '.join(gpu_sizes) or 'none'}"
        )
    gpus = int(_field(found, "gpus") or 0)
    if gpus:  # a CPU size runs gpus_per_node processes on its cores
        _check_gpus(launch.gpus_per_node, compute.size, gpus, f"{gpus} GPUs in region {region}")
    if compute.tier == "low_priority" and _field(found, "low_priority_capable") is False:
        raise ValueError(
            f"azureml.compute.tier low_priority: {compute.size} is not offered as low priority in "
            f"region {region}; set tier dedicated"
        )


def check_existing(found: Any, compute: ComputeConfig, launch: LaunchConfig) -> None:
    """A ValueError naming the field when the workspace's cluster of this name is not the one
    configured: one cluster name has one size and one tier (two scenarios sharing a name with
    different tiers would run on whichever created it), and enough nodes for the launch."""
    size = str(getattr(found, "size", "") or "")
    tier = str(getattr(found, "tier", "") or "").lower().replace(" ", "_")
    max_nodes = getattr(found, "max_instances", None)
    if size and size.lower() != compute.size.lower():
        raise ValueError(
            f"azureml.compute.size {compute.size}: cluster {compute.name} exists in the workspace "
            f"with size {size}; use its size, or another azureml.compute.name"
        )
    if tier and tier != compute.tier:
        raise ValueError(
            f"azureml.compute.tier {compute.tier}: cluster {compute.name} exists in the workspace "
            f"as {tier}; one cluster name has one tier: set tier {tier}, or another "
            "azureml.compute.name"
        )
    if isinstance(max_nodes, int) and launch.instance_count > max_nodes:
        raise ValueError(
            f"azureml.launch.instance_count {launch.instance_count} is more than the "
            f"{max_nodes} nodes cluster {compute.name} scales to in the workspace; lower "
            "instance_count or raise the cluster's max nodes"
        )


def _field(size: Any, name: str) -> Any:
    """A `VmSize` field: the SDK copies the service's fields in as attributes under the
    service's names (`lowPriorityCapable`), leaving its own (`low_priority_capable`) None."""
    value = getattr(size, name, None)
    if value is None:
        head, *rest = name.split("_")
        value = getattr(size, head + "".join(part.title() for part in rest), None)
    return value
