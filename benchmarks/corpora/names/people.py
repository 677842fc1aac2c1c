"""People for the names corpus: first and last names drawn from Faker's lists of the corpus's
locales, either only names the recognizer's list holds out or none of them."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from benchmarks.corpora.names.words import LOCALES
from screening.persons.faker_names import held_out as is_held_out
from screening.persons.faker_names import locale_names
from screening.persons.name_words import PRODUCT_NAMES, words

_PRODUCT_WORDS = words(PRODUCT_NAMES)


@dataclass(frozen=True)
class Person:
    first: str
    last: str

    @property
    def full(self) -> str:
        return f"{self.first} {self.last}"


class NameSource:
    """Draws people from Faker's lists of `LOCALES` (held-out names only, or none of them)."""

    def __init__(self, rng: random.Random, held_out: bool = False) -> None:
        self.rng = rng
        self.pools: list[tuple[list[str], list[str]]] = []
        for locale in LOCALES:
            firsts, lasts = locale_names(locale)
            keep = [n for n in firsts if _simple(n) and _all_held(n) == held_out]
            keep_last = [n for n in lasts if _simple(n) and _all_held(n) == held_out]
            if held_out:  # a held-out first name may pair with any surname, and vice versa
                keep_last = keep_last or [n for n in lasts if _simple(n)]
            if keep and keep_last:
                self.pools.append((keep, keep_last))

    def person(self, pick: Callable[[str], bool] | None = None) -> Person:
        for _ in range(200):
            firsts, lasts = self.rng.choice(self.pools)
            person = Person(self.rng.choice(firsts), self.rng.choice(lasts))
            if pick is None or pick(person.full):
                return person
        return person


def _simple(name: str) -> bool:
    """One word (hyphens and apostrophes allowed), at least two letters, no product's name: a
    person called Siri or Jenkins alone is a known miss (products are never a person alone)."""
    return (
        " " not in name
        and len(name) > 1
        and "." not in name
        and name.casefold() not in _PRODUCT_WORDS
    )


def _all_held(name: str) -> bool:
    return all(is_held_out(p) for p in name.split("-"))
