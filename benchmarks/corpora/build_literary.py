"""Build `literary_odyssey.jsonl`: passages of a public-domain book with contact data planted.

Reads Samuel Butler's prose translation of the Odyssey (Project Gutenberg #1727, the licence
header already stripped in the checkout SOURCES.md names) and keeps the paragraphs of six books
(IX-XII, the wanderings, and XXI-XXII, the bow and the killing of the suitors: an epic's
battles), footnote numbers removed. One passage in five gets a sentence of this project's
templates with an e-mail address, a phone number or a credential made by `samples.values`
(seeded): what the screen must still remove under `screen.profile=literary`.

    python benchmarks/corpora/build_literary.py PATH/english_butler_1900.txt
"""

from __future__ import annotations

import itertools
import json
import random
import re
import sys
from pathlib import Path

from samples import templates as t
from samples import values

BOOKS = ("IX", "X", "XI", "XII", "XXI", "XXII")
OUT = Path(__file__).parent / "literary_odyssey.jsonl"
_PLANTS = (
    ("EMAIL_ADDRESS", None),
    ("PHONE_NUMBER", None),
    ("CREDENTIAL", "password"),
    ("CREDENTIAL", "github_token"),
    ("CREDENTIAL", "aws_access_key_id"),
    ("CREDENTIAL", "jwt"),
)
_BOOK = re.compile(r"BOOK ([IVXL]+)")
_FOOTNOTE = re.compile(r"(?<=[A-Za-z,.;:!?\u201d\u2019])\d{1,3}\b")


def passages(text: str) -> list[tuple[str, str]]:
    """(book, paragraph) of the kept books, each paragraph on one line, its heading left out."""
    lines = text.splitlines()
    heads = [(i, m.group(1)) for i, line in enumerate(lines) if (m := _BOOK.fullmatch(line))]
    heads.append((len(lines), ""))
    out = []
    for (start, book), (end, _) in itertools.pairwise(heads):
        if book not in BOOKS:
            continue
        paragraphs = "\n".join(lines[start + 1 : end]).split("\n\n")
        kept = [re.sub(r"\s+", " ", p).strip() for p in paragraphs if p.strip()]
        out += [(book, _FOOTNOTE.sub("", p)) for p in kept[1:]]  # [0]: the book's summary
    return out


def plant(rng: random.Random, text: str, turn: int) -> tuple[str, dict[str, str]]:
    """The passage with one planted sentence (of the `turn`th kind of `_PLANTS`, in turn) after
    one of its sentences, and what was planted."""
    kind, secret = _PLANTS[turn % len(_PLANTS)]
    if secret is None:
        value = values.pii_value(rng, kind, "")
        sentence = rng.choice(t.PII_SENTENCES[kind])[0].format(v=value)
    else:
        value = values.secret_value(rng, secret)
        sentence = rng.choice(t.SECRET_SENTENCES[secret]).format(v=value)
    cuts = [m.end() for m in re.finditer(r"[.;!?]\u201d? ", text)] or [len(text)]
    at = rng.choice(cuts)
    return f"{text[:at].rstrip()} {sentence} {text[at:]}".strip(), {"type": kind, "value": value}


def main(source: Path) -> None:
    rng = random.Random(45)
    rows = []
    for n, (book, text) in enumerate(passages(source.read_text(encoding="utf-8"))):
        planted = []
        if n % 5 == 2:
            text, one = plant(rng, text, n // 5)
            planted.append(one)
        rows.append(
            {"id": f"odyssey-{book}-{n:04d}", "source": "odyssey-butler", "text": text,
             "planted": planted}
        )  # fmt: skip
    with OUT.open("w", encoding="utf-8") as out:
        for row in rows:
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"{len(rows)} passages, {sum(bool(r['planted']) for r in rows)} planted -> {OUT}")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
