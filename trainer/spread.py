"""Where a model's weights go when it predicts on GPUs: spread over the node's GPUs, and in how
many bits. The endpoint (serving/scoring.py) and the evaluation job (trainer/evaluate.py) load
their models by it, so the evaluation's answers are made as the endpoint makes them.

- `device_map` auto (the default): with more than one GPU visible, transformers'
  `device_map="auto"` (accelerate's placement by free memory, layer by layer) spreads the model
  over them: a 70B model's 141 GB of bf16 weights load on 8 x 80 GB, where one GPU holds 80.
  With one GPU, or `single`, the model goes whole onto the first GPU, as before.
- `load_in_4bit`: the weights load quantized to 4 bits (bitsandbytes NF4, computed in the
  placement's dtype), a quarter of bf16's memory; the answers differ slightly from bf16's.
  bitsandbytes is not in tunegate's environments: asked for where it is not installed, loading
  is refused with a ValueError saying so (and the config refuses it for tunegate's own
  environments before anything is submitted: platforms/azureml/config.py).

On a CPU nothing changes: the model loads whole, in float32.

The endpoint's settings reach the scoring script as `TUNEGATE_DEVICE_MAP` and
`TUNEGATE_LOAD_IN_4BIT` (platforms/azureml/online_entities.py), the evaluation job's as its
`--device-map` and `--load-in-4bit` flags.
"""

from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    import torch

DEVICE_MAP_ENV = "TUNEGATE_DEVICE_MAP"
LOAD_IN_4BIT_ENV = "TUNEGATE_LOAD_IN_4BIT"
DeviceMap = Literal["auto", "single"]
DEVICE_MAPS: tuple[DeviceMap, ...] = ("auto", "single")


@dataclass(frozen=True)
class Spread:
    """How a model's weights are laid out on a GPU node: spread or not, 4-bit or not."""

    device_map: DeviceMap = "auto"
    load_in_4bit: bool = False

    @classmethod
    def from_env(cls) -> Spread:
        """The endpoint's settings, from the deployment's environment variables."""
        device_map = os.environ.get(DEVICE_MAP_ENV, "auto")
        if device_map not in DEVICE_MAPS:
            raise ValueError(f"{DEVICE_MAP_ENV}={device_map!r}: use {' or '.join(DEVICE_MAPS)}")
        return cls(device_map, os.environ.get(LOAD_IN_4BIT_ENV, "0") == "1")  # type: ignore[arg-type]

    def load_kwargs(self, device: str, dtype: torch.dtype, gpus: int) -> dict[str, Any]:
        """`from_pretrained`'s extra arguments for loading on `device` (with `gpus` visible) in
        `dtype`: none on a CPU; a device map spreading the model over more than one GPU; a
        4-bit quantization config (on the first GPU, or spread). A ValueError when 4 bits are
        asked for on a CPU or without bitsandbytes."""
        if self.load_in_4bit:
            _check_4bit(device)
        if device == "cpu":
            return {}
        spread = self.device_map == "auto" and gpus > 1
        kwargs: dict[str, Any] = {"device_map": "auto"} if spread else {}
        if self.load_in_4bit:
            from transformers import BitsAndBytesConfig

            kwargs["quantization_config"] = BitsAndBytesConfig(
                load_in_4bit=True, bnb_4bit_quant_type="nf4", bnb_4bit_compute_dtype=dtype
            )
            kwargs.setdefault("device_map", {"": 0})  # quantized where it loads: the first GPU
        return kwargs


def is_placed(model: Any) -> bool:
    """Whether the model was loaded onto its GPUs (by a device map, in 4 bits): weights off the
    CPU already, which moving or casting would undo (and a 4-bit model refuses to be cast).
    Models loaded whole load on the CPU first."""
    return any(p.device.type not in ("cpu", "meta") for p in model.parameters())


def _check_4bit(device: str) -> None:
    if device == "cpu":
        raise ValueError(
            f"{LOAD_IN_4BIT_ENV}=1 (azureml.endpoint.load_in_4bit): no GPU here, and 4-bit "
            "weights (bitsandbytes) load on a GPU; set load_in_4bit false for a CPU"
        )
    if importlib.util.find_spec("bitsandbytes") is None:
        raise ValueError(
            f"{LOAD_IN_4BIT_ENV}=1 (azureml.endpoint.load_in_4bit): bitsandbytes is not "
            "installed in this environment; install it (pip install bitsandbytes) or set "
            "load_in_4bit false"
        )
