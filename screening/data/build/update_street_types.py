"""Rebuild `street_types.tsv`, the street-type words of many languages, from a libpostal checkout.

    git clone https://github.com/openvenues/libpostal && git -C libpostal checkout COMMIT
    python screening/data/build/update_street_types.py libpostal   # or: EXPORT_DIR COMMIT

libpostal (openvenues/libpostal, MIT, its licence beside the file as `libpostal.LICENSE`) keeps,
per language, the words that make a name a street (`resources/dictionaries/<lang>/
street_types.txt`: `straße`, `gatan`, `rua`, `ulica`, `iela`, `caddesi`) and the ones written
as the end of a compound (`concatenated_suffixes_separable.txt` / `_inseparable.txt`:
`Linien|straße`, `Skredder|plassen`, `Ångermanna|gatan`, `Haarlemmer|dijk`). Each line of those
files is a word and its other spellings and abbreviations, `|`-separated. This script (run at
update time only; nothing is read from the network or from spaCy at run time) keeps, of every
language whose forms are in the Latin script but English (the English street words are
`screening.finders.addresses`' own lists, USPS's and Faker's, in their own rules):

- `word`: a one-word street type of 3 letters or more and its other spellings (`straße`,
  `strasse`), not its abbreviations (`str.`, `str`, `cll`):
  a street word written apart, before or after the name (`Rua Augusta 5`, `Brīvības iela 5`);
- `suffix`: a compound's last part of 3 letters or more that is a street type too (`plassen`,
  `straße`, `gatan`; not `dorf`, `kreuz`, `universität`, which libpostal lists to expand their
  abbreviations), and every street type of a language that writes them joined to the name
  (`JOINED`: `dijk`, `kade`, `tänav`).

Left out, each counted in the file's header: a form that is an English word or an inflection of
one (spaCy's English lemmatizer tables, WordNet's nouns, verbs, adjectives and adverbs, and its
stop words: `park`, `plan`, `bay`, `gate`, `land`, `for`, and `via`: `Jurassic Park 3`,
`Disneyland 2`, `sent via Slack 3 times` are no streets), and a
suffix that ends more than `MAX_ENGLISH_ENDINGS` English words (`sel`: `vessel`, `tassel`;
`lia`: `dahlia`). The English words a kept suffix ends (`erlang` for Dutch `lang`) are written
as `english` rows: a word the finder must not take for a compound street. Of libpostal's English
street types the script keeps only their other spellings, as `spelling` rows naming their type
(`strt` street, `blvrd` boulevard, `pkway` parkway; no English word: `cause`, and `bvd`, which
spaCy's inflection rules take for one): the finder's number-first
patterns take a spelling of a type they know as that type.
"""

from __future__ import annotations

import subprocess
import sys
import unicodedata
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]  # screening/data, where the built files go
OUT = HERE / "street_types.tsv"
FILES = {
    "street_types.txt": "word",
    "concatenated_suffixes_separable.txt": "suffix",
    "concatenated_suffixes_inseparable.txt": "suffix",
}
MIN_LETTERS = 3
# Languages that write a street type joined to the name (`Haarlemmerdijk`, `Tartu maantee` aside):
# each street type of theirs is a compound's end too, beside their concatenated_suffixes files.
JOINED = ("af", "da", "de", "et", "fi", "gsw", "is", "lb", "nb", "nl", "sv")
# Adjectives libpostal lists among German street types (`Große Straße`, `Obere Gasse`): the start
# of a name, no compound's end.
NOT_ENDINGS = frozenset(
    [
        "grosse",
        "große",
        "großser",
        "heiligen",
        "obere",
        "oberer",
        "oberes",
        "untere",
        "unterer",
        "unteres",
    ]
)
MAX_ENGLISH_ENDINGS = 3  # a suffix ending more English words than this is no street's sign


def latin(form: str) -> bool:
    """Every letter of the form is a Latin one (`ø`, `ș`, `ő` are; Cyrillic and Greek are not)."""
    return all(not c.isalpha() or "LATIN" in unicodedata.name(c, "") for c in form)


def english_words() -> tuple[set[str], Callable[[str], bool]]:
    """English words (spaCy's lemmatizer tables of the pipeline the screen loads) and a test of
    a word or its inflection (`screening.persons.name_text.english_words`)."""
    import spacy

    from screening.config import ScreenConfig
    from screening.persons.name_text import english_words as _english

    nlp = spacy.load(ScreenConfig().spacy_model)
    lookups = nlp.get_pipe("lemmatizer").lookups
    words: set[str] = set()
    for pos in ("noun", "verb", "adj", "adv"):
        words.update(w for w in lookups.get_table("lemma_index", {}).get(pos, ()) if w.isalpha())
    stop = frozenset(nlp.Defaults.stop_words) | {"via", "per", "pro", "con"}  # Latin in English
    word = _english(lookups)
    return words, lambda w: w in stop or word(w)


def read(checkout: Path) -> dict[tuple[str, str], set[str]]:
    """(form, how) -> the languages that list it."""
    forms: dict[tuple[str, str], set[str]] = defaultdict(set)
    root = checkout / "resources" / "dictionaries"
    for folder in sorted(p for p in root.iterdir() if p.is_dir()):
        if folder.name in ("en", "all"):
            continue
        for name, how in FILES.items():
            path = folder / name
            if not path.exists():
                continue
            for line in path.read_text(encoding="utf-8").splitlines():
                spellings = [f.strip() for f in line.strip().lower().split("|")]
                for i, form in enumerate(spellings):
                    if (
                        len(form) >= MIN_LETTERS
                        and form.isalpha()  # one word, no dot, no apostrophe
                        and latin(form)
                        # the word and its other spellings (`strasse`, `namesti`), not its
                        # abbreviations (`str`, `nam`, `cll`: too many prose words look alike)
                        and (i == 0 or len(form) >= len(spellings[0]) - 1)
                    ):
                        forms[(form, how)].add(folder.name)
                        if how == "word" and folder.name in JOINED and form not in NOT_ENDINGS:
                            forms[(form, "suffix")].add(folder.name)
    return forms


def english_spellings(checkout: Path, english: Callable[[str], bool]) -> list[tuple[str, str]]:
    """(spelling, street type) of libpostal's English street types: the other spellings of a
    type (`strt`, `blvrd`, `avnue`, `pkway`) of 3 letters or more, no English word (`cause` for
    causeway, `pla` aside)."""
    path = checkout / "resources" / "dictionaries" / "en" / "street_types.txt"
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        canonical, *others = [f.strip() for f in line.strip().lower().split("|")]
        for form in others:
            if len(form) >= MIN_LETTERS and form.isalpha() and not english(form):
                out.append((form, canonical))
    return sorted(set(out))


def main() -> None:
    checkout = Path(sys.argv[1])
    commit = subprocess.run(
        ["git", "-C", str(checkout), "rev-parse", "HEAD"], capture_output=True, text=True
    ).stdout.strip() or (sys.argv[2] if len(sys.argv) > 2 else "unknown")
    forms = read(checkout)
    words, english = english_words()
    kept, endings, left = [], {}, defaultdict(list)
    types = {form for form, how in forms if how == "word"}
    for (form, how), languages in sorted(forms.items()):
        if how == "suffix" and form not in types:
            left["a compound's end that is no street type"].append(form)
            continue
        if english(form):
            left["an English word"].append(form)
            continue
        if how == "suffix":
            ends = sorted(w for w in words if w.endswith(form) and len(w) > len(form))
            if len(ends) > MAX_ENGLISH_ENDINGS:
                left[f"a suffix of more than {MAX_ENGLISH_ENDINGS} English words"].append(form)
                continue
            for w in ends:
                endings[w] = form
        kept.append((form, how, ",".join(sorted(languages))))
    lines = [
        f"# Street types by language: libpostal {commit} (MIT, https://github.com/openvenues/"
        "libpostal), resources/dictionaries/*/street_types.txt and concatenated_suffixes_*.txt;",
        "# `python screening/data/build/update_street_types.py CHECKOUT`. Left out: "
        + "; ".join(f"{len(v)} as {k} ({', '.join(v[:8])}...)" for k, v in left.items()),
        "# form\thow (word: written apart; suffix: a compound's end; english: an English word "
        "ending in a kept suffix, no street; spelling: an English street type's other spelling)"
        "\tlanguages (english: the suffix; spelling: the type)",
    ]
    lines += [f"{form}\t{how}\t{languages}" for form, how, languages in kept]
    lines += [f"{w}\tenglish\t{suffix}" for w, suffix in sorted(endings.items())]
    spellings = english_spellings(checkout, english)
    lines += [f"{form}\tspelling\t{canonical}" for form, canonical in spellings]
    OUT.write_text("\n".join(lines) + "\n", encoding="utf-8")
    n = defaultdict(int)
    for _, how, _ in kept:
        n[how] += 1
    print(
        f"{OUT}: {dict(n)}, {len(endings)} English endings; left out {dict((k, len(v)) for k, v in left.items())}"
    )


if __name__ == "__main__":
    main()
