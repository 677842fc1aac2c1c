"""Where the personal data in a candidate's predictions came from: its input, training, or nowhere.

The screen of the outputs (`screening.outputs.OutputScreen`) finds each value the detectors read
as personal data in a prediction and says whether the record's input held it (copied: an
extractive answer, a summary quoting its document; not a finding). Every other value is looked
up in the training split as it went to training (read from the store): a value it holds, as a
whole word, is one the model may have memorised and fails the gate whatever its number, unless
the screen's rule for its kind plants surrogates (then a value of that kind in the training
split is a fake the screen wrote there, not a person's). A value neither held is invented (a
name a chat model makes up, or a false finding of the detectors): the gate compares its rate
with `evaluate.max_invented_pii` of the task. Each finding keeps the prediction around it with
every finding masked, as the screen shows reviewers, never the value itself.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from platforms.evaluation import Origin, OutputPii, PiiFinding
from screening.config import Action, ScreenConfig
from screening.outputs import OutputFinding, OutputScreen
from screening.redact import Span, redact_text
from trainer.taskspec import task_spec

CONTEXT_CHARS = 60  # characters shown on each side of a finding


def training_texts(task: str, records: Iterable[dict[str, Any]]) -> str:
    """Every text field of the training records, one text (what a value is looked up in)."""
    text_fields = task_spec(task).text_fields
    return "\n".join(text for record in records for _, text in text_fields(record))


def classify_outputs(
    answers: Sequence[str],
    records: Sequence[dict[str, Any]],
    screened: OutputScreen,
    training: str,
    screen: ScreenConfig,
) -> OutputPii:
    """The findings of `screened` not copied from their input, each by origin (training,
    surrogate, invented) and in context; how many predictions hold a memorised value and how
    many an invented one. `answers` are the predictions as screened (the task's `answer_of`)."""
    by_prediction: dict[int, list[OutputFinding]] = {}
    for finding in screened.findings:
        by_prediction.setdefault(finding.prediction, []).append(finding)
    origins: dict[str, Origin] = {}
    findings: list[PiiFinding] = []
    memorised: set[int] = set()
    invented: set[int] = set()
    for index, found in sorted(by_prediction.items()):
        answer = answers[index]
        for finding in _outermost(found):
            if finding.in_input:
                continue
            value = answer[finding.start : finding.end]
            if value not in origins:
                origins[value] = _origin(value, finding.entity, training, screen)
            origin = origins[value]
            if origin == "training":
                memorised.add(index)
            elif origin == "invented":
                invented.add(index)
            findings.append(
                PiiFinding(
                    record_id=str(records[index].get("id", index)),
                    entity=finding.entity,
                    origin=origin,
                    context=masked_context(answer, found, finding),
                )
            )
    return OutputPii(
        predictions=screened.predictions,
        memorised=len(memorised),
        invented=len(invented),
        findings=findings,
    )


def _outermost(found: list[OutputFinding]) -> list[OutputFinding]:
    """The findings no other finding of the prediction covers: a name read inside an e-mail
    address is part of that address, as the screen masks it (one placeholder)."""
    ordered = sorted(found, key=lambda f: (f.start, -f.end, -f.score))
    kept: list[OutputFinding] = []
    for finding in ordered:
        if not any(k.start <= finding.start and finding.end <= k.end for k in kept):
            kept.append(finding)
    return kept


def _origin(value: str, entity: str, training: str, screen: ScreenConfig) -> Origin:
    """training when the training split holds `value` as a whole word (surrogate when the
    screen's rule for its kind writes surrogates), invented otherwise."""
    if not value.strip() or not in_text(value, training):
        return "invented"
    rule = screen.rule(entity)
    return "surrogate" if rule is not None and rule.action is Action.surrogate else "training"


def in_text(value: str, text: str) -> bool:
    """Whether `text` holds `value` not as a piece of a longer word ("Ann" is not in "Annual"),
    in any case and spacing (a model with an uncased tokenizer writes "jorge pereira")."""
    words = r"\s+".join(re.escape(word) for word in value.split())
    return re.search(rf"(?<!\w){words}(?!\w)", text, re.IGNORECASE) is not None


def masked_context(answer: str, found: Sequence[OutputFinding], finding: OutputFinding) -> str:
    """The prediction around `finding`, every finding in it replaced by its placeholder."""
    start = max(0, finding.start - CONTEXT_CHARS)
    end = min(len(answer), finding.end + CONTEXT_CHARS)
    for other in found:  # a finding the window cuts is shown whole, masked
        if other.start < end and other.end > start:
            start, end = min(start, other.start), max(end, other.end)
    spans = [
        Span(f.start - start, f.end - start, f.entity)
        for f in found
        if f.start >= start and f.end <= end
    ]
    text = redact_text(answer[start:end], spans)[0]
    return ("…" if start else "") + " ".join(text.split()) + ("…" if end < len(answer) else "")
