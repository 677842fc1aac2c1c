"""What the drift signals read of a set of requests: each request's words, their share outside
the training vocabulary, masked personal data, whether it is English, and a stable sample of
texts, gathered one request at a time (`Sample`).
"""

from __future__ import annotations

import hashlib
import heapq
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

WORD = re.compile(r"[^\W\d_]+")
PLACEHOLDER = re.compile(r"<([A-Z][A-Z0-9_]+)>")
LATIN = re.compile(r"[A-Za-z\u00C0-\u024F]")
LETTER = re.compile(r"[^\W\d_]")
# Frequent English function words: a request of several words with none of them is not English.
_ENGLISH_WORDS = (
    "the a an of to in and or is are was were be it that this for on with as at by from not "
    "what when where who why how which do does did can i you he she we they my your our its "
    "has have had will would should could there here if but about me"
)
ENGLISH = frozenset(_ENGLISH_WORDS.split())


@dataclass
class Sample:
    """What the signals read of a set of requests (the reference, or a window of traffic),
    gathered one request at a time: each request's features, and a stable sample of at most
    `sample_size` texts (the smallest hashes) for the text and embedding signals. Memory grows
    by a few numbers a request, never by its text."""

    known_words: frozenset[str]  # the training vocabulary
    entities: frozenset[str]  # the placeholders that mean personal data
    sample_size: int = 300
    lengths: list[int] = field(default_factory=list)
    oov: list[float] = field(default_factory=list)
    personal: list[bool] = field(default_factory=list)
    foreign: list[bool] = field(default_factory=list)
    answer_lengths: list[int] = field(default_factory=list)  # the answered requests'
    empty: list[bool] = field(default_factory=list)
    scores: list[float] = field(default_factory=list)
    statuses: list[int] = field(default_factory=list)
    _kept: list[tuple[bytes, str]] = field(default_factory=list)  # a max-heap by hash

    def add(self, text: str, answer: str | None, status: int = 200) -> None:
        """One request's strings joined, its answer (None: it got none) and its status."""
        found = words(text)
        self.lengths.append(len(found))
        self.oov.append(oov_share(found, self.known_words))
        self.personal.append(has_personal_data(text, self.entities))
        self.foreign.append(not_english(text))
        self.statuses.append(status)
        if answer is not None:
            self.answer_lengths.append(len(words(answer)))
            self.empty.append(not answer.strip())
        key = bytes(255 - b for b in hashlib.sha256(text.encode()).digest())
        if len(self._kept) < self.sample_size:
            heapq.heappush(self._kept, (key, text))
        elif key > self._kept[0][0]:
            heapq.heapreplace(self._kept, (key, text))

    @property
    def texts(self) -> list[str]:
        """The sampled texts (the same requests give the same sample, in hash order)."""
        return [text for _, text in sorted(self._kept, reverse=True)]

    def __len__(self) -> int:
        return len(self.lengths)


def strings(value: Any) -> Iterable[str]:
    """Every string in a JSON value, in order (a request's fields, a chat's messages)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)


def words(text: str) -> list[str]:
    """Lower-cased words; a placeholder of masked personal data (`<EMAIL_ADDRESS>`) is one."""
    return [w.lower() for w in WORD.findall(PLACEHOLDER.sub(r" \1 ", text).replace("_", ""))]


def vocabulary(texts: Iterable[str]) -> frozenset[str]:
    """The lower-cased words of `texts` (the champion's training requests)."""
    seen: set[str] = set()
    for text in texts:
        seen.update(words(text))
    return frozenset(seen)


def oov_share(found: Sequence[str], known: frozenset[str]) -> float:
    """The share of the words `found` (of one request) that are not `known`."""
    return sum(w not in known for w in found) / len(found) if found else 0.0


def request_group(text: str) -> str:
    """The document a request is about: its longest line (a QA request's context, a summary's
    document, a chat's longest message). Requests sharing it are held out together by the
    domain classifiers (tasks/domain_auc.py)."""
    return max(text.split("\n"), key=len).strip()


def has_personal_data(text: str, entities: frozenset[str]) -> bool:
    return any(m.group(1) in entities for m in PLACEHOLDER.finditer(text))


def not_english(text: str) -> bool:
    """Mostly letters of another script, or several words and not one English function word."""
    plain = PLACEHOLDER.sub(" ", text)
    letters = LETTER.findall(plain)
    if letters and sum(bool(LATIN.match(c)) for c in letters) < len(letters) / 2:
        return True
    found = words(plain)
    return len(found) >= 6 and not any(w in ENGLISH for w in found)


def stable_sample(items: Sequence[Any], n: int, key: Sequence[str]) -> list[Any]:
    """At most `n` of `items`, chosen by a hash of `key` (the same items give the same sample)."""
    if len(items) <= n:
        return list(items)
    ranked = sorted(range(len(items)), key=lambda i: hashlib.sha256(key[i].encode()).digest())
    return [items[i] for i in sorted(ranked[:n])]
