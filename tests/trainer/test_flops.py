"""Model FLOPs utilisation's parts (trainer/flops.py): the FLOPs a model needs for its real tokens,
and the peak they are set against."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from peft import LoraConfig, get_peft_model
from transformers import AutoModelForQuestionAnswering

from tests.trainer.tiny import tiny_model
from trainer.flops import datasheet_peak, measured_cpu_peak, training_flops, utilisation


@pytest.fixture(scope="module")
def bert_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tiny_model(tmp_path_factory.mktemp("bert"), "bert")


def _weights(model) -> int:
    """Every weight outside the embedding tables (a table lookup multiplies nothing)."""
    modules = [m for m in model.modules() if not isinstance(m, torch.nn.Embedding)]
    return sum(p.numel() for m in modules for p in m.parameters(recurse=False))


def test_a_token_costs_six_flops_per_trained_weight_and_padding_costs_nothing(
    bert_dir: Path,
) -> None:
    bert = AutoModelForQuestionAnswering.from_pretrained(bert_dir)
    layers, width = bert.config.num_hidden_layers, bert.config.hidden_size
    attention = 3 * 4 * layers * width * (10 * 10 + 30 * 30)
    assert training_flops(bert, [10, 30]) == 6 * _weights(bert) * 40 + attention
    # the same sequences padded to 64 are not the same model FLOPs: only real tokens count
    assert training_flops(bert, [10, 30]) < training_flops(bert, [64, 64])


def test_a_frozen_weight_costs_four_flops_a_token_and_an_adapter_s_six(bert_dir: Path) -> None:
    bert = AutoModelForQuestionAnswering.from_pretrained(bert_dir)
    full, weights = training_flops(bert, [32]), _weights(bert)
    lora = get_peft_model(bert, LoraConfig(r=4, target_modules=["query", "value"]))
    adapter = sum(p.numel() for p in lora.parameters() if p.requires_grad)
    assert adapter > 0
    assert training_flops(lora, [32]) == full - 2 * weights * 32 + 6 * adapter * 32


def test_the_peak_is_the_datasheet_s_on_a_gpu_and_measured_on_a_cpu() -> None:
    h200 = datasheet_peak("NVIDIA H200", "bf16")
    assert h200 is not None and h200.flops == pytest.approx(989.4e12)
    assert datasheet_peak("NVIDIA L40S", "bf16").flops > datasheet_peak("NVIDIA L4", "bf16").flops
    assert datasheet_peak("Tesla V100-PCIE-16GB", "fp16").flops == pytest.approx(112e12)
    assert datasheet_peak("Tesla V100-SXM2-16GB", "bf16") is None  # no bf16 in hardware
    assert datasheet_peak("Some Future GPU", "bf16") is None
    cpu = measured_cpu_peak(seconds=0.05, size=128)
    assert cpu.flops > 1e8 and "CPU thread" in cpu.source
    assert utilisation(cpu.flops, 1.0, cpu, 2) == pytest.approx(0.5)
    assert utilisation(1.0, 1.0, None, 1) is None
