"""What the screen changed in a kept record, as a reviewer may see it and as training gets it.

A kept record goes into training redacted: each replaced value (a placeholder or a surrogate) is
a `TextChange`, its text around it before (the record as a reviewer may see it: a replaced
value of a type the policy masks for reviewers, `ScreenConfig.review_shows`, is its placeholder)
and after (the text training gets, surrogates included). A flagged value stays in training as it
is: a `FlagMark` points at it in the text the reviewer is shown (`shown_text`), so a flagged
record always shows what it was flagged for. Pure functions over strings and spans.
"""

from __future__ import annotations

from collections.abc import Collection

from pydantic import BaseModel, ConfigDict, Field

from screening.redact import Replacement, Span, merge_spans, redact_text

CONTEXT = 60  # characters of context shown either side of a change


class Excerpt(BaseModel):
    """A changed or flagged value in its context: the text left of it, itself, right of it."""

    model_config = ConfigDict(frozen=True)
    left: str
    value: str
    right: str

    @classmethod
    def around(cls, text: str, start: int, end: int) -> Excerpt:
        left = text[max(0, start - CONTEXT) : start]
        right = text[end : end + CONTEXT]
        return cls(
            left=("…" if start > CONTEXT else "") + left,
            value=text[start:end],
            right=right + ("…" if end + CONTEXT < len(text) else ""),
        )


class TextChange(BaseModel):
    """One value the screen replaced in a kept record's text field."""

    model_config = ConfigDict(frozen=True)
    id: str = Field(description="The record's id.")
    field: str = Field(description="The text field, e.g. context or messages[1].content.")
    entity: str = Field(description="The entity type found, e.g. PERSON.")
    action: str = Field(description="The rule that replaced it: redact or surrogate.")
    before: Excerpt = Field(description="As a reviewer may see it (masked types masked).")
    after: Excerpt = Field(description="As training gets it.")


class FlagMark(BaseModel):
    """A flagged value in the text a reviewer is shown: kept in training as it is."""

    model_config = ConfigDict(frozen=True)
    field: str
    entity: str
    excerpt: Excerpt
    replaced: bool = Field(
        False, description="Inside a value replaced for another finding: training has not it."
    )


def text_changes(
    record_id: str,
    field: str,
    text: str,
    spans: list[Span],
    replace: Replacement,
    action_of: dict[str, str],
    review_shows: Collection[str],
) -> list[TextChange]:
    """Every replaced value of one text field (`spans`: those replaced in training) in context:
    before as a reviewer may see it, after as training gets it."""
    merged = merge_spans(spans)
    if not merged:
        return []
    after, to_after = redact_text(text, merged, replace)
    hidden = [m for m in merged if not _all_shown(m, spans, review_shows)]
    before, to_before = redact_text(text, hidden)
    return [
        TextChange(
            id=record_id,
            field=field,
            entity=s.entity,
            action=action_of.get(s.entity, "redact"),
            before=Excerpt.around(before, to_before.start(s.start), to_before.end(s.end)),
            after=Excerpt.around(after, to_after.start(s.start), to_after.end(s.end)),
        )
        for s in merged
    ]


def _all_shown(merged: Span, spans: list[Span], review_shows: Collection[str]) -> bool:
    """Whether every finding inside a merged span is of a type a reviewer may see (a name
    found inside an e-mail address does not show the address)."""
    inside = [s for s in spans if s.start < merged.end and merged.start < s.end]
    return all(s.entity in review_shows for s in inside)


def shown_text(
    field: str, text: str, replaced: list[Span], flags: list[Span]
) -> tuple[str, list[FlagMark]]:
    """A kept record's field as its reviewer is shown it: what training gets, placeholders in
    place of surrogates (a surrogate would look like a leak); and where each flagged value is
    in it (`replaced` when another finding's placeholder covers it)."""
    shown, offsets = redact_text(text, replaced)
    marks = []
    for flag in sorted(flags):
        start, end = offsets.start(flag.start), offsets.end(flag.end)
        marks.append(
            FlagMark(
                field=field,
                entity=flag.entity,
                excerpt=Excerpt.around(shown, start, end),
                replaced=shown[start:end] != text[flag.start : flag.end],
            )
        )
    return shown, marks
