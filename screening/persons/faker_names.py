"""First and last names of Faker's person providers with Latin-script names, folded for lookup
(read from the installed `faker` package; nothing is copied into the repository).
"""

from __future__ import annotations

import importlib
import pkgutil
import unicodedata
import zlib
from collections.abc import Callable
from functools import cache

from screening.persons import name_words as w


def fold(word: str) -> str:
    """Lookup key: casefolded, curly apostrophe straightened."""
    return word.replace("\u2019", "'").casefold()


def strip_accents(word: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFKD", word) if not unicodedata.combining(c))


def is_latin(name: str) -> bool:
    return bool(name) and all(
        c in " '\u2019-." or "LATIN" in unicodedata.name(c, "") for c in name if not c.isspace()
    )


def held_out(name: str) -> bool:
    """About one name in ten, fixed by its spelling: kept out of the list for honest recall."""
    return zlib.crc32(strip_accents(fold(name)).encode()) % 10 == 0


@cache
def locale_names(locale: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(first names, last names) of one Faker person provider, Latin script only, sorted."""
    provider = importlib.import_module(f"faker.providers.person.{locale}").Provider
    first: set[str] = set()
    last: set[str] = set()
    for attr in dir(provider):
        if attr.startswith("_") or not attr.endswith("names") or "kana" in attr:
            continue
        into = last if "last" in attr else first if "first" in attr or "middle" in attr else None
        values = getattr(provider, attr)
        if into is None or not isinstance(values, dict | list | tuple | set | frozenset):
            continue
        into.update(v for v in values if isinstance(v, str) and is_latin(v))
    return tuple(sorted(first)), tuple(sorted(last))


def faker_locales() -> list[str]:
    import faker.providers.person as person

    return sorted(m.name for m in pkgutil.iter_modules(person.__path__) if m.ispkg)


@cache
def faker_name_lists(exclude_held_out: bool = False) -> tuple[frozenset[str], frozenset[str]]:
    """Folded first and last names of all Faker locales (accented and unaccented spellings)."""
    keep: Callable[[str], bool] = (lambda n: not held_out(n)) if exclude_held_out else bool
    first: set[str] = set()
    last: set[str] = set()
    for locale in faker_locales():
        firsts, lasts = locale_names(locale)
        for names, into in ((firsts, first), (lasts, last)):
            for name in names:
                for part in name.split():
                    key = fold(part)
                    if key not in PARTICLES and len(key) > 1 and keep(part):
                        into.update({key, strip_accents(key)})
    return frozenset(first), frozenset(last)


PARTICLES = w.words(w.PARTICLES)
