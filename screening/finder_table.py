"""The table of finders: one row per finder of the screen, read by everything that registers one.

A row says what a finder finds (`entities`), where its function from a text to spans lives
(`find`, "module:function"; None for what Presidio's own recognizers or the person rules find),
the Presidio recognizer it stands in for (`replaces`), its context words (Presidio's context
enhancer raises a finding near them), the default rule of its entities (`rule`) and how a
surrogate of its values is made (`surrogate`, "module:function"; None: the value's shape kept).
Read by `screening.entities` (the known types), `screening.detectors` (the recognizers, with and
without spaCy), `screening.config` (the default rules) and `screening.surrogates` (the makers).

Adding a finder: a module under `screening/finders/` with its `find` function, and a row here.
References are strings, resolved on first use (`load`), so reading the table loads no detection
code (the command line and config validation start without it).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal


@dataclass(frozen=True)
class Rule:
    """The default rule of an entity: a `screening.config.Action`'s name and the least score."""

    action: Literal["redact", "surrogate", "drop", "flag"]
    min_score: float = 0.5


@dataclass(frozen=True)
class Finder:
    """One finder: what it finds, where, and what the screen does with it by default."""

    name: str  # its recognizer's name in Presidio's registry
    entities: tuple[str, ...]
    find: str | None = None  # "module:function", text -> spans (entity, start, end, score)
    rule: Rule | None = None  # the default rule of each entity (None: none unless configured)
    surrogate: str | None = None  # "module:function", (surrogates, rng, value) -> fake
    context: tuple[str, ...] = ()  # words that raise a finding nearby
    replaces: str | None = None  # Presidio's recognizer of the same entity, removed
    secret: bool = False  # credential types: `screen.secrets` rules, not `screen.entities`


# Credentials and secrets, found by `screening.finders.credentials.find_credentials`.
CREDENTIAL_TYPES: tuple[str, ...] = (
    # Vendor token formats (detect-secrets' plugins, gitleaks' and Titus' catalogues, Azure patterns).
    "AWS_ACCESS_KEY",
    "AWS_SECRET_KEY",
    "GITHUB_TOKEN",
    "GITLAB_TOKEN",
    "SLACK_TOKEN",
    "STRIPE_KEY",
    "TWILIO_KEY",
    "SENDGRID_KEY",
    "OPENAI_KEY",
    "NPM_TOKEN",
    "PYPI_TOKEN",
    "DISCORD_TOKEN",
    "TELEGRAM_TOKEN",
    "MAILCHIMP_KEY",
    "SQUARE_OAUTH_SECRET",
    "ARTIFACTORY_TOKEN",
    "IBM_CLOUD_KEY",
    "AZURE_STORAGE_KEY",
    "AZURE_CONNECTION_STRING",
    "AZURE_SAS_TOKEN",
    "PRIVATE_KEY",
    "JWT",
    "WEBHOOK_URL",  # Slack, Discord, Teams incoming-webhook URLs (the URL is the secret)
    "VENDOR_SECRET",  # any other vendor format of the catalogues (screening.finders.credential_rules)
    # Context: what a value is follows from the words around it.
    "PASSWORD",  # after password / pw / passcode..., in prose, assignments, flags, next line
    "API_KEY",  # after token / key / secret / credential...
    "BEARER_TOKEN",  # Authorization: Bearer|Basic|Token ...
    "BASIC_AUTH_CREDENTIALS",  # the password in scheme://user:password@host
    "SECRET_KEYWORD",  # detect-secrets' KeywordDetector (code-style assignments)
    "HIGH_ENTROPY_SECRET",  # detect-secrets' Base64/Hex high-entropy strings
)

_MAKERS = "screening.surrogates"

# The screen's own finders first, in the order they join Presidio's registry; then what
# Presidio's recognizers and the person rules (`screening.persons`) find, for their rules and
# surrogates. Phone numbers in national form and SSNs score 0.4 without a context word nearby:
# kept (screening.finders.phones); a street address scores 0.4 only for an ambiguous street
# word with nothing else, left alone (screening.finders.addresses).
FINDERS: tuple[Finder, ...] = (
    Finder(
        "CredentialRecognizer",
        CREDENTIAL_TYPES,
        find="screening.finders.credentials:find_credentials",
        rule=Rule("drop"),
        secret=True,
    ),
    Finder(
        "PhoneNumberRecognizer",
        ("PHONE_NUMBER",),
        find="screening.finders.phones:find_phones",
        rule=Rule("redact", 0.4),
        surrogate=f"{_MAKERS}:phone",
        context=("phone", "number", "telephone", "cell", "cellphone", "mobile", "call"),
        replaces="PhoneRecognizer",
    ),
    Finder(
        "CardNumberRecognizer",
        ("CREDIT_CARD",),
        find="screening.finders.cards:find_cards",
        rule=Rule("redact"),
        surrogate=f"{_MAKERS}:card",
        replaces="CreditCardRecognizer",
    ),
    Finder(
        "IbanRegistryRecognizer",
        ("IBAN_CODE",),
        find="screening.finders.ibans:find_ibans",
        rule=Rule("redact"),
        surrogate=f"{_MAKERS}:iban",
        replaces="IbanRecognizer",
    ),
    Finder(
        "EmailAddressRecognizer",
        ("EMAIL_ADDRESS",),
        find="screening.finders.emails:find_emails",
        rule=Rule("redact"),
        surrogate=f"{_MAKERS}:email",
        replaces="EmailRecognizer",
    ),
    Finder(
        "ImeiRecognizer",
        ("IMEI",),
        find="screening.finders.imeis:find_imeis",
        rule=Rule("redact"),
        surrogate=f"{_MAKERS}:card",  # the same length and first digit, a valid Luhn digit
        context=("imei", "handset", "serial"),
    ),
    Finder(
        "StreetAddressRecognizer",
        ("STREET_ADDRESS",),
        find="screening.finders.addresses:find_addresses",
        rule=Rule("redact"),
        surrogate=f"{_MAKERS}:address",
    ),
    # Found by the person rules and the person reader (screening.persons), installed with spaCy.
    Finder("PersonNameRecognizer", ("PERSON",), rule=Rule("redact"), surrogate=f"{_MAKERS}:person"),
    # Found by Presidio's own recognizers.
    Finder("IpRecognizer", ("IP_ADDRESS",), rule=Rule("redact"), surrogate=f"{_MAKERS}:ip"),
    Finder("UsSsnRecognizer", ("US_SSN",), rule=Rule("redact", 0.4), surrogate=f"{_MAKERS}:ssn"),
    Finder("SpacyRecognizer", ("LOCATION",), rule=Rule("flag", 0.7), surrogate=f"{_MAKERS}:city"),
    Finder("UrlRecognizer", ("URL",), surrogate=f"{_MAKERS}:url"),
)


def own_finders() -> tuple[Finder, ...]:
    """The rows whose finder is the screen's own (a `find` function), in registry order."""
    return tuple(f for f in FINDERS if f.find is not None)


def load(reference: str) -> Callable[..., Any]:
    """The function a "module:function" reference names (the module imported on first use)."""
    module, _, name = reference.partition(":")
    return getattr(importlib.import_module(module), name)
