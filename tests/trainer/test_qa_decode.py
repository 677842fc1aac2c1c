"""QA windows and span decoding with the packaged tokenizer."""

from __future__ import annotations

import numpy as np

from trainer.args import PACKAGED_MODEL
from trainer.metrics import SQUAD_MODULE, load_metric
from trainer.metrics.scores import per_example_f1
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


def test_unanswerable_questions_train_towards_cls_and_score_as_squad_v2() -> None:
    """No answers: every window labelled (0, 0); decoding still picks a span, which the SQuAD
    metric scores as wrong, while an empty prediction would be right."""
    unanswerable = {
        **RECORD,
        "id": "y",
        "question": "Who signed for the parcel?",
        "answers": {"text": [], "answer_start": []},
    }
    records = [RECORD, unanswerable]
    tokenizer = load_tokenizer(PACKAGED_MODEL)
    train = train_features(tokenizer, records, max_length=128, stride=32)
    inputs, example_of, offsets = eval_features(tokenizer, records, max_length=128, stride=32)
    labels = list(zip(train["start_positions"], train["end_positions"], strict=True))
    assert all(label == (0, 0) for label, ex in zip(labels, example_of, strict=True) if ex == 1)
    assert any(label != (0, 0) for label, ex in zip(labels, example_of, strict=True) if ex == 0)

    n, length = len(inputs["input_ids"]), max(len(x) for x in inputs["input_ids"])
    start, end = np.full((n, length), -5.0), np.full((n, length), -5.0)
    for window, (s, e) in enumerate(labels):
        start[window, s] = end[window, e] = 5.0  # a model that learnt the labels
    predictions = [a.text for a in decode_answers(records, example_of, offsets, start, end)]
    references = [r["answers"]["text"] for r in records]
    assert predictions[0] == "5 days" and predictions[1]  # never "no answer"

    squad = load_metric(SQUAD_MODULE)
    assert squad.compute(predictions=predictions, references=references) == {
        "exact_match": 50.0,
        "f1": 50.0,
    }
    assert squad.compute(predictions=["5 days", ""], references=references)["exact_match"] == 100
    assert per_example_f1(["5 days", " "], references) == [100.0, 100.0]
