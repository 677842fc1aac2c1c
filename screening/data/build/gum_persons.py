"""GUM's named persons as a two-column CoNLL file, for `train_person_model.py --conll`.

    python screening/data/build/gum_persons.py /path/to/gum/dep --out gum_persons.conll

GUM (the Georgetown University Multilayer corpus, github.com/amir-zeldes/gum; annotations
CC-BY 4.0) marks every mention of an entity, named or not, with its type (`Entity=` in the MISC
column of `dep/*.conllu`, CorefUD's bracket notation). A token is a person's name here when the
innermost mention it sits in is a person and it is a proper noun (UPOS `PROPN`) that is no
title (`Dr.`, `Lord`): `Dr. William Glennie` gives `William Glennie`; `his`, `the poet` and
`Aberdeen Grammar School` (an organisation holding a place) give nothing. Neighbouring name
tokens are one name (B-PER, I-PER); every other token is O.

Only the genres whose texts GUM's LICENSE.txt gives an open licence are read (`GENRES`):
academic (CC-BY 4.0), biographies (Wikipedia, CC-BY-SA 3.0), court (CC-BY 4.0), interviews and
news (Wikinews, CC-BY 2.5), travel guides (Wikivoyage, CC-BY-SA 3.0); the non-commercial ones
(essays, fiction, letters, podcasts, wikiHow), Reddit's and those LICENSE.txt does not name are
left out. GENTLE's documents (`GENTLE_*`) are another corpus and are left out too.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from screening.persons.name_words import OFFICES, TITLES

GENRES = ("academic", "bio", "court", "interview", "news", "voyage")
# The name rules' titles (`Dr`, `Mrs`, `Lord`) and abbreviated offices (`Capt`, `Gen`), and the
# offices GUM's writers put before a name in full.
_OFFICES = (
    "lady king queen prince princess president senator governor saint st pope rev reverend "
    "judge justice general captain colonel sergeant mayor minister chancellor "
    "premier chairman chairwoman sheikh emperor empress"
)
_TITLES = frozenset(f"{TITLES} {OFFICES} {_OFFICES}".split())
_PIECE = re.compile(r"\((\d+)-([a-z]+)[^()]*?(\))?(?=\(|\d+\)|$)|(\d+)\)")


def _mentions(misc: str) -> tuple[list[tuple[str, str, bool]], list[str]]:
    """(opened: (id, type, closes here too), closed ids) of one token's `Entity=` value."""
    value = next((f[7:] for f in misc.split("|") if f.startswith("Entity=")), "")
    opened, closed = [], []
    for m in _PIECE.finditer(value):
        if m.group(1):
            opened.append((m.group(1), m.group(2), bool(m.group(3))))
        else:
            closed.append(m.group(4))
    return opened, closed


def sentences(path: Path) -> Iterator[list[tuple[str, str]]]:
    """(token, label) per sentence of one GUM `.conllu` file."""
    stack: list[tuple[str, str]] = []  # open mentions (id, type), across sentences
    rows: list[tuple[str, str, str]] = []  # (form, upos, innermost type)
    for line in [*path.read_text(encoding="utf-8").splitlines(), ""]:
        if line.startswith("#"):
            continue
        if not line.strip():
            if rows:
                yield _labelled(rows)
            rows = []
            continue
        cols = line.split("\t")
        if not cols[0].isdigit():  # a multiword token's range or an empty node
            continue
        opened, closed = _mentions(cols[9])
        here = stack + [(i, t) for i, t, _ in opened]
        rows.append((cols[1], cols[3], here[-1][1] if here else ""))
        stack += [(i, t) for i, t, single in opened if not single]
        for ident in closed:
            for k in range(len(stack) - 1, -1, -1):
                if stack[k][0] == ident:
                    del stack[k]
                    break


def _labelled(rows: list[tuple[str, str, str]]) -> list[tuple[str, str]]:
    out, inside = [], False
    for form, upos, kind in rows:
        name = (
            kind == "person"
            and upos == "PROPN"
            and (inside or form.lower().rstrip(".") not in _TITLES)
        )
        out.append((form, ("I-PER" if inside else "B-PER") if name else "O"))
        inside = name
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("dep", type=Path, help="a GUM checkout's dep/ folder")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    files = sorted(p for g in GENRES for p in args.dep.glob(f"GUM_{g}_*.conllu"))
    if not files:
        raise SystemExit(f"no GUM_<genre>_*.conllu of {', '.join(GENRES)} in {args.dep}")
    n = persons = 0
    with args.out.open("w", encoding="utf-8") as out:
        for path in files:
            for sentence in sentences(path):
                out.write("".join(f"{form}\t{label}\n" for form, label in sentence) + "\n")
                n += 1
                persons += sum(label == "B-PER" for _, label in sentence)
    print(f"{len(files)} documents, {n} sentences, {persons} persons -> {args.out}")


if __name__ == "__main__":
    main()
