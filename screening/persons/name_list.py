"""First and last names of 105 countries, from the `names-dataset` library, as a compact file.

`names-dataset` (PyPI, 3.3.1, Philippe Remy; its LICENSE file is Apache-2.0, its metadata says
MIT) ranks 730k first and 983k last names per country. Loading it takes ~2 GB of memory and
~15 s, too much for every Dask worker, so `screening/data/build/update_person_names.py` extracts, once, the
names ranked in the top `--top` (`TOP`, 1,000) of any country into `screening/data/person_names.tsv.gz`
(shipped in the repo; the run time never imports the library). One line per name:

    name <TAB> F|L|FL (first, last or both) <TAB> ISO country codes where it ranks in the top N

The first line records the library version and the cut. Rebuild with:

    pip install names-dataset==3.3.1 && python screening/data/build/update_person_names.py

The library's names come from a 2021 dump of public Facebook profiles: only names with a
country rank are kept, never a person (no first name is tied to a last name).
"""

from __future__ import annotations

import gzip
from dataclasses import dataclass
from functools import cache
from pathlib import Path

PATH = Path(__file__).resolve().parents[1] / "data" / "person_names.tsv.gz"
TOP = 1000


@dataclass(frozen=True)
class NameList:
    """Casefolded first and last names, and the countries each list covers."""

    first: frozenset[str]
    last: frozenset[str]
    countries: frozenset[str]
    source: str


@cache
def load(path: Path = PATH) -> NameList:
    """The shipped name file (about 0.2 s and 15 MB per process)."""
    first: set[str] = set()
    last: set[str] = set()
    countries: set[str] = set()
    with gzip.open(path, "rt", encoding="utf-8") as f:
        source = f.readline().lstrip("# ").strip()
        for line in f:
            name, kinds, where = line.rstrip("\n").split("\t")
            key = name.casefold()
            if "F" in kinds:
                first.add(key)
            if "L" in kinds:
                last.add(key)
            countries.update(where.split(","))
    return NameList(frozenset(first), frozenset(last), frozenset(countries), source)
