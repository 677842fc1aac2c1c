"""Rebuild `titus.json`, the second vendored credential catalogue, from a Titus checkout.

    git clone https://github.com/praetorian-inc/titus && git -C titus checkout v1.1.23
    python screening/data/build/update_titus.py titus   # or: EXPORT_DIR TAG COMMIT

Titus (praetorian-inc/titus, Apache-2.0) is the maintained successor of Nosey Parker (retired in
February 2026): its `pkg/rule/rules/*.yml` hold Nosey Parker's rules (`np.*`) and Kingfisher's
(`kingfisher.*`, MongoDB's scanner), each a Rust-dialect regex whose capture group is the secret,
and for many a minimum entropy and character-class requirements. This script (run at update time
only; nothing is read from the network at run time) keeps every rule Titus reports, converts its
regex to Python `re` syntax, derives the literals one of which every match must hold (the
keywords of `screening.finders.credential_rules`' prefilter: Titus has none, Hyperscan needs none), checks
the converted rule on its own examples (one matching none of them is left out; its keywords must
be in every example it matches) and on stress texts made of them (one that backtracks is left
out), and writes the kept rules with the source commit and the reason for every rule left out.
Run tests/screening/test_credentials.py afterwards.
"""

from __future__ import annotations

import itertools
import json
import multiprocessing
import re
import subprocess
import sys
import time
from pathlib import Path
from re import _constants as C
from re import _parser

import yaml

HERE = Path(__file__).resolve().parents[1]  # screening/data, where the built files go
OUT = HERE / "titus.json"
MIN_KEYWORD = 3  # a shorter literal would let the rule run on nearly every text
MAX_KEYWORDS = 64
# Python's `re` backtracks where Titus' engines (Hyperscan, Rust) do not: a rule taking longer
# than this on one of the stress texts below is left out (the slow ones take seconds).
MAX_SECONDS = 0.05


# --- Rust regex -> Python re --------------------------------------------------------------------
_FLAGS = re.compile(r"\(\?([a-zA-Z]+)(-[a-zA-Z]+)?([:)])")


def strip_verbose(pattern: str) -> str:
    """A Rust `(?x)` pattern with its whitespace and comments removed, the `x` flag dropped.

    Rust ignores whitespace (and `#` comments) everywhere in verbose mode, inside character
    classes too; Python's re.VERBOSE keeps it inside classes, so the pattern is flattened here."""
    pattern = re.sub(r"\(\?#[^)]*\)", "", pattern)
    verbose = any("x" in m.group(1) for m in _FLAGS.finditer(pattern))
    if verbose:
        out: list[str] = []
        i, in_class = 0, False
        while i < len(pattern):
            c = pattern[i]
            if c == "\\":
                out.append(pattern[i : i + 2])
                i += 2
                continue
            if c.isspace():
                i += 1
                continue
            if c == "#" and not in_class:
                end = pattern.find("\n", i)
                i = len(pattern) if end == -1 else end
                continue
            if c == "[" and not in_class:
                in_class = True
                out.append(c)
                if pattern[i + 1 : i + 2] == "^":
                    out.append("^")
                    i += 1
                if pattern[i + 1 : i + 2] == "]":  # a leading `]` is a literal
                    out.append("]")
                    i += 1
            elif c == "[" and pattern.startswith("[:", i):
                end = pattern.find(":]", i)
                out.append(pattern[i : end + 2])
                i = end + 2
                continue
            elif c == "]" and in_class:
                in_class = False
                out.append(c)
            else:
                out.append(c)
            i += 1
        pattern = "".join(out)

    def drop_x(m: re.Match[str]) -> str:
        on = m.group(1).replace("x", "")
        off = (m.group(2) or "").replace("x", "")
        off = "" if off == "-" else off
        if not on and not off:
            return "" if m.group(3) == ")" else "(?:"
        return f"(?{on}{off}{m.group(3)}"

    return (
        _FLAGS.sub(drop_x, pattern)
        .replace("(?<", "(?P<")
        .replace("(?P<=", "(?<=")
        .replace("(?P<!", "(?<!")
    )


# --- Keywords: literals every match holds -------------------------------------------------------
def _exact(item: tuple) -> set[str] | None:
    """The strings (lower-cased) `item` can match, when they are few; else None."""
    op, av = item
    if op is C.LITERAL:
        return {chr(av).lower()}
    if op in (C.AT, C.ASSERT, C.ASSERT_NOT):
        return {""}
    if op is C.IN:
        chars: set[str] = set()
        for kind, value in av:
            if kind is C.LITERAL:
                chars.add(chr(value).lower())
            elif kind is C.RANGE and value[1] - value[0] < 4:
                chars.update(chr(c).lower() for c in range(value[0], value[1] + 1))
            else:
                return None
        return chars if 0 < len(chars) <= 4 else None
    if op is C.SUBPATTERN:
        return _exact_seq(av[-1])
    if op is C.BRANCH:
        out: set[str] = set()
        for seq in av[1]:
            s = _exact_seq(seq)
            if s is None:
                return None
            out |= s
        return out if len(out) <= MAX_KEYWORDS else None
    if op in (C.MAX_REPEAT, C.MIN_REPEAT, C.POSSESSIVE_REPEAT):
        lo, hi, seq = av
        s = _exact_seq(seq)
        if s is None or lo != hi or lo > 8:
            return None
        return _product([s] * lo)
    return None


def _product(sets: list[set[str]]) -> set[str] | None:
    out = {""}
    for s in sets:
        out = {a + b for a, b in itertools.product(out, s)}
        if len(out) > MAX_KEYWORDS:
            return None
    return out


def _exact_seq(seq) -> set[str] | None:
    sets = [_exact(item) for item in seq]
    return None if any(s is None for s in sets) else _product(sets)  # type: ignore[arg-type]


def _better(a: set[str] | None, b: set[str] | None) -> set[str] | None:
    def key(s: set[str] | None) -> tuple[int, int]:
        return (-1, 0) if not s else (min(map(len, s)), -len(s))

    return a if key(a) >= key(b) else b


def _prefix(seq) -> set[str]:
    """The fixed strings every match of `seq` starts with (lower-cased; {""} when none)."""
    run: set[str] = {""}
    for item in seq:
        s = _exact(item)
        if s is None:
            s = _item_prefix(item)
            joined = _product([run, s])
            return run if joined is None else joined
        joined = _product([run, s])
        if joined is None:
            return run
        run = joined
    return run


def _item_prefix(item: tuple) -> set[str]:
    op, av = item
    if op is C.SUBPATTERN:
        return _prefix(av[-1])
    if op in (C.MAX_REPEAT, C.MIN_REPEAT, C.POSSESSIVE_REPEAT) and av[0] >= 1:
        return _prefix(av[2])
    if op is C.BRANCH:
        out = set().union(*(_prefix(b) for b in av[1]))
        return out if len(out) <= MAX_KEYWORDS else {""}
    return {""}


def required(seq) -> set[str] | None:
    """A set of literals (lower-cased) one of which every match of `seq` holds: the best of the
    runs of consecutive fixed pieces, and of what sub-patterns that must match require."""
    best: set[str] | None = None
    run: set[str] = {""}
    for item in seq:
        s = _exact(item)
        if s is not None:
            joined = _product([run, s])
            if joined is None:  # too many strings: close the run, start again from this piece
                best, run = _better(best, run), s
            else:
                run = joined
            continue
        best, run = _better(best, _product([run, _item_prefix(item)]) or run), {""}
        op, av = item
        inner: set[str] | None = None
        if op is C.SUBPATTERN:
            inner = required(av[-1])
        elif op in (C.MAX_REPEAT, C.MIN_REPEAT, C.POSSESSIVE_REPEAT) and av[0] >= 1:
            inner = required(av[2])
        elif op is C.BRANCH:
            parts = [required(b) for b in av[1]]
            if all(parts):
                union = set().union(*parts)  # type: ignore[arg-type]
                inner = union if len(union) <= MAX_KEYWORDS else None
        best = _better(best, inner)
    return _better(best, run)


def keywords(pattern: str) -> list[str]:
    """The literals of `pattern` (Python syntax) one of which every match holds, or [] when no
    such literals of MIN_KEYWORD characters or more are found (the rule runs on every text)."""
    found = required(_parser.parse(pattern))
    if not found or min(map(len, found)) < MIN_KEYWORD:
        return []
    # a literal that holds another is redundant: the shorter one is found wherever it is
    return sorted(k for k in found if not any(o != k and o in k for o in found))


# --- Building the catalogue ---------------------------------------------------------------------
# Named groups that hold the secret (`client_secret`, `password`, `PRIVATE_KEY`, `B64`), not
# an identifier beside it (`key_id`, `token_id`, `client_id`, `host`).
_SECRET_NAME = re.compile(r"(?i)(?:token|secret|pass|pwd|key|b64|val)(?!_?id)")


def _secret_group(compiled: re.Pattern[str]) -> int | None:
    """The group that holds the secret: one named `token`, else the last one whose name says it
    is a secret; None: no group names one (the finding then spans every group that matched:
    `user:password@host`, a key block's header to its end)."""
    names = {name.lower(): i for name, i in compiled.groupindex.items()}
    if "token" in names:
        return names["token"]
    secret = [i for name, i in names.items() if _SECRET_NAME.search(name)]
    return max(secret) if secret else None


def _left_out(rule: dict) -> str | None:
    categories = set(rule.get("categories") or [])
    if rule.get("visible") is False:
        return "not reported by Titus (a helper rule: an identifier another rule needs)"
    if "identifier" in categories and not categories & {"secret", "hashed"}:
        return f"finds identifiers, not secrets ({', '.join(sorted(categories))})"
    return None


def build(checkout: Path) -> dict:
    rules_dir = checkout / "pkg" / "rule" / "rules"
    kept: list[dict] = []
    skipped: dict[str, str] = {}
    for path in sorted(rules_dir.glob("*.yml")):
        for rule in yaml.safe_load(path.read_text(encoding="utf-8")).get("rules") or []:
            rule_id = rule["id"]
            if rule_id in {k["id"] for k in kept}:
                skipped[rule_id + " (again)"] = f"a second rule of the same id in {path.name}"
                continue
            reason = _left_out(rule)
            if reason:
                skipped[rule_id] = reason
                continue
            try:
                pattern = _to_python(rule["pattern"])
                compiled = re.compile(pattern, re.ASCII)
            except (re.error, ValueError) as exc:
                skipped[rule_id] = f"its regex does not translate to Python: {exc}"
                continue
            examples = [e for e in rule.get("examples") or [] if isinstance(e, str)]
            slow = _slowest(compiled, examples)
            if slow > MAX_SECONDS:
                skipped[rule_id] = (
                    f"backtracks in Python's re: over {min(slow, 2.0):.2f} s on a stress text "
                    "of its examples"
                )
                continue
            words = keywords(pattern)
            if examples and not any(compiled.search(e) for e in examples):
                skipped[rule_id] = f"translated regex misses its own examples ({examples[0]!r})"
                continue
            unsound = [
                e
                for e in examples
                if words and compiled.search(e) and not any(w in e.lower() for w in words)
            ]
            if unsound:
                raise AssertionError(f"{rule_id}: keywords {words} not in example {unsound[0]!r}")
            requirements = dict(rule.get("pattern_requirements") or {})
            requirements.pop("checksum", None)  # vendor checksums: not reproduced here
            kept.append(
                {
                    "id": rule_id,
                    "name": rule["name"],
                    "regex": pattern,
                    "keywords": words,
                    "entropy": float(rule.get("min_entropy") or 0.0),
                    "group": _secret_group(compiled),
                    "requirements": requirements,
                    "categories": sorted(rule.get("categories") or []),
                }
            )
    return {"rules": kept, "skipped": skipped}


def _stress_texts(examples: list[str]) -> list[str]:
    """Each example, its first two thirds (a near miss), and all of them run together with
    filler between: where a backtracking engine blows up, if anywhere."""
    filler = "x = 1  # a line of code, another, and some words\n" * 40
    out = []
    for e in examples:
        out += [e, e[: len(e) * 2 // 3], e[: len(e) * 2 // 3] + filler + e]
    out.append(filler.join(examples))
    return out


def _slowest(compiled: re.Pattern[str], examples: list[str], limit: float = 2.0) -> float:
    """The longest time the rule takes on one stress text; run in a child process, since a
    backtracking `re` search cannot be interrupted: one still running after `limit` s is
    killed (inf)."""
    ctx = multiprocessing.get_context("fork")
    receive, send = ctx.Pipe(duplex=False)

    def measure() -> None:
        worst = 0.0
        for text in _stress_texts(examples):
            start = time.perf_counter()
            for _ in compiled.finditer(text):
                pass
            worst = max(worst, time.perf_counter() - start)
        send.send(worst)

    child = ctx.Process(target=measure)
    child.start()
    child.join(limit)
    if child.is_alive():
        child.kill()
        child.join()
        return float("inf")
    return receive.recv()


def _to_python(pattern: str) -> str:
    from screening.finders.go_regex import go_to_python  # RE2 and Rust share the rest

    return go_to_python(strip_verbose(pattern.strip()))


def _git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(root), *args], capture_output=True, text=True, check=True
    ).stdout.strip()


def main(checkout: str, tag: str | None = None, commit: str | None = None) -> None:
    """`checkout`: a Titus work tree (or an export of one: then name its tag and commit)."""
    root = Path(checkout)
    sys.path.insert(0, str(HERE.parents[1]))  # the repository root
    commit = commit or _git(root, "rev-parse", "HEAD")
    tag = tag or _git(root, "describe", "--tags", "--always")
    catalogue = build(root)
    data = {
        "source": f"titus {tag} commit {commit}",
        "url": f"https://github.com/praetorian-inc/titus/tree/{commit}/pkg/rule/rules",
        "licence": "Apache-2.0 (Copyright 2026 Praetorian Security, Inc.; Nosey Parker's and "
        "Kingfisher's rules: see titus.LICENSE and titus.NOTICE)",
        "built_by": "screening/data/build/update_titus.py",
        **catalogue,
    }
    OUT.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    (HERE / "titus.LICENSE").write_bytes((root / "LICENSE").read_bytes())
    (HERE / "titus.NOTICE").write_bytes((root / "NOTICE").read_bytes())
    runs_always = [r["id"] for r in catalogue["rules"] if not r["keywords"]]
    print(
        f"{data['source']}: {len(catalogue['rules'])} rules kept, {len(catalogue['skipped'])} "
        f"left out, {len(runs_always)} without keywords: {', '.join(runs_always)}"
    )
    for rule_id, reason in catalogue["skipped"].items():
        print(f"  left out {rule_id}: {reason}")


if __name__ == "__main__":
    main(*sys.argv[1:4])
