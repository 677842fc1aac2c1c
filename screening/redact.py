"""Redaction that keeps records valid for their task.

Pure functions over strings and spans. A span is replaced by its placeholder (`<EMAIL_ADDRESS>`)
or by another text (a surrogate value, `screening.surrogates`); `OffsetMap` moves positions of the
old text to the new one, so QA answers are re-derived from the new context and always sit at their
`answer_start`.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable
from dataclasses import dataclass

MIN_PROPAGATED_LENGTH = 3


@dataclass(frozen=True, order=True)
class Span:
    """A detected entity in one text: [start, end) with its type and score."""

    start: int
    end: int
    entity: str
    score: float = 1.0


class AnalysisFailed(list):  # an empty list of spans that says why
    """No findings because the analysis of this text failed: never to be taken as clean."""

    def __init__(self, reason: str) -> None:
        super().__init__()
        self.reason = reason


def placeholder(entity: str) -> str:
    return f"<{entity}>"


def merge_spans(spans: list[Span]) -> list[Span]:
    """Overlapping spans become one covering span, named after its strongest finding."""
    merged: list[Span] = []
    for span in sorted(spans, key=lambda s: (s.start, -s.end)):
        if merged and span.start < merged[-1].end:
            last = merged[-1]
            strongest = max((last, span), key=lambda s: (s.score, s.end - s.start))
            merged[-1] = Span(
                last.start, max(last.end, span.end), strongest.entity, strongest.score
            )
        else:
            merged.append(span)
    return merged


class OffsetMap:
    """Positions in a text before redaction → positions after it."""

    def __init__(self, replaced: list[tuple[int, int, int, int]]) -> None:
        # (old_start, old_end, new_start, new_end), sorted, non-overlapping
        self._replaced = replaced
        self._old_starts = [r[0] for r in replaced]

    def start(self, pos: int) -> int:
        """Where a span starting at `pos` starts now (the placeholder start if inside one)."""
        return self._map(pos, inside_to_end=False)

    def end(self, pos: int) -> int:
        """Where a span ending at `pos` ends now (the placeholder end if inside one)."""
        return self._map(pos, inside_to_end=True)

    def _map(self, pos: int, *, inside_to_end: bool) -> int:
        i = bisect.bisect_right(self._old_starts, pos) - 1
        if i < 0:
            return pos
        old_start, old_end, new_start, new_end = self._replaced[i]
        if old_start < pos < old_end or (pos == old_start and not inside_to_end):
            return new_end if inside_to_end else new_start
        if pos == old_start:  # an end exactly at a placeholder start stays before it
            return new_start
        return pos + (new_end - old_end)


# What replaces a span: given the span and the text it covers, the new text.
Replacement = Callable[[Span, str], str]


def _placeholder_of(span: Span, value: str) -> str:
    return placeholder(span.entity)


def redact_text(
    text: str, spans: list[Span], replace: Replacement = _placeholder_of
) -> tuple[str, OffsetMap]:
    """Replace merged spans (by placeholders unless told otherwise); the new text, its offsets."""
    pieces: list[str] = []
    replaced: list[tuple[int, int, int, int]] = []
    cursor = 0
    length = 0
    for span in merge_spans(spans):
        pieces.append(text[cursor : span.start])
        length += span.start - cursor
        token = replace(span, text[span.start : span.end])
        replaced.append((span.start, span.end, length, length + len(token)))
        pieces.append(token)
        length += len(token)
        cursor = span.end
    pieces.append(text[cursor:])
    return "".join(pieces), OffsetMap(replaced)


def occurrences(text: str, value: str, entity: str) -> list[Span]:
    """Every occurrence of a value already found elsewhere in the record (so none survives)."""
    if len(value.strip()) < MIN_PROPAGATED_LENGTH:
        return []
    spans = []
    start = text.find(value)
    while start != -1:
        spans.append(Span(start, start + len(value), entity, 1.0))
        start = text.find(value, start + len(value))
    return spans


def redact_answers(
    context: str,
    answers: dict[str, list],
    spans: list[Span],
    replace: Replacement = _placeholder_of,
) -> tuple[str, dict[str, list]]:
    """Redact a QA context and re-derive every answer from the redacted context.

    An answer that overlaps a redacted span grows to cover the whole placeholder and its text is
    rewritten to what the new context holds there, so `context[start:start+len(text)] == text`.
    """
    new_context, offsets = redact_text(context, spans, replace)
    texts, starts = [], []
    for text, start in zip(answers["text"], answers["answer_start"], strict=True):
        new_start = offsets.start(start)
        new_end = offsets.end(start + len(text))
        texts.append(new_context[new_start:new_end])
        starts.append(new_start)
    return new_context, {"text": texts, "answer_start": starts}
