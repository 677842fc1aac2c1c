"""Person names written by others: CoNLL files (WNUT-17, Broad Twitter Corpus) as JSON lines.

    python benchmarks/corpora/names_from_conll.py wnut17-dev=emerging.dev.conll \
        btc-dev=btc.dev.conll --out benchmarks/corpora/names_dev.jsonl

Each sentence becomes `{"source", "text", "persons": [[start, end], ...], "handles": [...]}`: the tokens joined
with spaces except before closing punctuation and inside contractions ("I ' m" -> "I'm"), the
person spans (B-/I-person, B-/I-PER) at their character offsets. A person span that starts with
"@" (a Twitter handle, which the BTC labels PER) goes to `handles`, not `persons`: a handle is no
name as people write it (a finding on one is neither a name found nor a false positive). benchmarks/corpora/SOURCES.md says where the files come from and their licence.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

_NO_SPACE_BEFORE = {",", ".", "!", "?", ";", ":", ")", "]", "%", "...", "n't"}
_CLITICS = {"s", "m", "ll", "re", "ve", "d", "t"}


def sentences(path: Path):
    """(tokens, labels) per blank-line-separated sentence of a two-column CoNLL file."""
    tokens: list[str] = []
    labels: list[str] = []
    for line in [*path.read_text(encoding="utf-8").splitlines(), ""]:
        # A line of white space only (WNUT-17's training file writes a tab) ends a sentence.
        parts = line.split("\t") if "\t" in line else line.split()
        if line.strip() and len(parts) >= 2:
            tokens.append(parts[0])
            labels.append(parts[-1])
        elif tokens:
            yield tokens, labels
            tokens, labels = [], []


def record(source: str, tokens: list[str], labels: list[str]) -> dict:
    text = ""
    starts: list[int] = []
    for i, token in enumerate(tokens):
        previous = tokens[i - 1] if i else ""
        glue = (
            not text
            or token in _NO_SPACE_BEFORE
            or (token == "'" and i + 1 < len(tokens) and tokens[i + 1].lower() in _CLITICS)
            or (previous == "'" and token.lower() in _CLITICS and i > 1)
            or previous in {"(", "[", "#", "@"}
        )
        text += "" if glue else " "
        starts.append(len(text))
        text += token
    persons: list[list[int]] = []
    for i, label in enumerate(labels):
        kind = label[2:].lower()
        if kind not in ("person", "per"):
            continue
        end = starts[i] + len(tokens[i])
        after_at = i > 0 and tokens[i - 1] == "@" and labels[i - 1][2:].lower() == kind
        if (label.startswith("I-") or after_at) and persons and persons[-1][1] >= starts[i] - 1:
            persons[-1][1] = end
        else:
            persons.append([starts[i], end])
    handles = [p for p in persons if text[p[0] : p[1]].startswith("@")]
    persons = [p for p in persons if p not in handles]
    return {"source": source, "text": text, "persons": persons, "handles": handles}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("inputs", nargs="+", help="SOURCE=PATH of a CoNLL file")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    with args.out.open("w", encoding="utf-8") as out:
        for item in args.inputs:
            source, _, path = item.partition("=")
            for tokens, labels in sentences(Path(path)):
                out.write(json.dumps(record(source, tokens, labels), ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
