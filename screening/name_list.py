"""First and last names of 105 countries, from the `names-dataset` library, as a compact file.

`names-dataset` (PyPI, 3.3.1, Philippe Remy; its LICENSE file is Apache-2.0, its metadata says
MIT) ranks 730k first and 983k last names per country. Loading it takes ~2 GB of memory and
~15 s, too much for every Dask worker, so `python -m screening.name_list` extracts, once, the
names ranked in the top `--top` (1,000) of any country into `screening/person_names.tsv.gz`
(shipped in the repo; the run time never imports the library). One line per name:

    name <TAB> F|L|FL (first, last or both) <TAB> ISO country codes where it ranks in the top N

The first line records the library version and the cut. Rebuild with:

    pip install names-dataset==3.3.1 && python -m screening.name_list

The library's names come from a 2021 dump of public Facebook profiles: only names with a
country rank are kept, never a person (no first name is tied to a last name).
"""

from __future__ import annotations

import argparse
import gzip
import unicodedata
from collections import defaultdict
from dataclasses import dataclass
from functools import cache
from pathlib import Path

PATH = Path(__file__).with_name("person_names.tsv.gz")
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


def _keep(name: str) -> bool:
    """One word of letters (apostrophes and hyphens inside), two characters or more."""
    core = name.replace("'", "").replace("-", "")
    return len(name) > 1 and core.isalpha() and all(unicodedata.category(c)[0] == "L" for c in core)


def build(out: Path = PATH, top: int = TOP) -> tuple[int, int]:
    """Write the name file from the installed names-dataset; returns (first, last) counts."""
    from importlib.metadata import version

    from names_dataset import NameDataset  # build time only: pip install names-dataset==3.3.1

    dataset = NameDataset()
    kinds: dict[str, set[str]] = defaultdict(set)
    where: dict[str, set[str]] = defaultdict(set)
    for kind, table in (("F", dataset.first_names), ("L", dataset.last_names)):
        for name, info in table.items():
            ranked = [c for c, r in info["rank"].items() if r is not None and r <= top]
            if ranked and _keep(name):
                kinds[name].add(kind)
                where[name].update(ranked)
    with gzip.open(out, "wt", encoding="utf-8", compresslevel=9) as f:
        f.write(f"# names-dataset {version('names-dataset')}, top {top} per country\n")
        for name in sorted(kinds):
            f.write(f"{name}\t{''.join(sorted(kinds[name]))}\t{','.join(sorted(where[name]))}\n")
    return sum("F" in k for k in kinds.values()), sum("L" in k for k in kinds.values())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--top", type=int, default=TOP, help="names ranked this high or better")
    parser.add_argument("--out", type=Path, default=PATH)
    args = parser.parse_args()
    first, last = build(args.out, args.top)
    print(f"first {first}, last {last}")


if __name__ == "__main__":
    main()
