"""Screening what a model wrote: personal data in predictions that their input did not hold.

The evaluate stage runs the candidate's predictions through the same detectors and rules as the
data; a model that emits PII fails the gate, and the predictions a person reads in the
evaluation report are shown with their findings replaced by placeholders.
"""

from __future__ import annotations

import json
from typing import Any

from screening.policy import Action, ScreenConfig


def count_pii_leaks(
    predictions: list[str], records: list[dict[str, Any]], screen: ScreenConfig
) -> tuple[int, list[str]]:
    """(how many predictions hold a personal-data finding whose text is not in the record's
    input, every prediction with its findings replaced by placeholders)."""
    from screening.detectors import detectors_for  # Presidio
    from screening.redact import redact_text

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
