"""How many WNUT-17 test persons trained NER systems leave: the shared task's own submissions.

    python benchmarks/corpora/wnut17_systems.py --wnut emerging_entities_17

`--wnut` is a checkout of github.com/leondz/emerging_entities_17 (commit e52a2d2, CC-BY 4.0): its
`emerging.test.annotated` is the gold standard (the WNUT-17 half of `names_test.jsonl`) and
`submissions/` holds the seven systems entered in the shared task (Derczynski et al. 2017), one
predicted label a token. For each system, and for all seven together (a token counts when any
of them tags it), it prints the share of the gold persons

- found whole: every token of the person tagged `person`;
- tagged whole as any entity: every token tagged with some entity type (what a screen that
  redacted every entity type would catch);
- left whole: no token of the person tagged `person` (the screen's "left whole", which counts a
  person whose every character stands outside any finding).

It measures other systems on data this project does not tune on: nothing here is fitted to it.
It says how far a trained sequence labeller gets on this text, against the issue's target of at
most 2% of names left whole (docs/benchmarks.md).
"""

from __future__ import annotations

import argparse
from pathlib import Path


def read_labels(path: Path) -> list[tuple[str, str] | None]:
    """(token, label) per line of a CoNLL file; None for a sentence break."""
    rows: list[tuple[str, str] | None] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        parts = line.split("\t") if "\t" in line else line.split()
        rows.append((parts[0], parts[-1]) if len(parts) >= 2 else None)
    return rows


def person_spans(rows: list[tuple[str, str] | None]) -> list[tuple[int, int]]:
    """Token ranges (over the non-break rows) of the gold persons, handles left out."""
    tokens = [row for row in rows if row]
    spans: list[tuple[int, int]] = []
    start = None
    for i, (_, label) in enumerate([*tokens, ("", "O")]):
        inside = label.lower() in ("i-person",) and start is not None
        if inside:
            continue
        if start is not None:
            if not tokens[start][0].startswith("@"):
                spans.append((start, i))
            start = None
        if label.lower() == "b-person":
            start = i
    return spans


def score(spans: list[tuple[int, int]], labels: list[list[str]]) -> tuple[float, float, float]:
    """Found whole, tagged whole as any entity, left whole: shares of `spans`."""

    def person(i: int) -> bool:
        return any(lab[i].lower().endswith("-person") for lab in labels)

    def entity(i: int) -> bool:
        return any(lab[i] != "O" for lab in labels)

    n = max(len(spans), 1)
    whole = sum(all(person(i) for i in range(a, b)) for a, b in spans)
    any_entity = sum(all(entity(i) for i in range(a, b)) for a, b in spans)
    left = sum(not any(person(i) for i in range(a, b)) for a, b in spans)
    return whole / n, any_entity / n, left / n


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--wnut", type=Path, required=True, help="emerging_entities_17 checkout")
    args = parser.parse_args()
    gold = [row for row in read_labels(args.wnut / "emerging.test.annotated") if row]
    spans = person_spans(gold)
    systems: dict[str, list[str]] = {}
    for path in sorted((args.wnut / "submissions").iterdir()):
        rows = [row for row in read_labels(path) if row]
        if len(rows) != len(gold):
            print(f"{path.name}: {len(rows)} tokens, the gold file {len(gold)}: skipped")
            continue
        rewritten = sum(token != row[0] for (token, _), row in zip(gold, rows, strict=True))
        if rewritten:  # a system that normalised tokens (`gt` -> `get`), aligned by position
            print(f"{path.name}: {rewritten} tokens written otherwise, aligned by position")
        systems[path.stem] = [label for _, label in rows]
    print(f"WNUT-17 test: {len(gold)} tokens, {len(spans)} persons (handles left out)")
    print(f"{'system':<18}{'found whole':>13}{'any entity':>12}{'left whole':>12}")
    rows_out = [(name, [labels]) for name, labels in systems.items()]
    rows_out.append((f"all {len(systems)} together", list(systems.values())))
    for name, labels in rows_out:
        whole, any_entity, left = score(spans, labels)
        print(f"{name:<18}{whole:>13.1%}{any_entity:>12.1%}{left:>12.1%}")


if __name__ == "__main__":
    main()
