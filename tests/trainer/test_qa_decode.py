"""QA windows and span decoding with the packaged tokenizer."""

from __future__ import annotations

import numpy as np

from trainer.args import PACKAGED_MODEL
from trainer.modeling import load_tokenizer
from trainer.qa import decode_answers, eval_features, train_features

CONTEXT = (
    " ".join(f"Sentence {i} is filler text about routers." for i in range(40))
    + " The replacement shipped after 5 days. "
    + " ".join(f"More filler {i}." for i in range(30))
)
RECORD = {
    "id": "x",
    "question": "How long until it shipped?",
    "context": CONTEXT,
    "answers": {"text": ["5 days"], "answer_start": [CONTEXT.index("5 days")]},
}


def test_long_contexts_become_overlapping_windows_with_the_answer_labelled() -> None:
    tokenizer = load_tokenizer(PACKAGED_MODEL)
    feats = train_features(tokenizer, [RECORD], max_length=128, stride=32)
    assert len(feats["input_ids"]) > 2
    labelled = [
        (s, e) for s, e in zip(feats["start_positions"], feats["end_positions"], strict=True) if s
    ]
    assert labelled, "some window holds the answer"
    for i, (s, e) in enumerate(zip(feats["start_positions"], feats["end_positions"], strict=True)):
        if s:
            assert tokenizer.decode(feats["input_ids"][i][s : e + 1]) == "5 days"


def test_decoding_picks_the_best_valid_span_across_windows() -> None:
    tokenizer = load_tokenizer(PACKAGED_MODEL)
    inputs, example_of, offsets = eval_features(tokenizer, [RECORD], max_length=128, stride=32)
    n, length = len(inputs["input_ids"]), max(len(x) for x in inputs["input_ids"])
    start, end = np.full((n, length), -5.0), np.full((n, length), -5.0)
    train = train_features(tokenizer, [RECORD], max_length=128, stride=32)
    window = next(i for i, s in enumerate(train["start_positions"]) if s)
    start[window, train["start_positions"][window]] = 5.0
    end[window, train["end_positions"][window]] = 5.0
    start[0, 0] = end[0, 0] = 9.0  # the [CLS] token is never an answer
    [answer] = decode_answers([RECORD], example_of, offsets, start, end)
    assert answer.text == "5 days" and CONTEXT[answer.start :].startswith("5 days")
