"""The screening policy applied to one record (what to do with each finding: `screening.config`).

`apply_policy` is a pure function: a record, its findings per text field and its toxicity score in,
an `Outcome` out (the redacted record or a quarantine reason, and what was counted). Nothing here
ever puts a detected value into a reason, a count or a sample.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from screening.changes import FlagMark, TextChange, shown_text, text_changes
from screening.config import Action, ScreenConfig
from screening.redact import (
    Replacement,
    Span,
    occurrences,
    placeholder,
    redact_answers,
    redact_text,
)
from trainer.taskspec import task_spec

if TYPE_CHECKING:
    from screening.surrogates import Surrogates


TOXIC = "TOXICITY"  # the entity of a toxic sentence taken out of a long record (`<TOXICITY>`)


@dataclass
class Outcome:
    """What screening did to one record."""

    record: dict[str, Any] | None  # redacted record, or the masked copy when quarantined
    reason: str | None = None  # set when quarantined
    redacted: bool = False
    flagged: list[str] = field(default_factory=list)
    flag_reasons: list[str] = field(default_factory=list)  # why flagged, as quarantine reasons
    counts: Counter[tuple[str, str]] = field(default_factory=Counter)  # (entity, action) -> n
    masked: dict[str, str] = field(default_factory=dict)  # field -> fully masked text
    shown: dict[str, str] = field(default_factory=dict)  # field -> as a kept record's reviewer sees
    flag_marks: list[FlagMark] = field(default_factory=list)  # where each flagged value is shown
    changes: list[TextChange] = field(default_factory=list)  # each value replaced in training


def apply_policy(
    task: str,
    record: dict[str, Any],
    findings: dict[str, list[Span]],
    toxicity: float,
    config: ScreenConfig,
    surrogates: Surrogates | None = None,
    toxicity_why: str = "",
    removed: dict[str, list[Span]] | None = None,
) -> Outcome:
    """Decide and redact one record of a task type (a TaskSpec name, e.g. `extractive-qa`).

    `findings` maps text field names to their spans. `surrogates` makes the values of
    `surrogate` rules (required when a rule says surrogate). `toxicity_why` says what gave the
    toxicity score (`abusive term`, `classifier 0.97`, `model`): the reason names it.
    `removed`: the toxic sentences of a long record to replace rather than drop the record
    (`screening.scan.record_toxicity`), per field: replaced by `<TOXICITY>`, counted as
    (TOXICITY, redact), the record flagged for its reviewer.
    """
    outcome = Outcome(record=None)
    redact: dict[str, list[Span]] = {name: [] for name in findings}
    drop_reasons: list[str] = []
    for name, spans in findings.items():
        for span in spans:
            rule = config.rule(span.entity)
            if rule is None or span.score < rule.min_score:
                continue
            outcome.counts[(span.entity, rule.action.value)] += 1
            if rule.action.replaces:
                redact[name].append(span)
            elif rule.action is Action.drop:
                drop_reasons.append(f"{span.entity} in {name}")
            else:
                outcome.flagged.append(span.entity)
                outcome.flag_reasons.append(f"{span.entity} in {name}")
    for name, spans in (removed or {}).items():
        redact[name] += spans
        outcome.counts[(TOXIC, Action.redact.value)] += len(spans)
    if removed:
        outcome.flagged.append(TOXIC)
        outcome.flag_reasons.append(
            f"{sum(map(len, removed.values()))} toxic sentence(s) >= "
            f"{config.toxicity.threshold} replaced in a long text"
        )
    toxic = config.toxicity.decide(toxicity)
    if toxic is not None:
        outcome.counts[(TOXIC, toxic.value)] += 1
        if toxic is Action.drop:
            drop_reasons.append(
                f"toxicity {toxicity:.2f} >= {config.toxicity.threshold}"
                + (f" ({toxicity_why})" if toxicity_why else "")
            )
        else:
            if TOXIC not in outcome.flagged:
                outcome.flagged.append(TOXIC)
            outcome.flag_reasons.append(
                f"toxicity {toxicity:.2f} >= {config.toxicity.flag_threshold} (flag"
                + (f", {toxicity_why})" if toxicity_why else ")")
            )

    texts = _texts(task, record)
    _propagate(texts, redact)
    outcome.masked = _mask_all(texts, findings, redact, config)
    replace = _replacement(config, surrogates)
    redacted = _redact_record(task, record, redact, replace)
    if not drop_reasons:
        _shown(outcome, record, texts, findings, redact, config)
        outcome.changes = _changes(record, texts, redact, replace, config)
    outcome.redacted = any(redact.values())
    outcome.record = redacted  # QA answers re-derived from the redacted context (redact_answers)
    if drop_reasons:
        outcome.reason = "; ".join(sorted(set(drop_reasons)))
    return outcome


def _texts(task: str, record: dict[str, Any]) -> dict[str, str]:
    return dict(task_spec(task).text_fields(record))


def _propagate(texts: dict[str, str], redact: dict[str, list[Span]]) -> None:
    """A value redacted in one field is redacted wherever else it appears in the record."""
    values = {
        texts[name][s.start : s.end]: s.entity for name, spans in redact.items() for s in spans
    }
    for value, entity in values.items():
        for name, text in texts.items():
            redact[name].extend(occurrences(text, value, entity))


def _mask_all(
    texts: dict[str, str],
    findings: dict[str, list[Span]],
    redact: dict[str, list[Span]],
    config: ScreenConfig,
) -> dict[str, str]:
    """Every field with every finding of a configured type masked: safe to show a reviewer."""
    masked = {}  # placeholders always (a surrogate would look like a leak to a reviewer)
    for name, text in texts.items():
        spans = [s for s in findings.get(name, []) if config.rule(s.entity)] + redact[name]
        masked[name] = redact_text(text, spans)[0]
    return masked


def _shown(
    outcome: Outcome,
    record: dict[str, Any],
    texts: dict[str, str],
    findings: dict[str, list[Span]],
    redact: dict[str, list[Span]],
    config: ScreenConfig,
) -> None:
    """A kept record as its reviewer sees it (`shown_text`) and where its flagged values are."""
    for name, text in texts.items():
        flags = [
            s
            for s in findings.get(name, [])
            if (rule := config.rule(s.entity)) is not None
            and rule.action is Action.flag
            and s.score >= rule.min_score
        ]
        replaced = _context_spans(record, redact) if name == "context" else redact[name]
        outcome.shown[name], marks = shown_text(name, text, replaced, flags)
        outcome.flag_marks += marks


def _changes(
    record: dict[str, Any],
    texts: dict[str, str],
    redact: dict[str, list[Span]],
    replace: Replacement,
    config: ScreenConfig,
) -> list[TextChange]:
    """Each value replaced in a kept record's training text, field by field (a QA answer's
    change is its context's: the answer is re-derived from it)."""
    actions = {e: r.action.value for e, r in (config.entities | config.secrets).items()}
    changes = []
    for name, text in texts.items():
        if name.startswith("answers.text["):
            continue
        spans = _context_spans(record, redact) if name == "context" else redact[name]
        changes += text_changes(
            record["id"], name, text, spans, replace, actions, config.review_shows
        )
    return changes


def _replacement(config: ScreenConfig, surrogates: Surrogates | None) -> Replacement:
    """Placeholders for `redact` rules, surrogate values for `surrogate` rules."""

    def replace(span: Span, value: str) -> str:
        rule = config.rule(span.entity)
        if rule is not None and rule.action is Action.surrogate:
            if surrogates is None:
                raise ValueError("a surrogate rule needs surrogates (a salt) to apply")
            return surrogates(span.entity, value)
        return placeholder(span.entity)

    return replace


def _redact_record(
    task: str, record: dict[str, Any], redact: dict[str, list[Span]], replace: Replacement
) -> dict[str, Any]:
    """The record with every span in `redact` replaced, field by field of its task's schema."""
    out: dict[str, Any] = {"id": record["id"]}
    for name in task_spec(task).fields:
        if name in ("id", "answers"):  # answers are redacted with the context they point into
            continue
        if name == "messages":
            out[name] = [
                {
                    "role": m["role"],
                    "content": redact_text(m["content"], redact[f"messages[{i}].content"], replace)[
                        0
                    ],
                }
                for i, m in enumerate(record["messages"])
            ]
        elif name == "context" and "answers" in record:
            out["context"], out["answers"] = _redact_context_and_answers(record, redact, replace)
        else:
            out[name] = redact_text(record[name], redact[name], replace)[0]
    return out


def masked_record(task: str, record: dict[str, Any], masked: dict[str, str]) -> dict[str, Any]:
    """The record with each text field replaced by its masked text (`Outcome.masked`: every
    finding of a configured type a placeholder, whatever its action): what a quarantine keeps
    and a reviewer sees, never a raw value (a field with no masked text is left empty). QA
    answers keep their offsets, which point into the unmasked context."""
    out: dict[str, Any] = {"id": record["id"]}
    for name in task_spec(task).fields:
        if name == "id" or name not in record:
            continue
        if name == "messages":
            out[name] = [
                {"role": m["role"], "content": masked.get(f"messages[{i}].content", "")}
                for i, m in enumerate(record["messages"])
            ]
        elif name == "answers":
            texts = record["answers"]["text"]
            out[name] = {
                "text": [masked.get(f"answers.text[{i}]", "") for i in range(len(texts))],
                "answer_start": list(record["answers"]["answer_start"]),
            }
        else:
            out[name] = masked.get(name, "")
    return out


def _redact_context_and_answers(
    record: dict[str, Any], redact: dict[str, list[Span]], replace: Replacement
) -> tuple[str, dict[str, list[Any]]]:
    """A QA context and its answers, redacted alike so every answer_start still points at it."""
    return redact_answers(
        record["context"], record["answers"], _context_spans(record, redact), replace
    )


def _context_spans(record: dict[str, Any], redact: dict[str, list[Span]]) -> list[Span]:
    """The spans replaced in a context: its own, and its answers' where they sit in it."""
    spans = list(redact["context"])
    if "answers" not in record:
        return spans
    for i, start in enumerate(record["answers"]["answer_start"]):
        spans += [
            Span(s.start + start, s.end + start, s.entity, s.score)
            for s in redact[f"answers.text[{i}]"]
        ]
    return spans
