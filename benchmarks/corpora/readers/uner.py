"""Reader of Universal NER (UNER v1): person names in English web text and news, as written.

UNER annotates the sentences of Universal Dependencies treebanks with PER, ORG and LOC; each
sentence keeps its text as written (`# text = ...`). English-EWT is web text others wrote
(Yahoo! Answers, Enron e-mails, newsgroups, reviews, weblogs), English-PUD is news and
Wikipedia sentences: the names of the people a training set's messages, reviews and articles
talk about, which tweets alone do not show.

A record is a run of at most `SENTENCES` consecutive sentences of one document, joined by a
space; each PER entity is a PERSON span located in that text (ORG and LOC are not personal
data). The treebank's own split is kept where it has one (EWT's dev file: dev; its test file:
test); PUD's one file is split by the id's hash like the other corpora.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from benchmarks.corpora.readers.records import record, sample

SENTENCES = 6


def _sentences(path: Path) -> Iterator[tuple[str, str, list[tuple[str, str]]]]:
    """(document id, text, [(token, tag)]) per sentence of an `.iob2` file."""
    doc, text, tokens = "", "", []
    for line in [*path.read_text(encoding="utf-8").splitlines(), ""]:
        if line.startswith("# newdoc id = "):
            doc = line.split("= ", 1)[1].strip()
        elif line.startswith("# sent_id = ") and not doc:
            doc = line.split("= ", 1)[1].rsplit("-", 1)[0]
        elif line.startswith("# text = "):
            text = line.split("= ", 1)[1]
        elif line.startswith("#"):
            continue
        elif line.strip():
            cols = line.split("\t")
            tokens.append((cols[1], cols[2]))
        elif tokens:
            yield doc, text, tokens
            text, tokens = "", []


def _persons(text: str, tokens: list[tuple[str, str]]) -> list[tuple[int, int]] | None:
    """The PER entities' character spans in `text`; None when a person's token cannot be placed
    in the text as written (the sentence is left out)."""
    spans: list[list[int]] = []
    pos = 0
    for token, tag in tokens:
        at = text.find(token, pos)
        placed = at >= 0 and not text[pos:at].strip()
        if placed:
            pos = at + len(token)
        if tag.endswith("-PER"):
            if not placed:
                return None
            if tag.startswith("B-") or not spans:
                spans.append([at, pos])
            else:
                spans[-1][1] = pos
    return [(a, b) for a, b in spans]


def _joined(
    sentences: list[tuple[str, list[tuple[int, int]]]],
) -> tuple[str, list[tuple[int, int]]]:
    """Sentences joined by a space, with their person spans moved to the joined text."""
    text, spans = "", []
    for sentence, persons in sentences:
        text += " " if text else ""
        spans += [(len(text) + a, len(text) + b) for a, b in persons]
        text += sentence
    return text, spans


def _chunks(paths: Iterable[Path]) -> Iterator[tuple[str, list[tuple[int, int]]]]:
    """(text, person spans) per run of at most SENTENCES sentences of one document."""
    run: list[tuple[str, list[tuple[int, int]]]] = []
    run_doc = ""
    for path in paths:
        for doc, text, tokens in _sentences(path):
            persons = _persons(text, tokens)
            if persons is None:
                continue
            if run and (doc != run_doc or len(run) == SENTENCES):
                yield _joined(run)
                run = []
            run_doc = doc
            run.append((text, persons))
    if run:
        yield _joined(run)


def uner_records(
    ewt: Path | None, pud: Path | None, with_person: int, without: int
) -> list[dict[str, Any]]:
    """Runs of sentences with a person (PERSON spans) and, as clean records, runs without one:
    EWT's dev and test files (`en_ewt-ud-dev.iob2`, `en_ewt-ud-test.iob2` in folder `ewt`)
    keep their split; PUD's file (`en_pud-ud-test.iob2` in `pud`) is split by hash."""
    sources: list[tuple[str | None, list[Path]]] = []
    if ewt:
        sources += [("dev", [ewt / "en_ewt-ud-dev.iob2"]), ("test", [ewt / "en_ewt-ud-test.iob2"])]
    if pud:
        sources.append((None, [pud / "en_pud-ud-test.iob2"]))
    out: list[dict[str, Any]] = []
    for split, paths in sources:
        named, plain = [], []
        for text, spans in _chunks(paths):
            values = [
                {"type": "PERSON", "value": text[a:b], "start": a, "end": b} for a, b in spans
            ]
            (named if values else plain).append((text, values))
        salt = f"uner/{paths[0].name}"
        for text, values in sample(named, with_person, salt + "+") + sample(
            plain, without, salt + "-"
        ):
            out.append(record("uner-en", len(out), text, values, split=split))
    return out
