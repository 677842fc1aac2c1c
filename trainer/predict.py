"""Predictions of a model on records: QA spans decoded from logits, generated summaries and replies,
a language model's scores and completions of documents.

Used by the evaluate stage for the base model, the candidate and the champion alike, and by the
endpoint, so all are scored and served by the same code on the same inputs. How a task's records
are predicted is its kind module's (trainer/kinds/). A trained model's lengths (its tokenizer's
`model_max_length`, its generation config's `max_new_tokens`, both set by `load_trained` from
model_info.json) are the ones it was trained with.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from trainer.kinds import Lengths
from trainer.kinds.span import DEFAULT_DOC_STRIDE
from trainer.taskspec import task_spec

DEFAULT_MAX_LENGTH = 256  # a model whose tokenizer claims no usable limit
DEFAULT_NEW_TOKENS = 64


def lengths(model: Any, tokenizer: Any) -> tuple[int, int]:
    """(max_length, max_new_tokens) of a model: those it was trained with when known."""
    max_length = tokenizer.model_max_length
    if not max_length or max_length > 100_000:  # transformers' "no limit" is 1e30
        max_length = DEFAULT_MAX_LENGTH
    new_tokens = getattr(getattr(model, "generation_config", None), "max_new_tokens", None)
    return int(max_length), int(new_tokens or DEFAULT_NEW_TOKENS)


def model_lengths(
    model: Any,
    tokenizer: Any,
    max_length: int | None = None,
    max_new_tokens: int | None = None,
    doc_stride: int = DEFAULT_DOC_STRIDE,
) -> Lengths:
    """The lengths given, the model's own (`lengths`) for those not given."""
    known_length, known_new = lengths(model, tokenizer)
    return Lengths(max_length or known_length, max_new_tokens or known_new, doc_stride)


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
    sizes = model_lengths(model, tokenizer, max_length, max_new_tokens, doc_stride)
    return task_spec(task).code.predict(model, tokenizer, records, sizes, batch_size)
