"""Where a model's weights go on a GPU node (trainer/spread.py): spread over its GPUs when it has
several, whole on one otherwise, in 4 bits only where bitsandbytes and a GPU are; nothing changes
on a CPU."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
import torch

from tests.trainer.tiny import qa_record
from trainer.modeling import load_trained
from trainer.predict import predict
from trainer.spread import DEVICE_MAP_ENV, LOAD_IN_4BIT_ENV, Spread, is_placed

NO_BITSANDBYTES = importlib.util.find_spec("bitsandbytes") is None


@pytest.mark.parametrize(
    ("spread", "device", "gpus", "expected"),
    [
        (Spread(), "cpu", 0, {}),  # a CPU: loaded whole, as before
        (Spread(), "cuda", 1, {}),  # one GPU: whole on it, placed after loading, as before
        (Spread(), "cuda", 8, {"device_map": "auto"}),  # a node of 8: spread over them
        (Spread("single"), "cuda", 8, {}),  # asked to stay on one
    ],
)
def test_a_model_is_spread_over_the_gpus_only_when_there_are_several(
    spread: Spread, device: str, gpus: int, expected: dict[str, str]
) -> None:
    assert spread.load_kwargs(device, torch.bfloat16, gpus) == expected


def test_4_bits_on_a_cpu_are_refused_naming_the_setting() -> None:
    with pytest.raises(ValueError, match=r"TUNEGATE_LOAD_IN_4BIT=1 .*no GPU here"):
        Spread(load_in_4bit=True).load_kwargs("cpu", torch.float32, 0)


@pytest.mark.skipif(not NO_BITSANDBYTES, reason="bitsandbytes is installed here")
def test_4_bits_without_bitsandbytes_are_refused_saying_what_to_install() -> None:
    with pytest.raises(ValueError, match=r"bitsandbytes is not installed .*pip install"):
        Spread(load_in_4bit=True).load_kwargs("cuda", torch.bfloat16, 8)


@pytest.mark.skipif(NO_BITSANDBYTES, reason="bitsandbytes is not installed here")
def test_4_bits_with_bitsandbytes_quantize_where_the_model_loads() -> None:
    kwargs = Spread(load_in_4bit=True).load_kwargs("cuda", torch.bfloat16, 1)
    assert kwargs["device_map"] == {"": 0}
    config = kwargs["quantization_config"]
    assert config.load_in_4bit and config.bnb_4bit_compute_dtype == torch.bfloat16


def test_the_endpoints_settings_come_from_its_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert Spread.from_env() == Spread("auto", False)
    monkeypatch.setenv(DEVICE_MAP_ENV, "single")
    monkeypatch.setenv(LOAD_IN_4BIT_ENV, "1")
    assert Spread.from_env() == Spread("single", True)
    monkeypatch.setenv(DEVICE_MAP_ENV, "balanced")
    with pytest.raises(ValueError, match="TUNEGATE_DEVICE_MAP='balanced': use auto or single"):
        Spread.from_env()


def test_a_model_loaded_through_a_device_map_answers_as_one_loaded_whole(
    qa_model_dir: Path,
) -> None:
    """accelerate's dispatch, here onto this machine's CPU (the one device it has): the same
    answers as the model loaded whole, and left where it was loaded."""
    whole, tokenizer, _ = load_trained(qa_model_dir)
    mapped, _, _ = load_trained(qa_model_dir, spread={"device_map": "auto"})
    records = [qa_record(1), qa_record(2)]
    assert predict(mapped, tokenizer, "extractive-qa", records) == predict(
        whole, tokenizer, "extractive-qa", records
    )
    assert not is_placed(mapped)  # on the CPU: nothing to leave alone
