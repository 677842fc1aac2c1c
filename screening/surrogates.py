"""Surrogates: each detected value replaced by a realistic fake of the same type and shape.

`Surrogates(salt)(entity, value)` is deterministic: the same value of the same type always gets the
same surrogate for a given salt, so a name that appears in a context, a question and an answer is
replaced by one fake name everywhere in a dataset. The fake is drawn by Faker from a seed that is an
HMAC of the value under a secret salt, so the mapping cannot be reversed (nor a guessed value
checked) from the data without the salt. The salt lives outside every dataset
(`platforms.keys.secret_key`), or in an environment variable.

Shapes kept: a name has as many words as the original and its casing; an e-mail is an e-mail; a
phone number keeps its separators and country code; a card number keeps its length, network digit
and separators and passes the Luhn check; an IBAN keeps its country, length and grouping and has
valid check digits; an SSN is a valid-format SSN with the original separators; an IPv4 stays IPv4
and an IPv6 IPv6; a street address is an address of the same country style (a German street for
a German street) with a tail of the same form (`City, ST 12345`, `10115 Berlin`) after the same
separator (a comma or a line break) when the original has one; anything else keeps its character classes (a digit for a digit, an upper-case
letter for an upper-case letter) and its punctuation.
"""

from __future__ import annotations

import hashlib
import hmac
import random
import re
import string
from collections.abc import Callable
from functools import cache
from typing import TYPE_CHECKING

from screening.finder_table import FINDERS, load
from screening.finders.ibans import iban_check_digits

if TYPE_CHECKING:
    from faker import Faker

# Latin-script locales whose names a surrogate is drawn from (a name keeps its own locale's feel).
LOCALES = ("en_US", "en_GB", "de_DE", "fr_FR", "es_ES", "it_IT", "nl_NL", "pt_BR", "pl_PL", "sv_SE")


@cache
def _faker(locale: str) -> Faker:
    from faker import Faker  # ~0.2 s to import: only when a surrogate is first asked for

    return Faker(locale)


@cache
def _last_names() -> frozenset[str]:
    """Last names of every locale, lower case (a lone word found there is a last name)."""
    names: set[str] = set()
    for locale in LOCALES:
        provider = _faker(locale).provider("faker.providers.person")
        names.update(n.lower() for n in getattr(provider, "last_names", ()))
        names.difference_update(n.lower() for n in getattr(provider, "first_names", ()))
    return frozenset(names)


class Surrogates:
    """Realistic, consistent, salted fakes for detected values."""

    def __init__(self, salt: bytes) -> None:
        if len(salt) < 16:
            raise ValueError("a surrogate salt needs at least 16 bytes")
        self._salt = salt
        self._makers: dict[str, Maker] = {
            entity: load(row.surrogate)
            for row in FINDERS
            if row.surrogate is not None
            for entity in row.entities
        }
        self._memo: dict[tuple[str, str], str] = {}

    def __call__(self, entity: str, value: str) -> str:
        """The surrogate of `value` found as `entity`; never the value itself."""
        key = (entity, value)
        if key not in self._memo:
            make = self._makers.get(entity, token)
            for attempt in range(8):
                fake = make(self, self.keyed_rng(entity, value, attempt), value)
                if fake != value:
                    break
            self._memo[key] = fake
        return self._memo[key]

    def keyed_rng(self, entity: str, value: str, attempt: int = 0) -> random.Random:
        """A generator seeded by the HMAC of the value under the salt."""
        message = f"{entity}\x00{value}\x00{attempt}".encode()
        digest = hmac.new(self._salt, message, hashlib.sha256).digest()
        return random.Random(int.from_bytes(digest, "big"))

    def fake(self, rng: random.Random) -> Faker:
        """Faker of a locale drawn by `rng`, seeded by it."""
        fake = _faker(rng.choice(LOCALES))
        fake.seed_instance(rng.getrandbits(64))
        return fake


# The makers the table of finders names (`screening.finder_table`): (surrogates, rng, value) ->
# a fake of the value; `rng` is keyed by the value (`Surrogates.keyed_rng`).
Maker = Callable[[Surrogates, random.Random, str], str]


def person(surrogates: Surrogates, rng: random.Random, value: str) -> str:
    """A name word by word, so "Maria" and "Maria Gonzalez" share their first name."""
    words = value.split()
    fakes = []
    for i, word in enumerate(words):
        last = i > 0 or (len(words) == 1 and word.lower() in _last_names())
        for attempt in range(8):
            word_rng = surrogates.keyed_rng("PERSON_WORD", f"{int(last)}{word.lower()}", attempt)
            fake = surrogates.fake(word_rng)
            new = fake.last_name() if last else fake.first_name()
            if new.lower() != word.lower():
                break
        fakes.append(_cased(new, word))
    return " ".join(fakes)


def email(surrogates: Surrogates, rng: random.Random, value: str) -> str:
    fake = surrogates.fake(rng)
    local = re.sub(r"[^a-z0-9.]", "", _ascii(f"{fake.first_name()}.{fake.last_name()}").lower())
    return _cased(f"{local}@{fake.free_email_domain()}", value)


def address(surrogates: Surrogates, rng: random.Random, value: str) -> str:
    """An address of the same style: street line, then the tail after the same separator."""
    from screening.finders.addresses import address_style, split_address

    style = address_style(value)
    if style == "po":  # a box or military address: new numbers, its words kept
        return _digits_into(value, "".join(rng.choice(string.digits) for _ in value))
    _, separator, tail = split_address(value)
    fake = _faker(style)
    fake.seed_instance(rng.getrandbits(64))
    new = " ".join(fake.street_address().split())
    if value[0].isdigit() and not new[0].isdigit():  # "12 rue ...": a number first
        new = f"{rng.randint(1, 199)} {new}"
    if not tail:
        return new
    if style == "en_US":
        end = f"{fake.city()}, {fake.state_abbr()} {fake.zipcode()}"
    elif style == "en_CA":
        end = f"{fake.city()}, {fake.province_abbr()} {fake.postalcode()}"
    elif style == "en_GB":
        end = f"{fake.city()} {fake.postcode()}"
    else:
        end = f"{fake.postcode()} {fake.city()}"
    return new + separator + end


def city(surrogates: Surrogates, rng: random.Random, value: str) -> str:
    return _cased(surrogates.fake(rng).city(), value)


def url(surrogates: Surrogates, rng: random.Random, value: str) -> str:
    return surrogates.fake(rng).url().rstrip("/") if "://" in value else _shape(rng, value)


def _ascii(text: str) -> str:
    import unicodedata

    return unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()


def _cased(fake: str, like: str) -> str:
    """The fake in the original's casing: ALL CAPS, all lower, or as Faker writes it."""
    letters = [c for c in like if c.isalpha()]
    if letters and all(c.isupper() for c in letters) and len(letters) > 1:
        return fake.upper()
    if letters and all(c.islower() for c in letters):
        return fake.lower()
    return fake


def _shape(rng: random.Random, value: str) -> str:
    """Same character classes, same punctuation: `AB-1234` → `QZ-8071`."""
    out = []
    for c in value:
        if c in string.digits:
            out.append(rng.choice(string.digits))
        elif c in string.ascii_uppercase:
            out.append(rng.choice(string.ascii_uppercase))
        elif c in string.ascii_lowercase:
            out.append(rng.choice(string.ascii_lowercase))
        else:
            out.append(c)
    return "".join(out)


def token(surrogates: Surrogates, rng: random.Random, value: str) -> str:
    """`_shape`, keeping a short vendor prefix (`ghp_`, `xoxb-`, `sk_`) so a token stays typed."""
    match = re.match(r"[a-z]{1,4}[_-]", value)
    keep = len(match.group()) if match else 0
    return value[:keep] + _shape(rng, value[keep:])


def _digits_into(value: str, digits: str) -> str:
    """`digits` written into the digit positions of `value`, separators kept."""
    it = iter(digits)
    return "".join(next(it) if c.isdigit() else c for c in value)


def phone(surrogates: Surrogates, rng: random.Random, value: str) -> str:
    """A country code after `+` (up to the first separator) or a leading trunk `0` is kept."""
    match = re.match(r"\+\d{1,3}(?=\D)|\(?0", value)
    keep = len(match.group()) if match else 0
    return value[:keep] + _shape(rng, value[keep:])


def _luhn_check_digit(digits: str) -> str:
    total = 0
    for i, d in enumerate(reversed(digits)):
        n = int(d) * (2 if i % 2 == 0 else 1)
        total += n - 9 if n > 9 else n
    return str((10 - total % 10) % 10)


def card(surrogates: Surrogates, rng: random.Random, value: str) -> str:
    """Same length and network digit, separators kept, a valid Luhn check digit."""
    digits = re.sub(r"\D", "", value)
    if len(digits) < 2:
        return _shape(rng, value)
    body = digits[0] + "".join(rng.choice(string.digits) for _ in digits[1:-1])
    return _digits_into(value, body + _luhn_check_digit(body))


def iban(surrogates: Surrogates, rng: random.Random, value: str) -> str:
    """Same country, length and grouping; a new account part; valid check digits."""
    compact = re.sub(r"\s", "", value).upper()
    if not re.fullmatch(r"[A-Z]{2}\d{2}[A-Z0-9]+", compact):
        return _shape(rng, value)
    country = compact[:2]
    bban = _shape(rng, compact[4:])
    fake = country + iban_check_digits(country, bban) + bban
    it = iter(fake)
    return "".join(c if c.isspace() else next(it) for c in value)


def ssn(surrogates: Surrogates, rng: random.Random, value: str) -> str:
    """A valid-format SSN (area not 000, 666 or 9xx; group not 00; serial not 0000)."""
    if len(re.sub(r"\D", "", value)) != 9:
        return _shape(rng, value)
    area = rng.choice([a for a in range(1, 900) if a != 666])
    digits = f"{area:03d}{rng.randint(1, 99):02d}{rng.randint(1, 9999):04d}"
    return _digits_into(value, digits)


def ip(surrogates: Surrogates, rng: random.Random, value: str) -> str:
    if ":" in value:
        return ":".join(f"{rng.getrandbits(16):x}" for _ in range(8))
    # a public-looking address outside reserved ranges (1-223 first octet, never 127 or 10)
    first = rng.choice([n for n in range(11, 224) if n not in (127, 169, 172, 192)])
    return ".".join(
        [str(first), *(str(rng.randint(0, 255)) for _ in range(2)), str(rng.randint(1, 254))]
    )
