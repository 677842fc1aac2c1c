"""E-mail addresses: the screen's finder against Presidio's EmailRecognizer on the same texts.

    python benchmarks/emails.py [--rounds 2] [--show 40] [--generated 1000]

The texts of `benchmarks/addresses_phones_cards.py`'s false-finding count: every paragraph of
the README/description of every installed Python package (the addresses there are mostly real:
authors, maintainers, security contacts) and the turns of the everyday and code chat corpora
of benchmarks/corpora/ (Topical-Chat, ConvAbuse's not-abusive turns, code chat), and, for
addresses as this project plants them, the text fields of `--generated` records of each
generator (samples/' tickets of every task, the names and credentials corpora). Per corpus:
the addresses each finds (spans at or above the default policy's score), the texts with one,
the texts where the two differ, with every difference listed for a person to judge; and the
time per text of each, on all the texts and on those holding an `@` (`--rounds` alternating
rounds in one process, the best of each).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS", "")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.addresses_phones_cards import CHATS, chat_turns, prose_paragraphs
from screening.config import DEFAULT_PII_RULES
from screening.finders.emails import ENTITY, find_emails

MIN_SCORE = DEFAULT_PII_RULES[ENTITY].min_score


def presidio(text: str) -> list[tuple[int, int]]:
    return [
        (r.start, r.end)
        for r in _presidio_recognizer().analyze(text, [ENTITY], None)
        if r.score >= MIN_SCORE
    ]


def ours(text: str) -> list[tuple[int, int]]:
    return [(s.start, s.end) for s in find_emails(text) if s.score >= MIN_SCORE]


_RECOGNIZER = []


def _presidio_recognizer() -> Any:
    if not _RECOGNIZER:
        from presidio_analyzer.predefined_recognizers import EmailRecognizer

        _RECOGNIZER.append(EmailRecognizer())
    return _RECOGNIZER[0]


def timed(finder: Callable[[str], Any], texts: list[str]) -> float:
    """Seconds per text, one pass."""
    start = time.perf_counter()
    for text in texts:
        finder(text)
    return (time.perf_counter() - start) / len(texts)


def compare(name: str, texts: list[str], rounds: int, show: int) -> None:
    theirs = [presidio(t) for t in texts]
    mine = [ours(t) for t in texts]
    differ = [i for i, (a, b) in enumerate(zip(theirs, mine, strict=True)) if a != b]
    with_at = [t for t in texts if "@" in t]
    best = {}
    for _ in range(rounds):
        for key, finder, subset in (
            ("presidio", presidio, texts),
            ("ours", ours, texts),
            ("presidio @", presidio, with_at),
            ("ours @", ours, with_at),
        ):
            if subset:
                best[key] = min(best.get(key, float("inf")), timed(finder, subset))
    at = (
        f"; on the {len(with_at)} texts with an `@`: Presidio {best['presidio @'] * 1e6:.1f}, "
        f"ours {best['ours @'] * 1e6:.1f} µs per text"
        if with_at
        else ""
    )
    print(
        f"\n{name}: {len(texts)} texts, {sum(map(len, texts)) / 1e6:.1f} M characters\n"
        f"  Presidio: {sum(map(len, theirs))} addresses in {sum(map(bool, theirs))} texts, "
        f"{best['presidio'] * 1e6:.1f} µs per text\n"
        f"  ours:     {sum(map(len, mine))} addresses in {sum(map(bool, mine))} texts, "
        f"{best['ours'] * 1e6:.1f} µs per text\n"
        f"  texts that differ: {len(differ)}{at}"
    )
    for i in differ[:show]:
        text = texts[i]
        only_theirs = [text[a:b] for a, b in theirs[i] if (a, b) not in mine[i]]
        only_mine = [text[a:b] for a, b in mine[i] if (a, b) not in theirs[i]]
        print(f"    Presidio only {only_theirs!r}; ours only {only_mine!r}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--show", type=int, default=40)
    parser.add_argument("--generated", type=int, default=1000, help="records per generator")
    args = parser.parse_args()
    compare("package descriptions", [p for _, p in prose_paragraphs()], args.rounds, args.show)
    for name in CHATS:
        compare(name, [t for _, t in chat_turns(name)], args.rounds, args.show)
    compare("generated", generated_texts(args.generated), args.rounds, args.show)


def generated_texts(n: int) -> list[str]:
    """Every text field of this project's generated records (samples/: support tickets with
    planted e-mails, of each task type) and of its names and credentials corpora."""
    from benchmarks.corpora.measure import generated
    from samples.generate import TASKS, valid_records
    from trainer.taskspec import task_spec

    texts = [
        text
        for task in TASKS
        for record in valid_records(task, n)
        for _, text in task_spec(task).text_fields(record)
    ]
    return texts + [r["text"] for records in generated(n, n).values() for r in records]


if __name__ == "__main__":
    main()
