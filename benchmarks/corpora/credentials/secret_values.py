"""Credential values for the credentials corpus: random passwords of several styles, tokens
without a vendor prefix, vendor-format tokens, the (keyword, value) pairs a ticket writes them
in, and the user names and hosts around them."""

from __future__ import annotations

import base64
import random
import string
from collections.abc import Callable

from samples import values

_SYMBOLS = "!@#$%^&*-_+=~"
URL_SAFE_SYMBOLS = "-_.~!$*"
_WORDS = [
    *("correct", "horse", "battery", "staple", "orange", "river", "falcon", "maple", "copper"),
    *("lantern", "violet", "harbor", "thunder", "pepper", "silver", "meadow", "rocket", "castle"),
    *("willow", "pebble", "summit", "velvet", "cobalt", "marble"),
]
USERS = ["admin", "root", "svc_backup", "jdoe", "ops-admin", "sa", "deploy", "maria.g", "app"]
HOSTS = ["db.internal.example.com", "10.0.4.12", "pg-prod-01", "mysql.example.net", "localhost"]


def _chars(rng: random.Random, pool: str, n: int) -> str:
    return "".join(rng.choice(pool) for _ in range(n))


def password(rng: random.Random, symbols: str = _SYMBOLS) -> str:
    """A random password: one of several styles, 8-24 characters, never ending in punctuation."""
    style = rng.choice(["random", "random", "word", "lowdigit", "passphrase", "camel", "long"])
    if style == "random":
        pool = string.ascii_letters + string.digits + symbols
        value = _chars(rng, pool, rng.randint(8, 20))
        value = value[:-1] + rng.choice(string.ascii_letters + string.digits)
        if not any(c.isdigit() for c in value):
            value = value[:-2] + rng.choice(string.digits) + value[-1]
    elif style == "word":
        word = rng.choice(_WORDS).capitalize()
        value = f"{word}{rng.randint(1, 9999)}{rng.choice(symbols)}{_chars(rng, 'abcxyz', 2)}"
    elif style == "lowdigit":
        value = _chars(rng, string.ascii_lowercase + string.digits, rng.randint(8, 14))
        value = value[:3] + rng.choice(string.digits) + value[4:]
    elif style == "passphrase":
        sep = rng.choice(["-", "_", "."])
        value = sep.join(rng.sample(_WORDS, rng.randint(3, 5)))
        if rng.random() < 0.5:
            value += f"{sep}{rng.randint(1, 99)}"
    elif style == "camel":
        value = "".join(w.capitalize() for w in rng.sample(_WORDS, 3)) + str(rng.randint(1, 99))
    else:
        value = _chars(rng, string.ascii_letters + string.digits, rng.randint(20, 32))
    return value


def spaced_passphrase(rng: random.Random) -> str:
    return " ".join(rng.sample(_WORDS, rng.randint(3, 5)))


def token(rng: random.Random) -> str:
    """A random API token without a vendor prefix: hex, base64, base64url or alphanumeric."""
    kind = rng.choice(["hex", "b64", "b64url", "alnum", "alnum"])
    if kind == "hex":
        return rng.randbytes(rng.choice([16, 20, 24, 32])).hex()
    if kind == "b64":
        return base64.b64encode(rng.randbytes(rng.choice([18, 24, 30, 33]))).decode()
    if kind == "b64url":
        return base64.urlsafe_b64encode(rng.randbytes(rng.choice([18, 24, 33]))).decode()
    value = _chars(rng, string.ascii_letters + string.digits, rng.randint(20, 40))
    return value[:5] + rng.choice(string.digits) + value[6:]


def jwt(rng: random.Random) -> str:
    return values.secret_value(rng, "jwt")


def vendor_token(rng: random.Random) -> str:
    """A token in a vendor's format."""
    alnum = string.ascii_letters + string.digits
    makers: list[Callable[[], str]] = [
        lambda: values.secret_value(rng, "aws_access_key_id"),
        lambda: values.secret_value(rng, "github_token"),
        lambda: values.secret_value(rng, "slack_token"),
        lambda: jwt(rng),
        lambda: "glpat-" + _chars(rng, alnum + "_-", 20),
        lambda: "sk_live_" + _chars(rng, alnum, 24),
        lambda: "rk_live_" + _chars(rng, alnum, 24),
        lambda: "SG." + _chars(rng, alnum + "_-", 22) + "." + _chars(rng, alnum + "_-", 43),
        lambda: "npm_" + _chars(rng, alnum, 36),
        lambda: f"{rng.randint(10**8, 10**9)}:" + _chars(rng, alnum + "_-", 35),
        lambda: "SK" + _chars(rng, string.digits + "abcdef", 32),
        lambda: _chars(rng, string.digits + "abcdef", 32) + f"-us{rng.randint(1, 21)}",
        lambda: "xoxp-" + "-".join(str(rng.randint(10**9, 10**12)) for _ in range(3)),
    ]
    return rng.choice(makers)()


def secret_pair(rng: random.Random) -> tuple[str, str]:
    """A (keyword, value) pair: a password or a token, with a keyword that fits it."""
    if rng.random() < 0.55:
        kw = rng.choice(
            ["password", "Password", "PASSWORD", "passwd", "pwd", "pw", "passcode", "passphrase"]
        )
        return kw, password(rng)
    kw = rng.choice(
        [
            "API key",
            "api_key",
            "token",
            "access token",
            "secret",
            "client secret",
            "auth token",
            "API token",
            "secret key",
            "apikey",
            "Access Key",
        ]
    )
    return kw, rng.choice([token, token, vendor_token])(rng)
