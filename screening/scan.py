"""Screening a batch of records, and the report of every batch added up.

`screen_records` is the screen of one partition without its storage: every text field of every
record analysed at once (Presidio entities and credentials by `Detectors`, the toxicity of its
prose by the configured backend and `screening.toxicity`'s abusive terms), the policy
applied record by record (`apply_policy`), what was kept, what was quarantined and why, and a
`Tally` of what was found, and a `ReviewRecord` of every flagged and every quarantined record
(masked, with its findings and reason). `screen_report` adds the tallies up into
the `ScreenReport`. No raw value found by the screen is put into a tally, a sample or a reason.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from screening.changes import TextChange
from screening.config import Action, ScreenConfig, ToxicityConfig
from screening.policy import TOXIC, Outcome, apply_policy, masked_record
from screening.profiles import ProfileName
from screening.redact import Span
from screening.report import EntityCount, MaskedSample, ReviewRecord, ScreenReport
from screening.toxicity.azure import content_safety_scores
from screening.toxicity.score import (
    ABUSIVE_TERM,
    ScoredSentence,
    Toxicity,
    sentence_toxicity,
    term_scores,
    text_worst,
)
from trainer.taskspec import task_spec

_SAMPLE_WINDOW = 160
CHANGES_PER_ENTITY = 5  # changes to kept records kept per entity type (per partition)


@dataclass(frozen=True, slots=True)
class Tally:
    """What screening counted in a batch of records; tallies add up into the report."""

    records_in: int  # records screened
    kept: int  # records kept
    redacted: int  # kept records with at least one value redacted
    quarantined: int  # records set aside
    flagged_ids: tuple[str, ...]  # kept records a person should look at
    entities: tuple[EntityCount, ...]  # findings per entity type and rule
    reasons: dict[str, int]  # quarantined records per reason
    samples: tuple[MaskedSample, ...]  # masked excerpts, at most `max_samples`
    changed: tuple[EntityCount, ...] = ()  # values replaced in kept records, per type and rule


class Quarantined(NamedTuple):
    """A record the screen set aside: its id, why, and its masked copy (every finding of a
    configured type a placeholder, whatever its rule's action: a dropped credential too)."""

    id: str
    reason: str
    record: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Screening:
    """What screening a batch of records did: the records to keep and to set aside, counted."""

    kept: list[dict[str, Any]]  # the records to keep, redacted
    quarantined: list[Quarantined]  # the records to set aside
    tally: Tally
    review: list[ReviewRecord]  # every flagged and every quarantined record, masked
    changes: list[TextChange] = field(default_factory=list)  # a sample per type (`sample_changes`)


def screen_records(
    task: str,
    records: list[dict[str, Any]],
    config: ScreenConfig,
    salt: bytes | None = None,
) -> Screening:
    """Screen canonical records of a task type (a TaskSpec name) by the configured policy.

    `salt` keys the surrogate values (needed when a rule says surrogate). A text the analyzer
    cannot take quarantines its record, masked entirely: a record is never kept unscreened.
    """
    from screening.detectors import AnalysisFailed, screen_detectors  # Presidio loads here
    from screening.surrogates import Surrogates

    detectors = screen_detectors(config)
    fields = [list(task_spec(task).text_fields(r)) for r in records]
    flat = [text for record_fields in fields for _, text in record_fields]
    spans = iter(detectors.analyze(flat, config.batch_size))
    tox = iter(_sentence_toxicity(flat, config.toxicity))

    kept: list[dict[str, Any]] = []
    quarantined: list[Quarantined] = []
    samples: list[MaskedSample] = []
    review: list[ReviewRecord] = []
    flagged_ids: list[str] = []
    counts: Counter[tuple[str, str]] = Counter()
    changed: Counter[tuple[str, str]] = Counter()
    changes: list[TextChange] = []
    reasons: Counter[str] = Counter()
    redacted = 0
    surrogates = Surrogates(salt) if salt is not None else None
    for record, record_fields in zip(records, fields, strict=True):
        findings = {name: next(spans) for name, _ in record_fields}
        if hasattr(detectors, "record_name_parts") and not any(
            isinstance(f, AnalysisFailed) for f in findings.values()
        ):  # a name's parts alone in another field (a question's `Lamarr`)
            texts = [text for _, text in record_fields]
            with_parts = detectors.record_name_parts(texts, list(findings.values()))
            findings = dict(zip(findings, with_parts, strict=True))
        toxicity, removed = record_toxicity(
            {name: next(tox) for name, _ in record_fields}, config.toxicity
        )
        failed = [f"{n}: {f.reason}" for n, f in findings.items() if isinstance(f, AnalysisFailed)]
        if failed:  # never kept unscreened: quarantined, masked entirely
            outcome = Outcome(
                record={"id": record["id"]},
                reason="screen could not analyse " + ", ".join(failed),
                masked={name: "<NOT ANALYSED>" for name in findings},
            )
        else:
            outcome = apply_policy(
                task, record, findings, toxicity.score, config, surrogates, toxicity.why, removed
            )
        counts.update(outcome.counts)
        if outcome.reason is not None:
            reasons.update(outcome.reason.split("; "))
            masked = masked_record(task, record, outcome.masked)  # never a raw value
            quarantined.append(Quarantined(record["id"], outcome.reason, masked))
        else:
            kept.append(outcome.record)
            redacted += outcome.redacted
            changed.update((c.entity, c.action) for c in outcome.changes)
            changes = sample_changes([*changes, *outcome.changes], CHANGES_PER_ENTITY)
            if outcome.flagged:
                flagged_ids.append(record["id"])
        if (outcome.counts or outcome.reason) and len(samples) < config.max_samples:
            samples.append(_sample(record["id"], outcome))
        if outcome.reason is not None or outcome.flagged:
            review.append(_review(record["id"], outcome))

    tally = Tally(
        records_in=len(records),
        kept=len(kept),
        redacted=redacted,
        quarantined=len(quarantined),
        flagged_ids=tuple(flagged_ids),
        entities=tuple(EntityCount(entity=e, action=a, findings=n) for (e, a), n in counts.items()),
        reasons=dict(reasons),
        samples=tuple(samples),
        changed=_counts(changed),
    )
    return Screening(kept, quarantined, tally, review, changes)


def sample_changes(changes: list[TextChange], per_entity: int) -> list[TextChange]:
    """At most `per_entity` changes of each entity type, of as many records as there are (a
    record's second change of a type comes after every record's first), in the order given."""
    seen: Counter[tuple[str, str]] = Counter()
    ranked = []
    for position, change in enumerate(changes):
        seen[(change.entity, change.id)] += 1
        ranked.append((seen[(change.entity, change.id)], position, change))
    taken: Counter[str] = Counter()
    sample = []
    for _, position, change in sorted(ranked, key=lambda r: r[:2]):
        if taken[change.entity] < per_entity:
            taken[change.entity] += 1
            sample.append((position, change))
    return [change for _, change in sorted(sample, key=lambda s: s[0])]


def _counts(counts: Counter[tuple[str, str]]) -> tuple[EntityCount, ...]:
    return tuple(
        EntityCount(entity=e, action=a, findings=n) for (e, a), n in sorted(counts.items())
    )


def _toxicity(texts: list[str], config: ToxicityConfig) -> list[Toxicity]:
    """Each text's toxicity (its worst sentence's, `_sentence_toxicity`), with why."""
    return [text_worst(scored) for scored in _sentence_toxicity(texts, config)]


def _sentence_toxicity(texts: list[str], config: ToxicityConfig) -> list[list[ScoredSentence]]:
    """Scores from the configured backend, each with why (abusive terms score 1.0 with either,
    when `config.terms`; the local classifier when `config.classifier`); each distinct text is
    scored once. The local backend scores each prose sentence where it lies in the text; Azure
    AI Content Safety scores a text whole (one score, placed nowhere)."""
    unique = list(dict.fromkeys(texts))
    if config.backend == "azure-content-safety":
        assert config.endpoint is not None  # checked by ToxicityConfig
        service = content_safety_scores(unique, config.endpoint, config.key_env)
        scores = [Toxicity(s, "Azure AI Content Safety") for s in service]
        if config.terms:
            terms = term_scores(unique, config.threats)
            scores = [ABUSIVE_TERM if t else s for s, t in zip(scores, terms, strict=True)]
        scored = [[ScoredSentence(-1, -1, score)] for score in scores]
    else:
        scored = sentence_toxicity(
            unique,
            bool(config.terms),
            config.classifier,
            config.model_dir,
            config.model_threshold,
            config.threats,
        )
    by_text = dict(zip(unique, scored, strict=True))
    return [by_text[t] for t in texts]


def record_toxicity(
    fields: dict[str, list[ScoredSentence]], config: ToxicityConfig
) -> tuple[Toxicity, dict[str, list[Span]]]:
    """A record's toxicity (its worst text's) and the toxic sentences to take out of it instead.

    A long record (`config.long_text_sentences` prose sentences or more in its text fields: a
    transcript, a long conversation, a document) in which at most `config.long_text_share` of
    the sentences reach `config.threshold` is not given `config.action` (drop) whole: those
    sentences are returned, per field, as TOXICITY spans to replace, and the record's toxicity
    is its other sentences' worst. A short record, or one a sentence of which cannot be placed
    in its text, is judged whole as before."""
    whole = worst(text_worst(scored) for scored in fields.values())
    if config.long_text_sentences is None or config.action is not Action.drop:
        return whole, {}
    every = [(name, s) for name, scored in fields.items() for s in scored]
    toxic = [(name, s) for name, s in every if s.toxicity.score >= config.threshold]
    if (
        not toxic
        or len(every) < config.long_text_sentences
        or len(toxic) > config.long_text_share * len(every)
        or any(s.start < 0 for _, s in toxic)
    ):
        return whole, {}
    removed: dict[str, list[Span]] = {}
    for name, s in toxic:
        removed.setdefault(name, []).append(Span(s.start, s.end, TOXIC, s.toxicity.score))
    rest = [s for _, s in every if s.toxicity.score < config.threshold]
    return text_worst(rest), removed


def worst(scores: Iterable[Toxicity]) -> Toxicity:
    """The highest score of a record's texts (the first such, with its reason)."""
    return max(scores, key=lambda t: t.score, default=Toxicity(0.0, ""))


def _sample(record_id: str, outcome: Outcome) -> MaskedSample:
    """A short masked excerpt around the first placeholder of the record."""
    name, text = next(
        ((n, t) for n, t in outcome.masked.items() if "<" in t), next(iter(outcome.masked.items()))
    )
    at = max(text.find("<"), 0)
    start = max(0, at - _SAMPLE_WINDOW // 2)
    return MaskedSample(
        id=record_id,
        field=name,
        excerpt=text[start : start + _SAMPLE_WINDOW],
        entities=sorted({e for e, _ in outcome.counts}),
        outcome="quarantined" if outcome.reason else "flagged" if outcome.flagged else "redacted",
        reason=_reason(outcome),
    )


def _reason(outcome: Outcome) -> str:
    """Why a record was quarantined or flagged ("" when it was only redacted)."""
    if outcome.reason is not None:
        return outcome.reason
    return "; ".join(sorted(set(outcome.flag_reasons)))


def _review(record_id: str, outcome: Outcome) -> ReviewRecord:
    """A flagged or quarantined record as the reviewer sees it: masked whole, found, why."""
    return ReviewRecord(
        id=record_id,
        outcome="quarantined" if outcome.reason is not None else "flagged",
        reason=_reason(outcome),
        findings=[
            EntityCount(entity=e, action=a, findings=n)
            for (e, a), n in sorted(outcome.counts.items())
        ],
        masked=outcome.masked if outcome.reason is not None else outcome.shown,
        flags=outcome.flag_marks if outcome.reason is None else [],
    )


def screen_report(
    task: str,
    tallies: list[Tally],
    config: ScreenConfig,
    input_profiles: dict[str, ProfileName] | None = None,
) -> ScreenReport:
    """Every batch's tally added up into the report; a record lost on the way is a bug.
    `input_profiles`: the inputs screened with another profile than the run's."""
    counts: Counter[tuple[str, str]] = Counter()
    changed: Counter[tuple[str, str]] = Counter()
    reasons: Counter[str] = Counter()
    samples: list[MaskedSample] = []
    flagged_ids: list[str] = []
    for t in tallies:
        counts.update({(c.entity, c.action): c.findings for c in t.entities})
        for c in t.changed:
            changed[(c.entity, c.action)] += c.findings
        reasons.update(t.reasons)
        samples += t.samples
        flagged_ids += t.flagged_ids
    total = {
        "records_in": sum(t.records_in for t in tallies),
        "kept": sum(t.kept for t in tallies),
        "redacted": sum(t.redacted for t in tallies),
        "quarantined": sum(t.quarantined for t in tallies),
    }
    if total["records_in"] != total["kept"] + total["quarantined"]:
        raise RuntimeError(f"screen lost records: {total}")  # a bug, never data
    return ScreenReport(
        task=str(task),
        **total,
        flagged=len(flagged_ids),
        entities=[
            EntityCount(entity=e, action=a, findings=n) for (e, a), n in sorted(counts.items())
        ],
        quarantine_reasons=dict(reasons.most_common()),
        flagged_ids=sorted(flagged_ids),
        samples=_spread(samples, config.max_samples),
        toxicity_threshold=config.toxicity.threshold,
        changed=list(_counts(changed)),
        profile=config.profile,
        input_profiles=input_profiles or {},
    )


def _spread(samples: list[MaskedSample], limit: int) -> list[MaskedSample]:
    """Up to `limit` samples, quarantined and flagged ones first so a reviewer sees them."""
    order = {"quarantined": 0, "flagged": 1, "redacted": 2}
    return sorted(samples, key=lambda s: order[s.outcome])[:limit]
