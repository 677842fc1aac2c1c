"""Extractive QA: features with overlapping windows, and answers decoded from start/end logits.

transformers 5 has no question-answering pipeline, so decoding is done here: each example's
windows (features) are scanned for the best valid span (start <= end, both inside the context,
at most `max_answer_tokens` long) and the span is mapped back to context characters through the
tokenizer's offset mapping. A span is always chosen, never "no answer" (the [CLS] token is not
a span), as Hugging Face's run_qa decodes without `version_2_with_negative`: an unanswerable
question is trained towards [CLS], but its prediction is some span and scores as wrong.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Answer:
    text: str
    start: int  # character offset in the context
    score: float  # start logit + end logit of the chosen span


def train_features(
    tokenizer: Any, records: Sequence[dict[str, Any]], max_length: int, stride: int
) -> dict[str, list[Any]]:
    """Tokenised windows with start/end token positions (0, 0: no answer in the window)."""
    enc = _encode(tokenizer, records, max_length, stride)
    starts, ends = [], []
    for i, offsets in enumerate(enc["offset_mapping"]):
        record = records[enc["overflow_to_sample_mapping"][i]]
        start, end = _answer_tokens(record["answers"], offsets, enc.sequence_ids(i))
        starts.append(start)
        ends.append(end)
    return {
        "input_ids": enc["input_ids"],
        "attention_mask": enc["attention_mask"],
        **({"token_type_ids": enc["token_type_ids"]} if "token_type_ids" in enc else {}),
        "start_positions": starts,
        "end_positions": ends,
    }


def _answer_tokens(
    answers: dict[str, list[Any]],
    offsets: Sequence[tuple[int, int]],
    sequence_ids: list[int | None],
) -> tuple[int, int]:
    """The first answer's start and end tokens in one window.

    (0, 0), the first token ([CLS]), when the window does not hold the answer, and in every window
    of an unanswerable question (no answers), as Hugging Face's run_qa labels SQuAD v2's.
    """
    if not answers["text"]:
        return 0, 0
    answer_start = answers["answer_start"][0]
    answer_end = answer_start + len(answers["text"][0])
    first = sequence_ids.index(1)
    last = len(sequence_ids) - 1 - sequence_ids[::-1].index(1)
    if offsets[first][0] > answer_start or offsets[last][1] < answer_end:
        return 0, 0
    start_token = first
    while start_token <= last and offsets[start_token][0] <= answer_start:
        start_token += 1
    end_token = last
    while end_token >= first and offsets[end_token][1] >= answer_end:
        end_token -= 1
    return start_token - 1, end_token + 1


def eval_features(
    tokenizer: Any, records: Sequence[dict[str, Any]], max_length: int, stride: int
) -> tuple[dict[str, list[Any]], list[int], list[list[tuple[int, int] | None]]]:
    """Model inputs, the example index of every window, and context-only offset maps."""
    enc = _encode(tokenizer, records, max_length, stride)
    offsets = []
    for i, mapping in enumerate(enc["offset_mapping"]):
        sequence_ids = enc.sequence_ids(i)
        offsets.append([tuple(o) if sequence_ids[k] == 1 else None for k, o in enumerate(mapping)])
    inputs = {k: enc[k] for k in ("input_ids", "attention_mask", "token_type_ids") if k in enc}
    return inputs, list(enc["overflow_to_sample_mapping"]), offsets


def decode_answers(
    records: Sequence[dict[str, Any]],
    example_of: Sequence[int],
    offsets: Sequence[Sequence[tuple[int, int] | None]],
    start_logits: np.ndarray,
    end_logits: np.ndarray,
    n_best: int = 20,
    max_answer_tokens: int = 30,
) -> list[Answer]:
    """The best answer span of every record across its windows."""
    best: list[Answer | None] = [None] * len(records)
    for feature, example in enumerate(example_of):
        context = records[example]["context"]
        mapping = offsets[feature]
        starts = np.argsort(start_logits[feature])[::-1][:n_best]
        ends = np.argsort(end_logits[feature])[::-1][:n_best]
        for s in starts:
            if s >= len(mapping) or mapping[s] is None:
                continue
            for e in ends:
                if (
                    e >= len(mapping)
                    or mapping[e] is None
                    or e < s
                    or e - s + 1 > max_answer_tokens
                ):
                    continue
                score = float(start_logits[feature][s] + end_logits[feature][e])
                current = best[example]
                if current is None or score > current.score:
                    char_start, char_end = mapping[s][0], mapping[e][1]
                    best[example] = Answer(context[char_start:char_end], char_start, score)
    return [a if a is not None else Answer("", 0, float("-inf")) for a in best]


def _encode(tokenizer: Any, records: Sequence[dict[str, Any]], max_length: int, stride: int) -> Any:
    return tokenizer(
        [r["question"].lstrip() for r in records],
        [r["context"] for r in records],
        truncation="only_second",
        max_length=max_length,
        stride=stride,
        return_overflowing_tokens=True,
        return_offsets_mapping=True,
        padding=False,
    )
