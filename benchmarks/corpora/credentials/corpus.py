"""The credentials corpus's tickets: support-ticket sentences with credentials planted in one of
the forms, or, clean, with identifiers that look random and credential words that hold none;
`corpus` draws a seeded set of both."""

from __future__ import annotations

import base64
import random
import string
from collections.abc import Callable
from dataclasses import dataclass

from benchmarks.corpora.credentials.forms import FORMS
from benchmarks.corpora.credentials.secret_values import USERS
from samples import templates as t
from samples import values


@dataclass(frozen=True)
class Ticket:
    """One generated ticket; `form` is None and `secrets` empty for a clean ticket."""

    text: str
    form: str | None
    secrets: tuple[str, ...]


# --- Ticket text around them --------------------------------------------------------------------
def _sentences(rng: random.Random) -> list[str]:
    sc = rng.choice(t.SCENARIOS)
    slots = {key: make(rng) for key, make in values.FACTS.items()}
    sents = [rng.choice(sc["open"]), *rng.sample(sc["body"], 2), rng.choice(sc["ask"])]
    return [s.format_map(slots) for s in sents]


def _hex(rng: random.Random, n: int) -> str:
    return rng.randbytes(n // 2).hex()


def _uuid(rng: random.Random) -> str:
    h = _hex(rng, 32)
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:]}"


# Sentences with identifiers that look random, and credential words that carry no credential.
_CLEAN: list[Callable[[random.Random], str]] = [
    lambda r: f"My order ORD-{r.randint(2019, 2025)}-{r.randint(100000, 999999)} never arrived.",
    lambda r: f"See ticket #{r.randint(1000, 99999)} and case CS-{r.randint(10**5, 10**6)}.",
    lambda r: f"Invoice INV-{r.randint(10**5, 10**6)} was paid on {r.choice(t.MONTHS)} 3.",
    lambda r: f"The request id is {_uuid(r)} if you need it.",
    lambda r: f"Request ID: {_uuid(r)}",
    lambda r: f"trace id {_hex(r, 32)}, span {_hex(r, 16)}",
    lambda r: f"The bug appeared in commit {_hex(r, 40)} on main.",
    lambda r: f"git show {_hex(r, 7)} shows the change.",
    lambda r: f'The sha256 checksum of the installer is "{_hex(r, 64)}", not what the site says.',
    lambda r: f"sha256: {_hex(r, 64)}",
    lambda r: f"MD5 {_hex(r, 32)} matches the download page.",
    lambda r: f"Build {_hex(r, 12)} failed at the test step.",
    lambda r: f"The {r.choice(t.CARRIERS)} tracking number is " + values.FACTS["tracking"](r) + ".",
    lambda r: (
        f"SKU {r.choice(['TB', 'KB', 'HD'])}-{r.randint(1000, 9999)}-"
        f"{r.choice(['XL', 'BLK', 'S'])} is out of stock."
    ),
    lambda r: (
        f"We are on version {r.randint(1, 5)}.{r.randint(0, 30)}.{r.randint(0, 9)} "
        f"(build {r.randint(1000, 99999)})."
    ),
    lambda r: (
        "The device MAC address is " + ":".join(f"{r.randint(0, 255):02x}" for _ in range(6)) + "."
    ),
    lambda r: (
        f"Logs are in /var/log/{r.choice(['nginx', 'app', 'tunegate'])}/error.log and "
        f"C:\\Users\\{r.choice(USERS)}\\AppData\\Local\\Temp."
    ),
    lambda r: (
        f"See https://status.example.com/incidents/{r.randint(1000, 9999)}?ref=email for details."
    ),
    lambda r: (
        "The attachment header says base64 and starts with "
        + base64.b64encode(r.randbytes(30)).decode()
        + "."
    ),
    lambda r: (
        f"The image data is data:image/png;base64,{base64.b64encode(r.randbytes(24)).decode()}"
    ),
    lambda r: r.choice(
        [
            "I forgot my password and the reset password link never arrived.",
            "The reset password link expired after 15 minutes.",
            "The API key field is empty in the settings page.",
            "My password is not working since the update.",
            "Password: ******** (I will not paste it here).",
            "The password must be at least 12 characters long.",
            "I changed my password yesterday and now the app says it is incorrect.",
            "Where do I find my API key?",
            "The token expired, how do I get a new one?",
            "Please rotate the client secret in the portal.",
            "Password is incorrect, says the login page.",
            "Use your SSO credentials to log in.",
            "My password manager fills in the wrong account.",
            "The secret key rotation policy is 90 days.",
            "Is the access token supposed to expire after an hour?",
            "Login failed: invalid username or password.",
            "I typed the password twice and it is still rejected.",
            "Token: <redacted>",
            "The password field is greyed out on the login page.",
            "We store the API key in Azure Key Vault, not in code.",
        ]
    ),
    lambda r: f"Order #{r.randint(10000, 99999)} and #{r.randint(10000, 99999)} were merged.",
    lambda r: f"Session ID {r.choice(['sess', 'req'])}_{_hex(r, 24)} appears in the log.",
    lambda r: f"The idempotency key is {_uuid(r)} for that call.",
    lambda r: (
        f"Our customer id is cus_{''.join(r.choice(string.ascii_letters) for _ in range(14))}."
    ),
    lambda r: f"The confirmation code was {r.randint(100000, 999999)}.",
]


def planted_ticket(rng: random.Random, form: str) -> Ticket:
    """A ticket with one (sometimes two) credentials written in `form`."""
    sents = _sentences(rng)
    secrets: list[str] = []
    for _ in range(2 if rng.random() < 0.15 else 1):
        snippet, planted = FORMS[form](rng)
        sents.insert(rng.randint(0, len(sents)), snippet)
        secrets += planted
    if rng.random() < 0.4:
        sents.insert(rng.randint(0, len(sents)), rng.choice(_CLEAN)(rng))
    return Ticket(_join(rng, sents), form, tuple(secrets))


def clean_ticket(rng: random.Random) -> Ticket:
    """A ticket without credentials but with identifiers and credential words."""
    sents = _sentences(rng)
    for _ in range(rng.randint(2, 4)):
        sents.insert(rng.randint(0, len(sents)), rng.choice(_CLEAN)(rng))
    return Ticket(_join(rng, sents), None, ())


def _join(rng: random.Random, sents: list[str]) -> str:
    out = sents[0]
    for s in sents[1:]:
        out += rng.choice([" ", " ", " ", "\n", "\n\n", "  "]) + s
    return out


def corpus(n_planted: int, n_clean: int, seed: int) -> tuple[list[Ticket], list[Ticket]]:
    """`n_planted` tickets spread evenly over the forms, and `n_clean` clean tickets."""
    rng = random.Random(seed)
    names = list(FORMS)
    planted = [planted_ticket(rng, names[i % len(names)]) for i in range(n_planted)]
    clean = [clean_ticket(rng) for _ in range(n_clean)]
    return planted, clean
