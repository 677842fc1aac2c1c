"""Value makers for the sample-data generator: facts, PII values and fake secrets.

Each maker draws only from the `random.Random` it is given, so a seeded generator gives the same
values every time. What the values are drawn from (names, cities, plans...) is data and lives in
`samples.templates`; this module is the code that turns it, plus random digits, into values:
Luhn-valid card numbers, IBANs with a correct check, SSNs Presidio accepts, well-formed JWTs.
"""

from __future__ import annotations

import base64
import json
import random
import re
import string
import unicodedata
from collections.abc import Callable

from samples import templates as t

FactMaker = Callable[[random.Random], str]
_ALNUM = string.ascii_letters + string.digits

# Placeholder -> maker of a value for it; scenarios in `samples.templates.SCENARIOS` use these
# placeholders. The order is part of the output: the generator draws one value per slot in turn.
FACTS: dict[str, FactMaker] = {
    "amount": lambda r: f"${r.randint(9, 480)}.{r.choice(['00', '49', '95', '99'])}",
    "plan": lambda r: r.choice(t.PLANS),
    "month": lambda r: r.choice(t.MONTHS),
    "date": lambda r: f"{r.choice(t.MONTHS)} {r.randint(1, 28)}",
    "invoice": lambda r: f"INV-{r.randint(100000, 999999)}",
    "order": lambda r: f"#{r.randint(1000000, 9999999)}",
    "product": lambda r: r.choice(t.PRODUCTS),
    "carrier": lambda r: r.choice(t.CARRIERS),
    "tracking": lambda r: (
        "1Z" + "".join(r.choice("ABCDEFGHJKLMNPRSTUVWXYZ0123456789") for _ in range(16))
    ),
    "days": lambda r: f"{r.randint(2, 14)} days",
    "hours": lambda r: f"{r.randint(2, 19)} hours",
    "minutes": lambda r: f"{r.choice([5, 10, 15, 30])} minutes",
    "attempts": lambda r: f"{r.randint(3, 9)} failed attempts",
    "users": lambda r: f"{r.randint(12, 480)} employees",
    "percent": lambda r: f"{r.randint(4, 65)}%",
    "app": lambda r: r.choice(t.APPS),
    "device": lambda r: r.choice(t.DEVICES),
    "vpn": lambda r: r.choice(t.VPN_CLIENTS),
    "error": lambda r: r.choice(t.HTTP_ERRORS),
    "endpoint": lambda r: r.choice(t.ENDPOINTS),
    "sdk": lambda r: f"{r.randint(1, 4)}.{r.randint(0, 12)}.{r.randint(0, 9)}",
    "reason": lambda r: r.choice(t.RETURN_REASONS),
    "warranty": lambda r: r.choice(t.WARRANTIES),
    "format": lambda r: r.choice(t.EXPORT_FORMATS),
    "rows": lambda r: f"{r.randint(2, 90)},{r.randint(100, 999)} rows",
}


# --- PII and fake secrets -------------------------------------------------------------------------
def _luhn_complete(rng: random.Random, prefix: str, length: int) -> str:
    """Return a random card number with `prefix` whose last digit makes the Luhn sum valid."""
    body = prefix + "".join(rng.choice(string.digits) for _ in range(length - len(prefix) - 1))
    total = 0
    for i, ch in enumerate(reversed(body)):
        d = int(ch) * (2 if i % 2 == 0 else 1)
        total += d - 9 if d > 9 else d
    return body + str((10 - total % 10) % 10)


def _card(rng: random.Random) -> str:
    """Return a Luhn-valid Visa, Mastercard or Amex test-style number, grouped or not."""
    if rng.random() < 0.3:
        return rng.choice(t.KNOWN_CARDS)
    if rng.random() < 0.2:
        num = _luhn_complete(rng, rng.choice(["34", "37"]), 15)
        return f"{num[:4]} {num[4:8]} {num[8:12]} {num[12:]}"
    num = _luhn_complete(rng, rng.choice(["4", "51", "52", "53", "54", "55"]), 16)
    sep = rng.choice([" ", " ", "-", ""])
    return sep.join(num[i : i + 4] for i in range(0, 16, 4))


def _iban(rng: random.Random) -> str:
    """Return an IBAN with a correct mod-97 check, in print (grouped) or compact form."""
    if rng.random() < 0.2:
        return rng.choice(t.KNOWN_IBANS)
    country, layout = rng.choice(
        [
            ("GB", "AAAA" + "9" * 14),
            ("DE", "9" * 18),
            ("NL", "AAAA" + "9" * 10),
            ("ES", "9" * 20),
            ("FR", "9" * 23),
            ("IE", "AAAA" + "9" * 14),
        ]
    )
    bban = "".join(
        rng.choice(string.ascii_uppercase if c == "A" else string.digits) for c in layout
    )
    numeric = "".join(str(int(c, 36)) for c in bban + country + "00")
    raw = f"{country}{98 - int(numeric) % 97:02d}{bban}"
    if rng.random() < 0.25:
        return raw
    return " ".join(raw[i : i + 4] for i in range(0, len(raw), 4))


def _phone(rng: random.Random) -> str:
    """Return a US number in the 555-0100..0199 block reserved for fiction."""
    area, line = rng.choice(t.PHONE_AREAS), f"01{rng.randint(0, 99):02d}"
    return rng.choice(
        [
            f"+1 ({area}) 555-{line}",
            f"({area}) 555-{line}",
            f"{area}-555-{line}",
            f"+1 {area} 555 {line}",
        ]
    )


def _ssn(rng: random.Random) -> str:
    """Return an SSN Presidio accepts (area not 000, 666 or 9xx; no all-zero group)."""
    area = rng.choice([rng.randint(101, 665), rng.randint(667, 899)])
    return f"{area:03d}-{rng.randint(10, 99):02d}-{rng.randint(1001, 9998):04d}"


def _ip(rng: random.Random) -> str:
    first = rng.choice(["10", "172.16", "192.168", "203.0.113", "198.51.100", "81", "52"])
    parts = first.split(".")
    parts += [str(rng.randint(1, 254)) for _ in range(4 - len(parts))]
    return ".".join(parts)


def _email(rng: random.Random, name: str) -> str:
    ascii_name = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
    first, last = re.sub(r"[^a-z ]", "", ascii_name.lower()).split(" ", 1)
    local = rng.choice(
        [f"{first}.{last}", f"{first[0]}{last}", f"{first}_{last}{rng.randint(1, 99)}"]
    )
    return f"{local.replace(' ', '')}@{rng.choice(t.EMAIL_DOMAINS)}"


def pii_plan(rng: random.Random) -> tuple[list[str], str]:
    """Which PII kinds (1-3 of `samples.templates.PII_SENTENCES`) one ticket or conversation gets,
    and its customer's name when PERSON is among them (else "")."""
    kinds = sorted(rng.sample(sorted(t.PII_SENTENCES), rng.choice([1, 1, 2, 2, 3])))
    return kinds, rng.choice(t.NAMES) if "PERSON" in kinds else ""


def pii_value(rng: random.Random, kind: str, name: str) -> str:
    """Return a fresh value for a PII kind; `name` is the ticket's customer name if any."""
    makers = {
        "PERSON": lambda: name,
        "PERSON_AGENT": lambda: rng.choice(t.NAMES),
        "EMAIL_ADDRESS": lambda: _email(rng, name or rng.choice(t.NAMES)),
        "PHONE_NUMBER": lambda: _phone(rng),
        "CREDIT_CARD": lambda: _card(rng),
        "IBAN_CODE": lambda: _iban(rng),
        "IP_ADDRESS": lambda: _ip(rng),
        "US_SSN": lambda: _ssn(rng),
        "LOCATION": lambda: rng.choice(t.CITIES),
    }
    return makers[kind]()


def _b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def secret_value(rng: random.Random, kind: str) -> str:
    """Return a fake but well-formed secret of `kind`, drawn from the seeded RNG."""
    if kind == "aws_access_key_id":
        return "AKIA" + "".join(rng.choice(string.ascii_uppercase + "234567") for _ in range(16))
    if kind == "github_token":
        return "ghp_" + "".join(rng.choice(_ALNUM) for _ in range(36))
    if kind == "azure_storage_connection_string":
        account = rng.choice(["contosodata", "fabrikamlogs", "tunegatestore"]) + str(
            rng.randint(1, 99)
        )
        key = base64.b64encode(rng.randbytes(64)).decode()
        return (
            f"DefaultEndpointsProtocol=https;AccountName={account};AccountKey={key};"
            "EndpointSuffix=core.windows.net"
        )
    if kind == "private_key":
        body = base64.b64encode(rng.randbytes(48 * rng.randint(4, 6))).decode()
        lines = [body[i : i + 64] for i in range(0, len(body), 64)]
        return "\n".join(
            ["-----BEGIN RSA PRIVATE KEY-----", *lines, "-----END RSA PRIVATE KEY-----"]
        )
    if kind == "password":
        word = rng.choice(["Hunter", "Falcon", "Summer", "Winter", "Dragon", "Orchid"])
        tail = "".join(rng.choice(string.ascii_lowercase) for _ in range(3))
        return f"{word}{rng.randint(1, 99)}{rng.choice('!#$%')}{tail}"
    if kind == "jwt":
        payload = {
            "sub": str(rng.randint(10**6, 10**7)),
            "iat": rng.randint(1_600_000_000, 1_800_000_000),
        }
        return ".".join(
            [
                _b64url(b'{"alg":"HS256","typ":"JWT"}'),
                _b64url(json.dumps(payload, separators=(",", ":")).encode()),
                _b64url(rng.randbytes(32)),
            ]
        )
    if kind == "slack_token":
        tail = "".join(rng.choice(_ALNUM) for _ in range(24))
        return f"xoxb-{rng.randint(10**11, 10**12 - 1)}-{rng.randint(10**12, 10**13 - 1)}-{tail}"
    raise ValueError(f"unknown secret kind {kind!r}")
