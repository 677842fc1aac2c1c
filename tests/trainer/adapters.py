"""Two trained adapters compared tensor by tensor: a resumed run against an uninterrupted one."""

from __future__ import annotations

from pathlib import Path

ADAPTER = "adapter_model.safetensors"


def adapter_difference(a: Path, b: Path) -> float:
    """The largest absolute difference between the two folders' adapter weights (the same
    tensors, the same shapes, or an AssertionError)."""
    from safetensors.torch import load_file

    first, second = load_file(a / ADAPTER), load_file(b / ADAPTER)
    assert first.keys() == second.keys(), sorted(first.keys() ^ second.keys())
    assert first, f"no tensors in {a / ADAPTER}"
    worst = 0.0
    for name, tensor in first.items():
        assert tensor.shape == second[name].shape, name
        worst = max(worst, (tensor.float() - second[name].float()).abs().max().item())
    return worst


def assert_same_adapter(a: Path, b: Path, tolerance: float = 1e-5) -> None:
    """The adapters of `a` and `b` are equal within `tolerance`, and they did train (their
    lora_B matrices, zero at the start, are not)."""
    from safetensors.torch import load_file

    difference = adapter_difference(a, b)
    assert difference <= tolerance, f"adapters differ by up to {difference:.3g}"
    trained = [t for name, t in load_file(a / ADAPTER).items() if "lora_B" in name]
    assert trained and any(t.abs().max().item() > 0 for t in trained), "the adapter never trained"
