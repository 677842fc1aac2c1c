"""Predictions of a model on records: QA spans decoded from logits, generated summaries and replies.

Used by the evaluate stage for the base model, the candidate and the champion alike, and by the
endpoint, so all are scored and served by the same code on the same inputs. A trained model's
lengths (its tokenizer's `model_max_length`, its generation config's `max_new_tokens`, both set
by `load_trained` from model_info.json) are the ones it was trained with.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from trainer.data import chat_prompt, documents, task_prefix, truncate_prompt
from trainer.qa import decode_answers, eval_features
from trainer.taskspec import task_spec

DEFAULT_MAX_LENGTH = 256  # a model whose tokenizer claims no usable limit
DEFAULT_NEW_TOKENS = 64
DEFAULT_DOC_STRIDE = 64


def qa_window(max_length: int, doc_stride: int = DEFAULT_DOC_STRIDE) -> tuple[int, int]:
    """(max_length, stride) of a QA context's windows: the stride at most half a window."""
    return max_length, min(doc_stride, max_length // 2)


def lengths(model: Any, tokenizer: Any) -> tuple[int, int]:
    """(max_length, max_new_tokens) of a model: those it was trained with when known."""
    max_length = tokenizer.model_max_length
    if not max_length or max_length > 100_000:  # transformers' "no limit" is 1e30
        max_length = DEFAULT_MAX_LENGTH
    new_tokens = getattr(getattr(model, "generation_config", None), "max_new_tokens", None)
    return int(max_length), int(new_tokens or DEFAULT_NEW_TOKENS)


@torch.no_grad()
def predict(
    model: Any,
    tokenizer: Any,
    task: str,
    records: Sequence[dict[str, Any]],
    *,
    max_length: int | None = None,
    doc_stride: int = DEFAULT_DOC_STRIDE,
    batch_size: int = 32,
    max_new_tokens: int | None = None,
) -> list[str]:
    """One prediction string per record; lengths default to the model's own (`lengths`)."""
    model.eval()
    known_length, known_new = lengths(model, tokenizer)
    max_length = max_length or known_length
    max_new_tokens = max_new_tokens or known_new
    kind = task_spec(task).kind
    if kind == "span":
        return [
            a.text
            for a in predict_qa(
                model, tokenizer, records, *qa_window(max_length, doc_stride), batch_size
            )
        ]
    outputs: list[str] = []
    for i in range(0, len(records), batch_size):
        chunk = records[i : i + batch_size]
        if kind == "seq2seq":
            batch = tokenizer(
                documents(chunk, task_prefix(model.config)),
                truncation=True,
                max_length=max_length,
                padding=True,
                return_tensors="pt",
            )
        else:
            batch = chat_batch(tokenizer, chunk, max_length - max_new_tokens)
        generated = model.generate(**batch, max_new_tokens=max_new_tokens, do_sample=False)
        if kind == "causal":  # a causal model echoes its prompt
            generated = generated[:, batch["input_ids"].shape[1] :]
        outputs += tokenizer.batch_decode(generated, skip_special_tokens=True)
    return [o.strip() for o in outputs]


def chat_batch(
    tokenizer: Any, records: Sequence[dict[str, Any]], budget: int
) -> dict[str, torch.Tensor]:
    """Prompts of chat records (every message but the reference reply), each cut from the left
    to `budget` tokens, padded on the left so every row's next token is generated after its own
    last prompt token."""
    prompts = [
        truncate_prompt(tokenizer, chat_prompt(tokenizer, r["messages"][:-1]), budget)
        for r in records
    ]
    side = tokenizer.padding_side
    tokenizer.padding_side = "left"
    try:
        return tokenizer.pad({"input_ids": prompts}, return_tensors="pt")
    finally:
        tokenizer.padding_side = side


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
