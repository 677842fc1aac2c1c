"""Go's RE2 syntax, as gitleaks' and Titus' catalogues write their rules, turned into Python `re`
(`go_to_python`; `UntranslatableRegex` for what has no equivalent here).
"""

from __future__ import annotations

import re


# --- Go RE2 -> Python re ------------------------------------------------------------------------
class UntranslatableRegex(ValueError):
    """A catalogue regex uses RE2 syntax that has no Python `re` equivalent here."""


_POSIX = {
    "alnum": "a-zA-Z0-9",
    "alpha": "a-zA-Z",
    "digit": "0-9",
    "xdigit": "0-9a-fA-F",
    "upper": "A-Z",
    "lower": "a-z",
    "space": r"\s",
    "word": r"\w",
    "punct": r"!-/:-@\[-`{-~",
    "blank": r" \t",
}
_INLINE_FLAGS = re.compile(r"\(\?([imsU]+)(?:-([imsU]+))?\)")


def go_to_python(pattern: str) -> str:
    """An RE2 pattern as a Python `re` pattern with the same meaning (compile with re.ASCII).

    RE2 lets `(?i)` stand anywhere and apply to the rest of its group, every alternative
    included; Python allows global flags only at the start, so a later `(?i)` becomes a scoped
    `(?i:...)` closed at each `|` and reopened after it, and closed before its group's `)`.
    """
    if re.search(r"\\[pP]|\\Q|\\C", pattern):
        raise UntranslatableRegex(f"unsupported RE2 escape in {pattern[:60]!r}")
    out: list[str] = []
    # per open group: the scoped flag groups opened inside it (their flag text)
    scopes: list[list[str]] = [[]]
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\":
            nxt = pattern[i + 1 : i + 2]
            out.append("\\Z" if nxt == "z" else pattern[i : i + 2])
            i += 2
            continue
        if c == "[":
            j, cls = _char_class(pattern, i)
            out.append(cls)
            i = j
            continue
        if c == "(":
            m = _INLINE_FLAGS.match(pattern, i)
            if m:
                flags = m.group(1).replace("U", "")
                off = (m.group(2) or "").replace("U", "")
                if "U" in m.group(0):
                    raise UntranslatableRegex(f"ungreedy flag in {pattern[:60]!r}")
                spec = flags + (f"-{off}" if off else "")
                if not out and not off:  # leading global flags: Python takes them as they are
                    out.append(f"(?{flags})")
                else:
                    out.append(f"(?{spec}:")
                    scopes[-1].append(spec)
                i = m.end()
                continue
            scopes.append([])
            out.append(c)
            i += 1
            continue
        if c == "|" and scopes[-1]:
            specs = scopes[-1]
            out.append(")" * len(specs) + "|" + "".join(f"(?{s}:" for s in specs))
            i += 1
            continue
        if c == ")":
            out.append(")" * len(scopes.pop()) + ")")
            if not scopes:
                raise UntranslatableRegex(f"unbalanced parenthesis in {pattern[:60]!r}")
            i += 1
            continue
        out.append(c)
        i += 1
    out.append(")" * len(scopes.pop()))
    if scopes:
        raise UntranslatableRegex(f"unbalanced parenthesis in {pattern[:60]!r}")
    return "".join(out)


def _char_class(pattern: str, i: int) -> tuple[int, str]:
    """The bracket expression at pattern[i] == "[": (index after it, its Python spelling)."""
    out = ["["]
    j = i + 1
    if pattern[j : j + 1] == "^":
        out.append("^")
        j += 1
    first = True
    while j < len(pattern):
        c = pattern[j]
        if c == "]" and not first:
            out.append("]")
            return j + 1, "".join(out)
        first = False
        if c == "\\":
            out.append(pattern[j : j + 2])
            j += 2
            continue
        if pattern.startswith("[:", j):
            end = pattern.find(":]", j + 2)
            name = pattern[j + 2 : end] if end != -1 else ""
            if name.startswith("^") or name not in _POSIX:
                raise UntranslatableRegex(f"POSIX class {name!r} in {pattern[:60]!r}")
            out.append(_POSIX[name])
            j = end + 2
            continue
        # characters Python would read as set operations or nested sets: escape them
        out.append("\\" + c if c in "[&~|" or (c == "-" and pattern[j + 1 : j + 2] == "-") else c)
        j += 1
    raise UntranslatableRegex(f"unterminated character class in {pattern[:60]!r}")
