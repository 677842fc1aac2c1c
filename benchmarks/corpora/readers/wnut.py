"""Reader of WNUT-17 Emerging Entities: person names in tweets, Reddit, YouTube, StackOverflow."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchmarks.corpora.readers.records import record, sample

_NO_SPACE_BEFORE = {",", ".", "!", "?", ":", ";", ")", "%", "'s", "n't", "'m", "'re", "'ll"}
_NO_SPACE_AFTER = {"@", "#"}


def _joined(text: str, token: str, following: str) -> bool:
    """No space before `token`: an underscore between two words, or after a handle's `@`, is
    part of one name (`@mcgregor_ewan`, `u/Womble_Don`, `@_xoxo_kathlyn`), as is the word after
    it; the tokenizer split them. A run of underscores alone (a blank to fill) is not."""
    if token == "_":
        return (text[-1:].isalnum() or text.endswith("@")) and following[:1].isalnum()
    return (
        token[:1].isalnum() and text.endswith("_") and (text[-2:-1].isalnum() or text[-2:] == "@_")
    )


def wnut_sentences(path: Path, with_person: int, without: int) -> list[dict[str, Any]]:
    """Sentences with a `person` entity (each one a PERSON span) and, as clean records,
    sentences without one; tokens joined by spaces (none before closing punctuation, none after
    the `@` of a handle or the `#` of a hashtag: `@jellombooty` as it was written, not the
    tokenizer's `@ jellombooty`; none around an underscore between two words: `@mcgregor_ewan`,
    not `@mcgregor _ ewan`)."""
    sentences: list[list[tuple[str, str]]] = [[]]
    for line in path.read_text().splitlines():
        if not line.strip():
            sentences.append([])
        else:
            token, tag = line.rsplit("\t", 1)
            sentences[-1].append((token, tag))
    named, plain = [], []
    for tokens in filter(None, sentences):
        text, spans = "", []
        previous = ""
        for i, (token, tag) in enumerate(tokens):
            following = tokens[i + 1][0] if i + 1 < len(tokens) else ""
            spaced = token not in _NO_SPACE_BEFORE and previous not in _NO_SPACE_AFTER
            if text and spaced and not _joined(text, token, following):
                text += " "
            previous = token
            start = len(text)
            text += token
            if tag == "B-person":
                spans.append({"type": "PERSON", "value": token, "start": start, "end": len(text)})
            elif tag == "I-person" and spans:
                spans[-1]["end"] = len(text)
                spans[-1]["value"] = text[spans[-1]["start"] : len(text)]
        (named if spans else plain).append((text, spans))
    chosen = sample(named, with_person, "wnut+") + sample(plain, without, "wnut-")
    return [record("wnut17", i, text, spans) for i, (text, spans) in enumerate(chosen)]
