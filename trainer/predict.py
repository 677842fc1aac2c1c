"""Predictions of a model on records: QA spans decoded from logits, generated summaries and replies.

Used by the evaluate stage for the base model, the candidate and the champion alike, so all three
are scored by the same code on the same records.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from trainer.data import chat_text
from trainer.qa import decode_answers, eval_features
from trainer.taskspec import task_spec


@torch.no_grad()
def predict(
    model: Any,
    tokenizer: Any,
    task: str,
    records: Sequence[dict[str, Any]],
    *,
    max_length: int = 256,
    doc_stride: int = 64,
    batch_size: int = 32,
    max_new_tokens: int = 64,
) -> list[str]:
    """One prediction string per record."""
    model.eval()
    kind = task_spec(task).kind
    if kind == "span":
        return [
            a.text
            for a in predict_qa(model, tokenizer, records, max_length, doc_stride, batch_size)
        ]
    prompts = (
        [r["document"] for r in records]
        if kind == "seq2seq"
        else [chat_text({"messages": r["messages"][:-1]}, tokenizer) for r in records]
    )
    outputs: list[str] = []
    for i in range(0, len(prompts), batch_size):
        batch = tokenizer(
            prompts[i : i + batch_size],
            truncation=True,
            max_length=max_length,
            padding=True,
            return_tensors="pt",
        )
        generated = model.generate(**batch, max_new_tokens=max_new_tokens, do_sample=False)
        if kind == "causal":  # a causal model echoes its prompt
            generated = generated[:, batch["input_ids"].shape[1] :]
        outputs += tokenizer.batch_decode(generated, skip_special_tokens=True)
    return [o.strip() for o in outputs]


def predict_qa(
    model: Any,
    tokenizer: Any,
    records: Sequence[dict[str, Any]],
    max_length: int,
    doc_stride: int,
    batch_size: int,
) -> list[Any]:
    inputs, example_of, offsets = eval_features(tokenizer, records, max_length, doc_stride)
    width = max(len(ids) for ids in inputs["input_ids"])
    starts = np.full((len(example_of), width), -1e9, dtype=np.float32)
    ends = np.full_like(starts, -1e9)
    for i in range(0, len(example_of), batch_size):
        batch = tokenizer.pad(
            {k: v[i : i + batch_size] for k, v in inputs.items()}, return_tensors="pt"
        )
        out = model(**batch)
        n = out.start_logits.shape[1]
        starts[i : i + batch_size, :n] = out.start_logits.float().numpy()
        ends[i : i + batch_size, :n] = out.end_logits.float().numpy()
    return decode_answers(records, example_of, offsets, starts, ends)
