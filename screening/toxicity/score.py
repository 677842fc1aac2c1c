"""A text's toxicity on the local backend: the worst of its prose sentences (`local_toxicity`,
`term_scores`), each scored by the abusive terms, the shipped classifier, a classifier of the
user's own and alt-profanity-check's model, with why (`Toxicity`)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

from screening.code_text import prose
from screening.model_folder import sentence_classifier
from screening.toxicity.classifier import abuse_classifier
from screening.toxicity.terms import abusive_terms, judged_innocent

MODEL_CEILING = 0.999  # the model alone never reaches 1.0, the score of an abusive term
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")


def sentences(text: str) -> list[str]:
    """The prose sentences of a text (its code left out)."""
    return [s for s in _SENTENCE_END.split(prose(text)) if s.strip()]


def term_scores(texts: Sequence[str], threats: bool = True) -> list[float]:
    """1.0 for each text with an abusive term in a prose sentence, else 0.0 (`threats`: as
    `abusive_terms` takes it)."""
    return [
        float(any(abusive_terms(s, before, threats) for s, before in _with_before(t)))
        for t in texts
    ]


def _with_before(text: str) -> list[tuple[str, str]]:
    """Each prose sentence of `text` with the one before it ("" for the first)."""
    units = sentences(text)
    return [(s, units[i - 1] if i else "") for i, s in enumerate(units)]


class Toxicity(NamedTuple):
    """A text's toxicity score and why: `abusive term`, `classifier 0.97` (its probability),
    `model` (alt-profanity-check), `<folder> 0.97` (the classifier of `toxicity.model_dir`), the
    service's name, or "" for a text with no prose."""

    score: float
    why: str


ABUSIVE_TERM = Toxicity(1.0, "abusive term")
_NONE = Toxicity(0.0, "")


class ScoredSentence(NamedTuple):
    """A prose sentence of a text: where it lies in the text as written ((-1, -1) where it cannot
    be placed there: an HTML character reference read, inline code taken out) and its toxicity."""

    start: int
    end: int
    toxicity: Toxicity


def _placed(text: str, units: list[str]) -> list[tuple[int, int]]:
    """Where each of a text's prose sentences lies in the text as written, in order."""
    places, at = [], 0
    for unit in units:
        found = text.find(unit, at)
        places.append((found, found + len(unit)) if found >= 0 else (-1, -1))
        at = found + len(unit) if found >= 0 else at
    return places


def text_worst(scored: Sequence[ScoredSentence]) -> Toxicity:
    """A text's toxicity: its worst sentence's (an abusive term first among equals)."""
    return max(
        (s.toxicity for s in scored),
        key=lambda t: (t.score, t is ABUSIVE_TERM),
        default=Toxicity(0.0, ""),
    )


def local_toxicity(texts: Sequence[str], *options: Any, **named: Any) -> list[Toxicity]:
    """Toxicity of the local backend: the worst prose sentence of each text, scored by
    `sentence_toxicity` (with the same options: terms, classifier, model_dir...)."""
    return [text_worst(scored) for scored in sentence_toxicity(texts, *options, **named)]


def sentence_toxicity(
    texts: Sequence[str],
    terms: bool = True,
    classifier: bool = True,
    model_dir: str | None = None,
    model_threshold: float = 1.0,
    threats: bool = True,
) -> list[list[ScoredSentence]]:
    """Each prose sentence of each text, scored by the local backend: 1.0 for a sentence with an
    abusive term (when `terms`) or that the classifier scores at or above its cut-off (when
    `classifier`) or that the text classifier saved in `model_dir` (`screening.model_folder`)
    scores at or above `model_threshold`, else the highest of the models' probabilities (below
    1.0). Without `threats`, the terms are the slurs, profanity and group hate only
    (`abusive_terms`)."""
    if not texts:
        return []
    from profanity_check import predict_prob

    units: list[str] = []
    owners: list[tuple[int, int]] = []
    scored: list[list[ScoredSentence]] = []
    for i, text in enumerate(texts):
        pairs = _with_before(text)
        places = _placed(text, [sentence for sentence, _ in pairs])
        scored.append([])
        for j, ((sentence, before), (start, end)) in enumerate(zip(pairs, places, strict=True)):
            abusive = terms and abusive_terms(sentence, before, threats)
            scored[i].append(ScoredSentence(start, end, ABUSIVE_TERM if abusive else _NONE))
            if not abusive:
                units.append(sentence)
                owners.append((i, j))
    if not units:
        return scored
    model = predict_prob(units)
    learned = abuse_classifier() if classifier else None
    learned_p = (
        learned.probabilities([judged_innocent(u) for u in units])
        if learned
        else [0.0] * len(units)
    )
    own = sentence_classifier(model_dir).scores(units) if model_dir else [0.0] * len(units)
    own_name = Path(model_dir).name if model_dir else ""
    for (i, j), p, q, r in zip(owners, model, learned_p, own, strict=True):
        if learned and q >= learned.drop_at:
            found = Toxicity(1.0, f"classifier {q:.2f}")
        elif model_dir and r >= model_threshold:
            found = Toxicity(1.0, f"{own_name} {r:.2f}")
        elif r > p:
            found = Toxicity(min(r, MODEL_CEILING), own_name)
        else:
            found = Toxicity(min(float(p), MODEL_CEILING), "model")
        scored[i][j] = scored[i][j]._replace(toxicity=found)
    return scored
