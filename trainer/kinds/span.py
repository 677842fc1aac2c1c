"""Extractive QA: a span head over question and context windows (the `span` kind).

Features are the windows of each context with the answer's start and end positions
(trainer/qa.py); a prediction is the best span over a record's windows, decoded from the start
and end logits; the endpoint answers with the span, its score and its character offsets.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from transformers import DataCollatorWithPadding

from trainer.kinds import Lengths, on_model_device
from trainer.qa import Answer, decode_answers, eval_features, train_features

GENERATIVE = False
EXPORTER = "span"  # one graph of the forward pass (serving/runtimes.py)
DEFAULT_DOC_STRIDE = 64


def qa_window(max_length: int, doc_stride: int = DEFAULT_DOC_STRIDE) -> tuple[int, int]:
    """(max_length, stride) of a QA context's windows: the stride at most half a window."""
    return max_length, min(doc_stride, max_length // 2)


def prepare_tokenizer(tokenizer: Any) -> Any:
    return tokenizer


def features(
    tokenizer: Any, records: Sequence[dict[str, Any]], args: Any, model_config: Any = None
) -> dict[str, list[list[int]]]:
    return train_features(tokenizer, list(records), args.max_length, args.doc_stride)


def collator(tokenizer: Any, model: Any) -> Any:
    return DataCollatorWithPadding(tokenizer)


def predict(
    model: Any, tokenizer: Any, records: Sequence[dict[str, Any]], lengths: Lengths, batch_size: int
) -> list[str]:
    window = qa_window(lengths.max_length, lengths.doc_stride)
    return [a.text for a in predict_qa(model, tokenizer, records, *window, batch_size)]


def respond(
    model: Any, tokenizer: Any, records: Sequence[dict[str, Any]], key: str, lengths: Lengths
) -> list[dict[str, Any]]:
    """The span, its score (None: no span found) and offsets, read through the windows that
    evaluation read (the model's trained max_length, the same stride), all in one model call."""
    window = qa_window(lengths.max_length, lengths.doc_stride)
    return [
        {
            key: a.text,
            "score": a.score if math.isfinite(a.score) else None,
            "start": a.start,
            "end": a.start + len(a.text),
        }
        for a in predict_qa(model, tokenizer, records, *window, len(records))
    ]


def predict_qa(
    model: Any,
    tokenizer: Any,
    records: Sequence[dict[str, Any]],
    max_length: int,
    doc_stride: int,
    batch_size: int,
) -> list[Answer]:
    inputs, example_of, offsets = eval_features(tokenizer, records, max_length, doc_stride)
    width = max(len(ids) for ids in inputs["input_ids"])
    starts = np.full((len(example_of), width), -1e9, dtype=np.float32)
    ends = np.full_like(starts, -1e9)
    for i in range(0, len(example_of), batch_size):
        batch = tokenizer.pad(
            {k: v[i : i + batch_size] for k, v in inputs.items()}, return_tensors="pt"
        )
        out = model(**on_model_device(batch, model))
        n = out.start_logits.shape[1]
        starts[i : i + batch_size, :n] = out.start_logits.float().cpu().numpy()
        ends[i : i + batch_size, :n] = out.end_logits.float().cpu().numpy()
    return decode_answers(records, example_of, offsets, starts, ends)
