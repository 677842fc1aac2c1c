"""Code in a text: fenced blocks, inline code and lines that read as code.

The toxicity screen scores a text's prose only (`screening.toxicity.score.sentences`), and the person
reader reads around its code (`screening.persons.person_model`, `code_ranges`): both see code as this
module does. Standard library only, so any environment that runs the screen's code can import it.
"""

from __future__ import annotations

import html
import re

_FENCE = re.compile(r"^[ \t]*(```|~~~)[^\n]*\n.*?(?:^[ \t]*\1[^\n]*$|\Z)", re.MULTILINE | re.DOTALL)
_INLINE_CODE = re.compile(r"`[^`\n]+`")
_CODE_START = re.compile(
    r"^\s*(?:[$#>%]\s|>>>|\.\.\.\s|#!|//|/\*|\*/|<[/!?]?[A-Za-z]|[{}\[\]()]"
    r"|let\s+(?:mut\s+)?[A-Za-z_$][\w$]*\s*(?:[=:;,]|$)"
    r"|(?:def|class|import|from\s+\S+\s+import|return|elif|else:|try:|except|finally:|with\s|async\s"
    r"|await\s|function\b|const\s|var\s|public\s|private\s|protected\s|static\s|void\s"
    r"|int\s|char\s|#include|#define|package\s|using\s|namespace\s|fn\s|func\s|SELECT\s|INSERT\s"
    r"|UPDATE\s|DELETE\s|CREATE\s|echo\s|sudo\s|cd\s|ls\b|rm\s|git\s|pip\s|npm\s|curl\s"
    r"|kill\s+[-%$\d]|export\s|chmod\s|mkdir\s|if\s*\(|for\s*\(|while\s*\(|switch\s*\(|catch\s*\())"
)
_CODE_END = re.compile(r"[;{}]\s*$|\)\s*:\s*$|=>\s*$")
_SYMBOLS = set("{}[]()<>=;$\\|&*/+:%^~`")


def _is_code_line(line: str) -> bool:
    """A line that reads as code: a typical start or end, or more than 1 in 5 characters symbols
    (a few marks do not make prose code: `I'm done (finally).`)."""
    text = line.strip()
    if not text:
        return False
    if _CODE_START.match(text) or _CODE_END.search(text):
        return True
    symbols = sum(c in _SYMBOLS for c in text)
    return len(text) >= 8 and symbols / len(text) > 0.2


def prose(text: str) -> str:
    """The text without its code: fenced blocks, inline code and lines that read as code.
    HTML character references are read first (`&#128514;` is an emoji, not code)."""
    text = _INLINE_CODE.sub(" ", _FENCE.sub("\n", html.unescape(text)))
    return "\n".join(line for line in text.split("\n") if not _is_code_line(line))


def may_hold_code(text: str) -> bool:
    """A text of several lines or with a backtick: one that can hold code (a chat line, a tweet
    cannot, for `code_ranges`), and reads as a document (an answer, a manual)."""
    return "\n" in text or "`" in text


def code_ranges(text: str) -> list[tuple[int, int]]:
    """Where `prose` finds code in `text`, as character ranges of the text as written: fenced
    blocks, inline code and lines that read as code (`screening.persons.person_model` reads around them)."""
    ranges = [m.span() for m in _FENCE.finditer(text)]
    ranges += [m.span() for m in _INLINE_CODE.finditer(text)]
    at = 0
    for line in text.split("\n"):
        if _is_code_line(line):
            ranges.append((at, at + len(line)))
        at += len(line) + 1
    return sorted(ranges)
