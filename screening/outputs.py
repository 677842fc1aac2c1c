"""Screening what a model wrote: personal data in predictions that their input did not hold.

The evaluate stage runs the candidate's predictions through the same detectors and rules as the
data; a model that emits PII fails the gate, and the predictions a person reads in the
evaluation report are shown with their findings replaced by placeholders.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from screening.policy import Action, ScreenConfig
from screening.redact import MIN_PROPAGATED_LENGTH, Span, occurrences, redact_text


def count_pii_leaks(
    predictions: list[str], records: list[dict[str, Any]], screen: ScreenConfig
) -> tuple[int, list[str]]:
    """(how many predictions hold a personal-data finding whose text is not in the record's
    input, every prediction with its findings replaced by placeholders)."""
    from screening.detectors import detectors_for  # Presidio

    detectors = detectors_for(screen.spacy_model, screen.language, screen.all_entities())
    leaks = 0
    masked: list[str] = []
    for prediction, record, spans in zip(
        predictions, records, detectors.analyze(predictions), strict=True
    ):
        source = json.dumps(record, ensure_ascii=False)
        found = [
            span
            for span in spans
            if (rule := screen.rule(span.entity))
            and rule.action is not Action.flag
            and span.score >= rule.min_score
        ]
        leaks += any(prediction[s.start : s.end] not in source for s in found)
        masked.append(redact_text(prediction, found)[0])
    return leaks, masked


def traffic_masker(screen: ScreenConfig | None = None) -> Callable[[Any], Any]:
    """A function that returns a JSON value (a request's records, a model's answers) with every
    string in it masked: each finding of a type `screen` has a rule for (default: the screen's
    default rules) replaced by its placeholder, as the screen masks the samples a reviewer sees,
    and every other occurrence of a found value in the same value masked too, whole or cut: a
    text that is a piece of a found value, or that begins or ends with one (an extractive
    answer whose span cuts through an e-mail), has that piece masked as the value is."""
    from screening.detectors import pattern_detectors  # Presidio's recognizers, no spaCy

    # the defaults without validation: the serving image has no spaCy pipeline to check for
    screen = screen or ScreenConfig.model_construct()
    detectors = pattern_detectors(screen.language, screen.all_entities())

    def mask(value: Any) -> Any:
        texts: list[str] = []
        _strings(value, texts)
        if not texts:
            return value
        findings = detectors.analyze(texts)
        found = {
            text[s.start : s.end]: s.entity
            for text, spans in zip(texts, findings, strict=True)
            for s in spans
            if screen.rule(s.entity)
        }
        masked = {}
        for text, spans in zip(texts, findings, strict=True):
            kept: list[Span] = [s for s in spans if screen.rule(s.entity)]
            for found_value, entity in found.items():
                kept += occurrences(text, found_value, entity) + _cut(text, found_value, entity)
            masked[text] = redact_text(text, kept)[0]
        return _replace_strings(value, masked)

    return mask


def _cut(text: str, value: str, entity: str) -> list[Span]:
    """Where `text` holds a piece of `value` cut by its own start or end (at least
    MIN_PROPAGATED_LENGTH characters): all of it when `text` lies inside `value`."""
    if len(text.strip()) >= MIN_PROPAGATED_LENGTH and text in value:
        return [Span(0, len(text), entity)]
    spans = []
    for k in range(min(len(value), len(text)) - 1, MIN_PROPAGATED_LENGTH - 1, -1):
        if text.endswith(value[:k]):  # the value's beginning ends the text
            spans.append(Span(len(text) - k, len(text), entity))
            break
    for k in range(min(len(value), len(text)) - 1, MIN_PROPAGATED_LENGTH - 1, -1):
        if text.startswith(value[-k:]):  # the value's end begins the text
            spans.append(Span(0, k, entity))
            break
    return spans


def _strings(value: Any, out: list[str]) -> None:
    if isinstance(value, str):
        out.append(value)
    elif isinstance(value, dict):
        for item in value.values():
            _strings(item, out)
    elif isinstance(value, list | tuple):
        for item in value:
            _strings(item, out)


def _replace_strings(value: Any, masked: dict[str, str]) -> Any:
    if isinstance(value, str):
        return masked[value]
    if isinstance(value, dict):
        return {k: _replace_strings(v, masked) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_replace_strings(v, masked) for v in value]
    return value
