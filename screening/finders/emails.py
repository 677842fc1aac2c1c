"""E-mail addresses as RFC 5321/5322 (with RFC 6531's UTF-8) and validator.js's `isEmail` take them.

Presidio's EmailRecognizer matches a run of word characters and symbols before `@`: an address
whose local part is quoted (`"john smith"@example.com`, `"ops@night"@example.org`) is left whole,
one whose local part starts with a symbol loses it (`{night_ops}~pager@...` is found from
`night_ops`), and one with `#`, `/` or `?` in it is dropped (its check parses the whole match
as a URL). `find_emails` (the table's `EmailAddressRecognizer`) takes EMAIL_ADDRESS over. Starting from each `@` in a text
(a text without one costs a substring search):

- the domain: dot-separated labels of letters, digits, combining marks and hyphens (`bücher`,
  `xn--mller-kva`, `उदाहरण`), at most 63 characters each, at least two; it must end in a
  public suffix with a name under it (tldextract's bundled Public Suffix List, as Presidio
  checks), so `"name"@decorator`, `obj@property.setter` and `pkg@1.2.3` in code are no
  addresses. A domain running into a word (`a@example.com.Thanks`) is cut back label by label
  to the longest one that is registered. Or an address literal, `[192.0.2.1]` or
  `[IPv6:2001:db8::1]` (RFC 5321; validator.js's `allow_ip_domain`), a valid IP address;
- the local part, a dot-atom: the run of RFC 5322's atext (letters, digits and
  ``!#$%&'*+-/=?^_`{|}~``), non-ASCII letters, digits and marks, and dots right before the `@`,
  not ending in a dot (`example.@example.com` is what e-mail validators' examples call
  invalid; `a..b@` is found, as Presidio found it). An address that is a token of its own
  (spaces, brackets or quotes around it) is taken as written, leading symbols included
  (`{night_ops}~pager@example.org`, `&amy+filters=on@example.co.uk`); inside other text the
  symbols are the text's (`'a@example.com'`, `**a@example.com**`, `abfss://container@host.net`),
  so the local part starts at a letter, digit or `_` after the last `/`, `?`, `&` or `=` of a
  URL or an assignment (`pbul://token/email@example.net`, `?to=a@example.com&from=b@example.com`);
- or a quoted string right before the `@`: `"`, up to 62 bytes of anything but `"` and `\\`
  unless escaped by `\\`, then `"` (RFC 5321's 64 octets with the quotes; spaces, line breaks
  and non-ASCII characters as validator.js takes them: `"  ola nordmann  "@posten.no`,
  `"写信 给我"@example.cn`), its opening quote not glued to a word or another quote. Inside a
  JSON or code string (`"\\"a b\\"@example.com"`) the escaped quotes are the address's, taken
  with their backslashes; `"Mail: " + "@example.com"` is no address (the quote before `@` opens
  a string that closes right after the domain).

Every address scores 1.0, as Presidio's did once its suffix check passed (its pattern's 0.5 is
raised to the maximum by a validated match), so an address wins the name of its redaction over
a person's name found in its local part (`<EMAIL_ADDRESS>`, not `<PERSON>`).
"""

from __future__ import annotations

import ipaddress
import os
import re
import sys
import unicodedata
from functools import lru_cache

os.environ.setdefault("TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS", "")  # offline: bundled suffix list

import tldextract

from screening.redact import Span

ENTITY = "EMAIL_ADDRESS"
SCORE = 1.0  # Presidio's EmailRecognizer, its match validated
MAX_LOCAL_BYTES = 64  # RFC 5321 4.5.3.1.1, validator.js
MAX_LABEL = 63
_RUN_WINDOW = 256  # the most of a run before `@` looked at (a local part is at most 64 octets)

# Combining marks of the Basic Multilingual Plane (vowel signs of Indic scripts, accents written
# apart): letters of a word that `\w` does not match.
_MARKS = "".join(
    re.escape(chr(c)) for c in range(0x300, 0x10000) if unicodedata.category(chr(c)).startswith("M")
)
_ALNUM = rf"(?:[^\W_]|[{_MARKS}])"
# A dot-atom local part read backwards from the `@` (atext, non-ASCII letters and marks, dots).
_LOCAL_REVERSED = re.compile(rf"(?:{_ALNUM}|[!#$%&'*+/=?^_`{{|}}~.\-])+")
# Labels of a domain, read forwards from the `@` (checked label by label afterwards).
_DOMAIN = re.compile(rf"(?:{_ALNUM}|[_\-])+(?:\.(?:{_ALNUM}|[_\-])+)+")
_LITERAL = re.compile(r"\[(?:[Ii][Pp][Vv]6:([0-9A-Fa-f:.]+)|(\d{1,3}(?:\.\d{1,3}){3}))\]")
_LABEL = re.compile(rf"{_ALNUM}(?:(?:{_ALNUM}|[_\-])*{_ALNUM})?")
# What stands around an address that is a token of its own (`<a@example.com>`, `"a@b.org",`).
_OPENS = "<([\"',;"
_ENDS = ">)]\"',;.!?:"
_EXTRACT = tldextract.TLDExtract(suffix_list_urls=())


@lru_cache(maxsize=8192)
def _registered(domain: str) -> bool:
    """A name under a public suffix of the Public Suffix List (`example.com`, `bücher.de`,
    `xn--mller-kva.de`; not `co.uk` alone, `property.setter` or `1.2.3`)."""
    return _EXTRACT(domain).fqdn != ""


def _domain_end(text: str, start: int) -> int:
    """The end of the registered domain or address literal at `start`, or -1."""
    literal = _LITERAL.match(text, start)
    if literal:
        try:
            ipaddress.ip_address(literal.group(1) or literal.group(2))
        except ValueError:
            return -1
        return literal.end()
    match = _DOMAIN.match(text, start)
    if match is None:
        return -1
    labels = []
    for label in match.group().split("."):
        if len(label) > MAX_LABEL or not _LABEL.fullmatch(label):
            trimmed = _LABEL.match(label)  # `example.com-` at the end of a word: `com`
            if trimmed and len(trimmed.group()) <= MAX_LABEL:
                labels.append(trimmed.group())
            break
        labels.append(label)
    while len(labels) >= 2:
        if _registered(".".join(labels)):
            return start + len(".".join(labels))
        labels.pop()
    return -1


def _quoted_start(text: str, close: int, domain_end: int) -> int:
    """The start of the quoted local part whose closing quote is at `close`, or -1. A closing
    quote escaped by a backslash (`\\"a b\\"@example.com` inside a JSON or code string) closes
    an address opened by `\\"`, the backslashes taken with it."""
    escaped = _backslashes_before(text, close) % 2 == 1
    i = close - 1 - escaped
    lowest = max(0, close - MAX_LOCAL_BYTES - 2 - 2 * escaped)  # the longest one, no further
    while i >= lowest:
        if text[i] == '"':
            odd = _backslashes_before(text, i) % 2 == 1
            if escaped and odd:  # the string's `\\"` opens the address
                i -= 1
                break
            if escaped:  # the string itself ends before the address does
                return -1
            if not odd:
                break
        i -= 1
    if i < lowest or len(text[i : close + 1].encode()) > MAX_LOCAL_BYTES + 2 * escaped:
        return -1
    before = text[i - 1] if i > 0 else " "
    if before.isalnum() or before in "_\\" or (before == '"' and not escaped):
        return -1  # `f"..."@`, `""@`: a string prefix, an empty string before
    if text[domain_end : domain_end + 1] == '"' and not escaped:
        return -1  # `"..." + "@example.com"`: the quote before `@` opens a string
    return i


def _backslashes_before(text: str, i: int) -> int:
    n = 0
    while i - 1 - n >= 0 and text[i - 1 - n] == "\\":
        n += 1
    return n


def _local_start(text: str, at: int, domain_end: int) -> int:
    """The start of the dot-atom local part ending at `at`, or -1 (the module doc)."""
    window = text[max(0, at - _RUN_WINDOW) : at]
    run = _LOCAL_REVERSED.match(window[::-1])
    if run is None or text[at - 1] == ".":
        return -1
    start = at - run.end()
    before = text[start - 1] if start > 0 else " "
    after = text[domain_end] if domain_end < len(text) else " "
    if (before.isspace() or before in _OPENS) and (after.isspace() or after in _ENDS):
        while start < at and text[start] in ".'`":  # a token of its own, as written
            start += 1
    else:  # inside other text: after a URL's last `/`, `?`, `&` or `=`, from a letter or digit
        start = max(start, *(text.rfind(c, start, at) + 1 for c in "/?&="))
        while start < at and not (text[start].isalnum() or text[start] == "_"):
            start += 1
    return start if start < at else -1


def find_emails(text: str) -> list[Span]:
    """E-mail addresses in a text, each whole (see the module doc)."""
    if "@" not in text:
        return []
    found: list[Span] = []
    at = text.find("@")
    while at != -1:
        end = _domain_end(text, at + 1)
        if end != -1 and at > 0:
            if text[at - 1] == '"':
                start = _quoted_start(text, at - 1, end)
            else:
                start = _local_start(text, at, end)
            if start != -1:
                found.append(Span(start, end, ENTITY, SCORE))
        at = text.find("@", at + 1)
    # an `@` inside a quoted local part (`"a@b.com"@example.com`) finds the inner one too
    found.sort(key=lambda s: (s.start, -s.end))
    kept: list[Span] = []
    for span in found:
        if not kept or span.end > kept[-1].end:
            kept.append(span)
    return kept


if __name__ == "__main__":  # python -m screening.finders.emails TEXT...: the addresses found
    for argument in sys.argv[1:]:
        print([argument[s.start : s.end] for s in find_emails(argument)])
