"""What each metric module of `trainer/metrics` reports, known without loading one: the names a
config may use and which are better lower; and the shape of a language model's prediction (its
completion and token counts), which perplexity is computed from and the endpoint answers with.

`trainer/taskspec.py` and the scoring code Azure ML's inference server runs read this module;
the metric modules themselves (and `evaluate`, `rouge_score` behind them) load only where
predictions are scored, never in the serving image.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class MetricSpec:
    """What one metric module reports, and which of those are better lower."""

    names: tuple[str, ...]
    lower_is_better: frozenset[str] = frozenset()


ROUGE_TYPES = ("rouge1", "rouge2", "rougeL", "rougeLsum")
METRIC_SPECS: dict[str, MetricSpec] = {
    "squad": MetricSpec(("exact_match", "f1")),
    "rouge": MetricSpec(ROUGE_TYPES),
    "perplexity": MetricSpec(("perplexity", "token_accuracy"), frozenset({"perplexity"})),
}
METRIC_NAMES = tuple(n for m in METRIC_SPECS.values() for n in m.names)  # every metric reported
LOWER_IS_BETTER = frozenset(n for m in METRIC_SPECS.values() for n in m.lower_is_better)


def metric_spec(name: str) -> MetricSpec:
    """The metric module `name` (a `TaskSpec.metric`); ValueError naming an unknown one."""
    if name not in METRIC_SPECS:
        raise ValueError(f"unknown metric {name!r}: expected one of {sorted(METRIC_SPECS)}")
    return METRIC_SPECS[name]


# A language model's prediction of a document is what it made of it: its greedy completion of
# the document's prompt and, over the document's tokens, the summed negative log-likelihood of
# each next token and how many of them were its most likely token. `lm_prediction` writes that
# as the JSON string every prediction is; perplexity reads it back with `lm_counts`.


def lm_prediction(completion: str, nll: float, tokens: int, correct: int) -> str:
    """A language model's prediction of one document, as a JSON string."""
    return json.dumps(
        {"completion": completion, "nll": nll, "tokens": tokens, "correct": correct},
        ensure_ascii=False,
    )


def lm_completion(prediction: str) -> str:
    """The completion of a document's prompt in a language model's prediction."""
    return str(json.loads(prediction)["completion"])


def lm_counts(predictions: Sequence[str]) -> list[tuple[float, int, int]]:
    """(summed negative log-likelihood, tokens, tokens that were the most likely) of each."""
    if not predictions:
        raise ValueError("no predictions to score")
    counts = []
    for prediction in predictions:
        value = json.loads(prediction)
        counts.append((float(value["nll"]), int(value["tokens"]), int(value["correct"])))
    return counts
