"""What a credential value looks like, and the words around it that say what it is: a
`Finding`, entropy and character classes, code expressions, the context before a value.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

os.environ.setdefault("TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS", "")  # offline: bundled suffix list

from detect_secrets.plugins.high_entropy_strings import (
    Base64HighEntropyString,
    HexHighEntropyString,
)


@dataclass(frozen=True, order=True)
class Finding:
    """A credential in one text: [start, end) covers the secret value only."""

    start: int
    end: int
    entity: str
    score: float


# --- What a credential value looks like -------------------------------------------------------
B64 = Base64HighEntropyString()
HEX = HexHighEntropyString()


def entropy(value: str) -> float:
    """Shannon entropy per character over the base64 alphabet (detect-secrets' helper)."""
    return B64.calculate_shannon_entropy(value)


# Words that follow "password is" / "token:" in tickets without being a credential.
NOT_SECRETS = frozenset(
    """
    incorrect wrong invalid expired expiring correct required missing empty blank too not being
    still the my a an reset changed change ok okay fine working rejected locked weak strong short
    long hidden masked encrypted hashed stored saved set unknown none null nil undefined n/a na
    redacted same different new old temporary temp true false yes no disabled enabled accepted
    valid field box prompt manager policy rotation length requirements link email page screen
    form button section tab window dialog settings option sent attached below above here there
    shown visible revoked compromised leaked case sensitive mandatory optional updated generated
    sms code text message""".split()  # noqa: SIM905
)
MASKED = re.compile(
    r"[*•xX#.\-_]{3,}|<[^>]*>|\[[^\]]*\]|\$\{[^}]*\}|\{\{[^}]*\}\}|%\w+%|\$[A-Z_][A-Z0-9_]*"
)
NOT_A_VALUE = re.compile(
    r"(?i)[a-z][a-z0-9+.\-]*://\S*"  # a URL (one with user:password@ is caught on its own)
    r"|[\w.+\-]+@[\w\-]+\.[\w.\-]+"  # an email address
    r"|(?:[a-z]:\\|~?/|\\\\)[\w.\-]+(?:[\\/][\w.\-]*)+|~?/[a-z]+"  # a path
    r"|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"  # a UUID
    r"|v?\d+(?:\.\d+){1,3}(?:[\-+][\w.]+)?"  # a version
    r"|[0-9a-f]{2}(?:[:\-][0-9a-f]{2}){5}"  # a MAC address
    r"|\d{1,4}(?:[\-/.]\d{1,4}){2}"  # a date
    r"|#?\d+"  # a plain number
)
TRAILING = ".,;:?!)]}>'\"\u201d\u2019"
_PASSPHRASE = re.compile(r"[a-z]+(?:[\-_.][a-z]+){2,}")


def _classes(value: str) -> int:
    if re.fullmatch(r"[A-Z][a-z]+", value):  # a capitalised word is one kind of character
        return 1
    return sum(
        (
            any(c.islower() for c in value),
            any(c.isupper() for c in value),
            any(c.isdigit() for c in value),
            any(not c.isalnum() for c in value),
        )
    )


def mixed(value: str) -> bool:
    """Letters with digits, or upper with lower case inside words: not a hyphenated word."""
    letters, digits = any(c.isalpha() for c in value), any(c.isdigit() for c in value)
    return (letters and digits) or bool(re.search(r"[a-z][A-Z]|[A-Z]{2}[a-z]", value))


# Words of code that, inside an identifier, say it names a variable, not a value.
_CODE_WORDS = frozenset(
    """
    password passwd pwd pass passphrase passcode token tokens secret secrets key keys credential
    credentials creds cred auth api apikey input value val hash hashed get set env environ getenv
    config conf settings setting field var str param params arg args kwargs self this cls request
    req response resp headers header form data new old current default none null true false os
    user username login opts options props state ctx context payload body json dict obj result
    values encode decode encrypt decrypt generate make create load read fetch from to is lambda
    bytes int float bool list tuple dict object type any optional callable bytearray""".split()  # noqa: SIM905
)
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z_]*(?:\.[A-Za-z_]\w*)*")
_IDENTIFIER_PARTS = re.compile(r"[._]|(?<=[a-z])(?=[A-Z])")


def code_expression(value: str, following: str = "") -> bool:
    """Whether an unquoted `value` after `key =` is code, not a secret: a variable, attribute,
    call or subscript (`credentials=credentials`, `password=password_input`, `token =
    get_token()`, `settings.SECRET_KEY`, `os.environ["API_KEY"]`) or another assignment."""
    if re.fullmatch(r"[a-z_]{2,}=[A-Za-z_][\w.]*", value):  # `project=project_id`: a pair
        return True
    if re.fullmatch(r"[A-Za-z_][\w.]*[(\[].*", value):  # `os.environ[...]`, `get(...)`
        return True
    if not _IDENTIFIER.fullmatch(value):
        return False  # digits or symbols: a secret can look like that, code rarely
    if following[:1] in ("(", "["):
        return True
    parts = [p.lower() for p in _IDENTIFIER_PARTS.split(value) if p]
    if value.lower() in _CODE_WORDS or (len(parts) > 1 and any(p in _CODE_WORDS for p in parts)):
        return True
    if "." in value:  # an attribute (`ssl.TLSVersion`), unless a lower-case dotted passphrase
        return not _PASSPHRASE.fullmatch(value)
    # CamelCase words: a class name (`BlockMappingStartToken`), not random letters (`RRxkkBDFSV`)
    return bool(re.fullmatch(r"_*(?:[A-Z]{1,3}[a-z]{2,}){2,}[A-Z]{0,3}", value))


def credible(value: str, strength: str, following: str = "") -> bool:
    """Whether `value`, found after a credential word, looks like a secret.

    strength: "quoted" (in quotes: any 4+ characters), "assign" (`=`: one word of 5+), "prose"
    ("is", ":", a space: 6+ characters of two kinds, or a 3-word joined passphrase).
    following: the text right after an unquoted value (a `(` makes it a call).
    """
    if len(value) < 4 or len(value) > 200 or value.lower() in NOT_SECRETS:
        return False
    if MASKED.fullmatch(value) or NOT_A_VALUE.fullmatch(value):
        return False
    if strength == "quoted":  # an upper-case name in quotes is an environment variable's name
        return len(value.split()) <= 8 and not re.fullmatch(r"[A-Z][A-Z_]*", value)
    if code_expression(value, following):
        return False
    if any(c.isspace() for c in value):
        return False
    if strength == "assign":
        return len(value) >= 5
    if value.islower() and re.fullmatch(r"[a-z\-]+", value):  # hyphenated words: passphrase only
        return bool(_PASSPHRASE.fullmatch(value)) and len(value) >= 12
    return len(value) >= 6 and (_classes(value) >= 2 or bool(_PASSPHRASE.fullmatch(value)))


# --- Context words ------------------------------------------------------------------------------
PW_WORD = r"(?:pass(?:word|wd|phrase|code)?s?|pwd|pw|passwort|contrase(?:ñ|n)a)"
KEY_WORD = (
    r"(?:secrets?|tokens?|api[_\- ]?keys?|apikeys?|access[_\- ]?keys?|auth[_\- ]?keys?"
    r"|private[_\- ]?keys?|secret[_\- ]?keys?|keys?|credentials?|creds|auth)"
)
_CRED_CONTEXT = re.compile(
    rf"(?i)(?<![a-z]){PW_WORD}(?![a-z])|(?<![a-z]){KEY_WORD}(?![a-z])"
    r"|(?<![a-z])(?:log|sign)[\s\-]?(?:in|on)(?![a-z])|(?<![a-z])login(?![a-z])"
)
_PW_CONTEXT = re.compile(rf"(?i)(?<![a-z]){PW_WORD}(?![a-z])|log[\s\-]?in|sign[\s\-]?in")
# Words that say the random string next to them is an identifier or a checksum.
ID_CONTEXT = re.compile(
    r"(?i)(?<![a-z])(?:sha(?:-?\d+)?|md5|hash(?:es)?|checksums?|digests?|commits?|revision|rev"
    r"|builds?|orders?|invoices?|tracking|shipments?|parcels?|(?:request|req|trace|span"
    r"|correlation|session|transaction|txn|message|device|user|customer|account|key|client"
    r"|tenant|subscription|object|file|job|run|event)[\s_\-]?ids?|ids?|reference|ref|refs"
    r"|tickets?|cases?|sku|serial|part|model|versions?|uuid|guid|etag|fingerprint|image|docker"
    r"|container|branch|tag|pr|mac|confirmation|receipt|booking|voucher|coupon|promo)(?![a-z])"
)


def context_before(text: str, start: int, width: int = 60) -> str:
    """Up to `width` characters before `start`: this line, or the previous one if this is empty."""
    line_start = text.rfind("\n", 0, start) + 1
    before = text[max(line_start, start - width) : start]
    if not before.strip() and line_start > 0:
        prev_start = text.rfind("\n", 0, line_start - 1) + 1
        before = text[max(prev_start, line_start - 1 - width) : line_start - 1] + " "
    return _SENTENCE_END.split(before)[-1]


_SENTENCE_END = re.compile(r"[.!?](?:\s+|$)(?=[A-Z\s]|$)")


def credential_context(before: str) -> str | None:
    """PASSWORD or API_KEY when a credential word is the last word of note before a value."""
    cred = list(_CRED_CONTEXT.finditer(before))
    if not cred:
        return None
    last = cred[-1]
    ids = [m for m in ID_CONTEXT.finditer(before) if m.start() >= last.end()]
    if ids:
        return None
    return "PASSWORD" if _PW_CONTEXT.fullmatch(last.group(0)) else "API_KEY"


def kind_of_keyword(keyword: str) -> str:
    return "PASSWORD" if re.search(rf"(?i){PW_WORD}|log|sign", keyword) else "API_KEY"
