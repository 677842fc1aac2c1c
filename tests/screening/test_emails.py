"""E-mail addresses as RFC 5321/5322 and validator.js take them: quoted local parts (spaces,
non-ASCII, escapes), internationalised local parts and domains, address literals, found whole
and redacted by the default screen; code and URLs that only look like them left alone."""

from __future__ import annotations

import pytest

from screening.config import ScreenConfig
from screening.finders.emails import find_emails
from screening.scan import screen_records

ADDRESSES = [
    # quoted local parts: spaces, non-ASCII letters, an escaped quote, backslash and `@`
    '"jane q. public"@example.org',
    '"  ola nordmann  "@posten.no',
    '"zoë van der berg"@example.nl',
    '"写信 给我"@example.cn',
    '"say \\"hi\\""@example.com',
    '"back\\\\slash"@example.net',
    '"ops@night"@example.org',
    # internationalised local parts and domains (RFC 6531), IDN in punycode
    "josé.garcía@correo-ejemplo.es",
    "θέμης@παράδειγμα.gr",
    "उपयोगकर्ता@उदाहरण.भारत",
    "kunde@xn--mller-kva.de",
    # every atext symbol RFC 5322 allows, leading ones included when the address stands alone
    "{night_ops}~pager@example.org",
    "&amy+filters=on@mail.example.co.uk",
    "fran_k.o'neil|x#1@example.io",
    # address literals (RFC 5321)
    "pat@[198.51.100.7]",
    "pat@[IPv6:2001:db8:0:1::5]",
]


def test_each_address_is_redacted_whole_by_the_default_screen() -> None:
    carrier = "Reach me at {v} after five."
    records = [
        {"id": str(i), "document": carrier.format(v=v), "summary": "A request."}
        for i, v in enumerate(ADDRESSES)
    ]
    screening = screen_records("summarization", records, ScreenConfig())
    assert len(screening.kept) == len(records)
    for record, value in zip(screening.kept, ADDRESSES, strict=True):
        assert record["document"] == carrier.format(v="<EMAIL_ADDRESS>"), (value, record)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # the text's quotes, markup and URL syntax around an address are not the address's
        ("Write to 'lee@example.org'.", ["lee@example.org"]),
        ("**kim@example.net** or `kim@example.net`", ["kim@example.net"] * 2),
        ("abfss://bucket@store.blob.core.windows.net/data", ["bucket@store.blob.core.windows.net"]),
        ("mailto://u:pw@example.com?to=ana@example.org&cc=bo@example.org", None),
        ("xmpp://bot:pw@chat/room/ana@example.org", None),
        ('{"to": "\\"ana b\\"@example.com"}', ['\\"ana b\\"@example.com']),
        # a domain running into the next word is cut back to the registered one
        ("Mail ana@example.com.Thanks!", ["ana@example.com"]),
    ],
)
def test_an_address_in_other_text_is_found_without_the_text_around_it(
    text: str, expected: list[str] | None
) -> None:
    found = [text[s.start : s.end] for s in find_emails(text)]
    if expected is None:  # every address of a URL, each from its first letter
        expected = [a for a in ("pw@example.com", "ana@example.org", "bo@example.org") if a in text]
    assert found == expected


NOT_ADDRESSES = [
    # code: decorators, matrix products, versions, a string built around `@`, npm scopes
    '@app.route("/")\ndef index(): return "name"@decorator',
    "print('\"x\"@y')",
    "value = obj@property.setter; y = W@h.T",
    "npm i react@18.2.0 @scope/pkg@1.2.3",
    'label = "Mail: " + "@example.com"',
    'emails = ["example.@example.com", " @}...@example.com"]  # invalid',
    # a handle in a URL and a badge whose "domain" is no registered name
    "https://social.example/@someone and img.shields.io/badge/chat-@team--users-CF0E5B.svg",
    # prose
    "We met @ the cafe at 5. I'm @home, ping @ana.",
]


@pytest.mark.parametrize("text", NOT_ADDRESSES)
def test_code_and_handles_are_no_addresses(text: str) -> None:
    assert [text[s.start : s.end] for s in find_emails(text)] == []
