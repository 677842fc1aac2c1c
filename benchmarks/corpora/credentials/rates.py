"""Measurement on the credentials corpus: catch per form (a credential is caught only when every
character of it is covered) and false drops on clean tickets."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from benchmarks.corpora.credentials.corpus import Ticket

Finder = Callable[[str], list[tuple[int, int, float]]]  # text -> secret spans (start, end, score)


def covered(text: str, value: str, spans: list[tuple[int, int, float]], min_score: float) -> bool:
    """Whether every character of every occurrence of `value` lies inside a secret span.

    Strict on purpose: a finding that leaves even one character of the value outside counts the
    credential as missed, so "most of it was redacted" is a miss.
    """
    inside = set()
    for start, end, score in spans:
        if score >= min_score:
            inside.update(range(start, end))
    starts = [i for i in range(len(text)) if text.startswith(value, i)]
    return bool(starts) and all(all(j in inside for j in range(i, i + len(value))) for i in starts)


@dataclass
class Rates:
    """Catch per form (caught, planted), and clean tickets with a finding (dropped, clean)."""

    per_form: dict[str, tuple[int, int]]
    false_drops: tuple[int, int]
    missed: list[tuple[str, str]]  # (form, ticket text) of some misses, to look at
    false: list[str]  # some clean tickets that had a finding

    @property
    def catch(self) -> float:
        caught = sum(c for c, _ in self.per_form.values())
        return caught / max(1, sum(n for _, n in self.per_form.values()))

    @property
    def false_drop_rate(self) -> float:
        return self.false_drops[0] / max(1, self.false_drops[1])


def measure(
    planted: list[Ticket], clean: list[Ticket], find: Finder, min_score: float = 0.5
) -> Rates:
    """Catch rate per form over `planted`, false-drop rate over `clean`."""
    per_form: dict[str, list[int]] = {}
    missed: list[tuple[str, str]] = []
    for tk in planted:
        spans = find(tk.text)
        counts = per_form.setdefault(tk.form or "", [0, 0])
        for value in tk.secrets:
            counts[1] += 1
            if covered(tk.text, value, spans, min_score):
                counts[0] += 1
            elif len(missed) < 200:
                missed.append((tk.form or "", tk.text))
    false = [tk.text for tk in clean if any(s >= min_score for _, _, s in find(tk.text))]
    return Rates(
        {k: (v[0], v[1]) for k, v in per_form.items()}, (len(false), len(clean)), missed, false
    )
