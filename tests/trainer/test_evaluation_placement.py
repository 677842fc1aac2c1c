"""The evaluation's models are placed as the endpoint places its model and loaded one at a time
(trainer/evaluate.py), and batched generation with left padding answers as one record at a time
does. On a CPU; the GPU's choice is tested by its function (`torch.cuda` says what a GPU node
would say)."""

from __future__ import annotations

import weakref
from pathlib import Path
from typing import Any

import pytest
import torch

from tests.trainer.tiny import chat_record, qa_record
from trainer import evaluate
from trainer.modeling import load_trained, placement
from trainer.predict import predict


@pytest.mark.slow
def test_one_model_at_a_time_loaded_in_the_endpoints_dtype_and_placed_on_the_gpu(
    monkeypatch: pytest.MonkeyPatch, qa_model_dir: Path
) -> None:
    """On a node whose GPU has bfloat16 (an A100), as the endpoint with TUNEGATE_DTYPE auto:
    candidate, base and champion each load in bfloat16 (never a float32 copy first), go to the
    GPU, predict and are gone before the next one loads."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda *a: (8, 0))  # an A100
    assert placement("auto") == ("cuda", torch.bfloat16)  # the endpoint's own choice
    events: list[str] = []
    alive: list[weakref.ref] = []

    def loaded(name: str, model: Any) -> Any:
        others = sum(r() is not None for r in alive)  # models loaded before, still in memory
        events.append(f"load {name} in {next(model.parameters()).dtype} ({others} others)")
        alive.append(weakref.ref(model))
        return model

    def on_device(model: Any, device: str, dtype: torch.dtype) -> Any:
        events.append(f"to {device} {dtype}")  # this machine has no GPU to move it to
        return model

    load_trained, load_base = evaluate.load_trained, evaluate.load_base
    trained_dirs = iter(["candidate", "champion"])

    def spy_trained(folder: Any, **kw: Any) -> Any:
        model, tokenizer, info = load_trained(folder, **kw)
        return loaded(next(trained_dirs), model), tokenizer, info

    monkeypatch.setattr(evaluate, "load_trained", spy_trained)
    monkeypatch.setattr(evaluate, "load_base", lambda *a, **kw: loaded("base", load_base(*a, **kw)))
    monkeypatch.setattr(evaluate, "place", on_device)
    release = evaluate.release_memory  # collects (a GPU is "there"); empty_cache is a no-op

    def spy_release() -> None:
        events.append("release")
        release()

    monkeypatch.setattr(evaluate, "release_memory", spy_release)
    made = evaluate.predict_models([qa_record(1)], qa_model_dir, champion_dir=qa_model_dir)
    assert events == [
        step
        for name in ("candidate", "base", "champion")
        for step in (
            f"load {name} in torch.bfloat16 (0 others)",
            "to cuda torch.bfloat16",
            "release",
        )
    ]
    assert made["champion"] == made["candidate"] and len(made["base"] or []) == 1


def test_batched_generation_is_left_padded_and_answers_as_one_record_at_a_time(
    monkeypatch: pytest.MonkeyPatch, chat_model_dirs: dict[int, Path]
) -> None:
    """The packaged decoder (BERT's absolute positions): prompts of different lengths in one
    batch, padded on the left, generate what each prompt alone generates."""
    records = [chat_record(1), chat_record(2)]
    records[1]["messages"][0]["content"] = "My VPN drops every hour since monday, what can I do?"
    model, tokenizer, _ = load_trained(chat_model_dirs[42])
    generate = type(model).generate
    masks: list[torch.Tensor] = []

    def spy(self: Any, **kw: Any) -> Any:
        masks.append(kw["attention_mask"])
        return generate(self, **kw)

    monkeypatch.setattr(type(model), "generate", spy)
    batched = predict(model, tokenizer, "causal-lm", records, batch_size=2)
    one_by_one = predict(model, tokenizer, "causal-lm", records, batch_size=1)
    assert batched == one_by_one and all(batched)
    assert masks[0].shape[0] == 2  # one batch of both
    assert masks[0][:, -1].tolist() == [1, 1]  # every prompt ends at the right edge
    assert masks[0][0, 0] == 0 and masks[0][1, 0] == 1  # the short one padded on the left
