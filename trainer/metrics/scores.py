"""SQuAD exact match / F1, ROUGE-1/2/L/Lsum and perplexity as plain functions (the reference
definitions).

EM and F1 normalise case, punctuation, English articles and whitespace, and take the best score
over the reference answers of each question, as the official SQuAD v1.1 script does. A question
with no answer (references empty, or empty once normalised) is scored as the SQuAD v2.0 script
does: against the one reference "", so only an empty prediction is right. Scores are percentages
(0-100), like that script and like Azure ML's QA metrics.
"""

from __future__ import annotations

import math
import re
import string
from collections import Counter
from collections.abc import Sequence

from trainer.metric_specs import ROUGE_TYPES, lm_counts

_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)
_PUNCTUATION = set(string.punctuation)


def normalize_answer(text: str) -> str:
    """Lower case, drop punctuation and articles, collapse whitespace."""
    text = "".join(ch for ch in text.lower() if ch not in _PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


def exact_match(prediction: str, reference: str) -> float:
    return float(normalize_answer(prediction) == normalize_answer(reference))


def token_f1(prediction: str, reference: str) -> float:
    pred, ref = normalize_answer(prediction).split(), normalize_answer(reference).split()
    if not pred or not ref:
        return float(pred == ref)
    common = sum((Counter(pred) & Counter(ref)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(pred), common / len(ref)
    return 2 * precision * recall / (precision + recall)


def squad_scores(
    predictions: Sequence[str], references: Sequence[Sequence[str]]
) -> dict[str, float]:
    """{"exact_match", "f1"} in percent, each the best over a question's reference answers."""
    if len(predictions) != len(references):
        raise ValueError(f"{len(predictions)} predictions but {len(references)} references")
    if not predictions:
        raise ValueError("no predictions to score")
    pairs = list(zip(predictions, map(_gold, references), strict=True))
    em = sum(max(exact_match(p, r) for r in refs) for p, refs in pairs)
    f1 = sum(max(token_f1(p, r) for r in refs) for p, refs in pairs)
    return {"exact_match": 100 * em / len(predictions), "f1": 100 * f1 / len(predictions)}


def per_example_f1(predictions: Sequence[str], references: Sequence[Sequence[str]]) -> list[float]:
    """F1 (0-100) of each prediction: what a paired bootstrap resamples."""
    return [
        100 * max(token_f1(p, r) for r in _gold(refs))
        for p, refs in zip(predictions, references, strict=True)
    ]


def _gold(references: Sequence[str]) -> Sequence[str]:
    """A question's reference answers; [""] when it has none (an unanswerable question), as the
    SQuAD v2.0 script scores them."""
    answers = [r for r in references if normalize_answer(r)]
    return answers or [""]


def rouge_scores(
    predictions: Sequence[str], references: Sequence[str], use_stemmer: bool = True
) -> dict[str, float]:
    """Mean ROUGE F-measures in percent. rougeLsum splits summaries on newlines (no NLTK data)."""
    from rouge_score import rouge_scorer

    if len(predictions) != len(references):
        raise ValueError(f"{len(predictions)} predictions but {len(references)} references")
    if not predictions:
        raise ValueError("no predictions to score")
    scorer = rouge_scorer.RougeScorer(list(ROUGE_TYPES), use_stemmer=use_stemmer)
    totals = dict.fromkeys(ROUGE_TYPES, 0.0)
    for prediction, reference in zip(predictions, references, strict=True):
        for name, score in scorer.score(reference, prediction).items():
            totals[name] += score.fmeasure
    return {name: 100 * total / len(predictions) for name, total in totals.items()}


def per_example_rouge_l(predictions: Sequence[str], references: Sequence[str]) -> list[float]:
    """ROUGE-L (0-100) of each prediction: what a paired bootstrap resamples."""
    return [rouge_scores([p], [r])["rougeL"] for p, r in zip(predictions, references, strict=True)]


# --- language modelling: perplexity and token accuracy (of `trainer.metric_specs.lm_prediction`s)


def perplexity_scores(predictions: Sequence[str]) -> dict[str, float]:
    """{"perplexity", "token_accuracy"}: exp of the mean negative log-likelihood per token over
    every document's tokens (a corpus perplexity, not a mean of documents'), and the percentage
    of tokens that were the model's most likely next token."""
    counts = lm_counts(predictions)
    tokens = sum(n for _, n, _ in counts)
    if tokens == 0:
        raise ValueError("the documents have no tokens to score")
    nll = math.fsum(s for s, _, _ in counts)
    return {
        "perplexity": math.exp(nll / tokens),
        "token_accuracy": 100 * sum(k for _, _, k in counts) / tokens,
    }


def per_example_log_perplexity(predictions: Sequence[str]) -> list[float]:
    """-100 x the log perplexity of each document: higher is better, and a difference of two
    models' values is about their relative perplexity change in percent (what a paired bootstrap
    resamples, in the gate's points)."""
    return [-100 * s / max(n, 1) for s, n, _ in lm_counts(predictions)]
