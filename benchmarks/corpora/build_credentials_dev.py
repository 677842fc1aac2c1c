"""Build `credentials_dev.jsonl`: credentials written by others, from Nosey Parker's rule examples.

    python benchmarks/corpora/build_credentials_dev.py RULES_DIR [--out PATH]

RULES_DIR is `crates/noseyparker/data/default/builtin/rules` of a praetorian-inc/noseyparker
checkout (Apache-2.0). Every rule there lists `examples`: snippets of code, config and shell in
which the rule must find a secret. Each example becomes one record: the text, the secret (the
last non-empty capture group of the rule's own pattern, run here with Python `re`), the rule's id
and name. Only rules of category `secret` count (not identifiers such as bucket names or client
ids, not password hashes, not test values). Examples whose pattern does not run under Python
`re`, or does not match, are counted and left out. Nothing here comes from gitleaks.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from screening.finders.go_regex import UntranslatableRegex, go_to_python

_SECRET_WORDS = re.compile(r"(?i)password|secret|token|key|credential|pass\b|pwd")
_NOT_SECRET_WORDS = re.compile(r"(?i)host|user|name|\bid\b|port|account|region|domain")


def _secret_group(source: str, groups: int) -> int:
    """Which capture group holds the secret: the one whose `(?# ...)` comment says so, else the
    last one whose comment does not name a host, user or id (the last one when none)."""
    notes: dict[int, str] = {}
    index = 0
    for line in source.split("\n"):
        bare = re.sub(r"\\.|\[(?:\\.|[^\]])*\]", "", line)  # escapes and classes hold no group
        opened = len(re.findall(r"\((?!\?)", bare))
        note = " ".join(re.findall(r"\(\?#([^)]*)\)", line))
        for g in range(index + 1, index + opened + 1):
            notes[g] = note
        index += opened
    named = [g for g in range(1, groups + 1) if _SECRET_WORDS.search(notes.get(g, ""))]
    if named:
        return named[0]
    plain = [g for g in range(1, groups + 1) if not _NOT_SECRET_WORDS.search(notes.get(g, ""))]
    return (plain or list(range(1, groups + 1)) or [0])[-1]


def _secret(pattern: re.Pattern[str], group: int, text: str) -> str | None:
    m = pattern.search(text)
    if m is None:
        return None
    return m.group(group) or None


# Categories of rules that find things other than credentials: identifiers (bucket names,
# client ids, hostnames), password hashes, test values.
_NOT_CREDENTIALS = frozenset({"identifier", "hashed", "test"})


# A value that names a variable or masks one is no credential: $Password, %nothing%, ######
_PLACEHOLDER = re.compile(r"[\"']?(?:\$\w+|\$\{[^}]*\}|%\w+%|#+|#\{.*|[A-Z_]+)[\"']?\s*")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("rules_dir", type=Path)
    parser.add_argument(
        "--out", type=Path, default=Path(__file__).with_name("credentials_dev.jsonl")
    )
    args = parser.parse_args()
    records, untranslated, unmatched = [], 0, 0
    kinds: Counter[str] = Counter()
    for path in sorted(args.rules_dir.glob("*.yml")):
        for rule in yaml.safe_load(path.read_text())["rules"]:
            categories = set(rule.get("categories") or [])
            if "secret" not in categories or categories & _NOT_CREDENTIALS:
                kinds[",".join(sorted(categories & _NOT_CREDENTIALS)) or "no secret"] += len(
                    rule.get("examples") or []
                )
                continue
            try:
                pattern = re.compile(go_to_python(rule["pattern"]))
            except (re.error, UntranslatableRegex):
                untranslated += len(rule.get("examples") or [])
                continue
            group = _secret_group(rule["pattern"], pattern.groups)
            for text in rule.get("examples") or []:
                secret = _secret(pattern, group, text)
                if not secret:
                    unmatched += 1
                    continue
                if _PLACEHOLDER.fullmatch(secret):
                    kinds["placeholder"] += 1
                    continue
                records.append(
                    {
                        "text": text,
                        "secrets": [secret],
                        "rule": rule["id"],
                        "name": rule["name"],
                        "source": "noseyparker",
                    }
                )
    with args.out.open("w", encoding="utf-8") as f:
        for record in records:
            f.write(json.dumps(record, ensure_ascii=False) + "\n")
    print(
        f"{len(records)} records; left out: {untranslated} untranslated, {unmatched} unmatched, "
        f"not credentials: {dict(kinds)}"
    )


if __name__ == "__main__":
    main()
