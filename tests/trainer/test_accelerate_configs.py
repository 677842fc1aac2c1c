"""The accelerate launcher configs load with accelerate's own loader and fit the trainer's args."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from accelerate.commands.config.config_args import ClusterConfig

from trainer.args import TrainArgs

CONFIGS = sorted((Path(__file__).resolve().parents[2] / "trainer" / "configs").glob("*.yaml"))


def test_every_launcher_kind_is_there() -> None:
    names = {c.stem for c in CONFIGS}
    assert {
        "single",
        "ddp",
        "fsdp",
        "deepspeed_zero1",
        "deepspeed_zero2",
        "deepspeed_zero3",
        "deepspeed_zero2_offload",
        "deepspeed_zero3_offload",
    } <= names


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.stem)
def test_config_loads_and_is_consistent(path: Path) -> None:
    config = ClusterConfig.from_yaml_file(str(path))
    raw = yaml.safe_load(path.read_text())
    defaults = TrainArgs()
    assert config.mixed_precision in ("no", "bf16", "fp16")
    if config.distributed_type == "DEEPSPEED":
        ds = config.deepspeed_config
        # The HF Trainer refuses a DeepSpeed accumulation that differs from its own argument.
        assert ds["gradient_accumulation_steps"] == defaults.gradient_accumulation_steps
        if ds["zero_stage"] == 3:
            assert ds["zero3_save_16bit_model"] is True, "LoRA adapters would be saved empty"
            assert ds["zero3_init_flag"] is True
        assert f"zero{ds['zero_stage']}" in path.stem
        assert ("offload" in path.stem) == (ds["offload_optimizer_device"] == "cpu")
    elif config.distributed_type == "FSDP":
        fsdp = raw["fsdp_config"]
        assert fsdp["fsdp_state_dict_type"] == "SHARDED_STATE_DICT"  # full only at the final save
        assert fsdp["fsdp_use_orig_params"] is False  # peft's wrap policy keeps the memory saving
        assert fsdp["fsdp_cpu_ram_efficient_loading"] and fsdp["fsdp_sync_module_states"]
    else:
        assert config.distributed_type in ("NO", "MULTI_GPU")
