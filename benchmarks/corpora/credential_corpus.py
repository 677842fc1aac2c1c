"""A measurement corpus for credential detection: tickets with planted credentials, and clean ones.

    from benchmarks.corpora.credential_corpus import corpus
    planted, clean = corpus(n_planted=500, n_clean=500, seed=1)

Planted tickets carry one or two credentials written in one of the surface forms of `FORMS`
(form name -> maker), inside ordinary support-ticket sentences (`samples.templates` scenarios),
at a random position, with varied wording, casing, punctuation, quoting and line breaks. Each
knows its planted values. Credentials are random every time: passwords of varied character
classes and lengths (joined passphrases, quoted passphrases with spaces), hex / base64 /
alphanumeric tokens, vendor-format tokens (AWS, GitHub, GitLab, Slack, Stripe, SendGrid, npm,
Telegram, Twilio, JWT, private keys, Azure connection strings).

Clean tickets carry no credential but many things that look random or mention one: order,
invoice and ticket numbers, UUIDs, commit SHAs, checksums, tracking numbers, SKUs, versions, MAC
addresses, paths, URLs without credentials, base64 in ordinary contexts, "I forgot my password",
"reset password link", "the API key field is empty", "Password: ********".

Conventions a detector cannot guess, so the generator keeps to them: an unquoted password does
not end in sentence punctuation (. , ; : ?) and no password holds quotes, brackets, commas,
semicolons, backslashes or spaces unless it is quoted.
"""

from __future__ import annotations

import base64
import json
import random
import string
from collections.abc import Callable
from dataclasses import dataclass

from samples import templates as t
from samples import values

_SYMBOLS = "!@#$%^&*-_+=~"
_URL_SAFE_SYMBOLS = "-_.~!$*"
_WORDS = [
    *("correct", "horse", "battery", "staple", "orange", "river", "falcon", "maple", "copper"),
    *("lantern", "violet", "harbor", "thunder", "pepper", "silver", "meadow", "rocket", "castle"),
    *("willow", "pebble", "summit", "velvet", "cobalt", "marble"),
]
_USERS = ["admin", "root", "svc_backup", "jdoe", "ops-admin", "sa", "deploy", "maria.g", "app"]
_HOSTS = ["db.internal.example.com", "10.0.4.12", "pg-prod-01", "mysql.example.net", "localhost"]


@dataclass(frozen=True)
class Ticket:
    """One generated ticket; `form` is None and `secrets` empty for a clean ticket."""

    text: str
    form: str | None
    secrets: tuple[str, ...]


# --- Credential values --------------------------------------------------------------------------
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


def _spaced_passphrase(rng: random.Random) -> str:
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


def _jwt(rng: random.Random) -> str:
    return values.secret_value(rng, "jwt")


def vendor_token(rng: random.Random) -> str:
    """A token in a vendor's format."""
    alnum = string.ascii_letters + string.digits
    makers: list[Callable[[], str]] = [
        lambda: values.secret_value(rng, "aws_access_key_id"),
        lambda: values.secret_value(rng, "github_token"),
        lambda: values.secret_value(rng, "slack_token"),
        lambda: _jwt(rng),
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


def _secret_pair(rng: random.Random) -> tuple[str, str]:
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


# --- Surface forms: each maker returns (snippet, planted values) --------------------------------
Form = Callable[[random.Random], tuple[str, list[str]]]


def _prose_is(rng: random.Random) -> tuple[str, list[str]]:
    kw, v = _secret_pair(rng)
    who = rng.choice(["my", "the", "our", "the new", "the temporary", "his", "the admin"])
    tail = rng.choice(
        ["", ".", " btw", ", please reset it.", " if that helps", "!", " (case sensitive)"]
    )
    text = rng.choice(
        [
            f"{who} {kw} is {v}{tail}",
            f"{who.capitalize()} {kw} is now {v}{tail}",
            f"FYI {who} {kw} was {v} before the change{tail}",
            f"The {kw} for the {rng.choice(['admin', 'staging', 'billing'])} account is {v}{tail}",
            f"I changed {who} {kw} to {v} yesterday{tail}",
            f"{kw} for user {rng.choice(_USERS)} was reset to {v}{tail}",
            f"{who} {kw} = {v}{tail}",
        ]
    )
    return text, [v]


def _keyword_colon(rng: random.Random) -> tuple[str, list[str]]:
    kw, v = _secret_pair(rng)
    sep = rng.choice([": ", ":", " : ", ":  ", " - ", ": "])
    lead = rng.choice(["", "Here you go. ", "Details -> ", "As requested, ", "(", "FYI "])
    end = ")" if lead == "(" else rng.choice(["", " thanks", "\nThanks!", " - let me know"])
    return f"{lead}{kw}{sep}{v}{end}", [v]


def _quoted_sentence(rng: random.Random) -> tuple[str, list[str]]:
    kw, v = _secret_pair(rng)
    if kw.lower().startswith("pass") and rng.random() < 0.35:
        v = _spaced_passphrase(rng)
    q1, q2 = rng.choice([('"', '"'), ("'", "'"), ("`", "`"), ("\u201c", "\u201d")])
    text = rng.choice(
        [
            f"I set the {kw} to {q1}{v}{q2} yesterday.",
            f"the {kw} {q1}{v}{q2} stopped working after the update",
            f"We tried with {kw} {q1}{v}{q2} and still get 401.",
            f"My {kw} is {q1}{v}{q2}, can you check it?",
            f"{kw.capitalize()} {q1}{v}{q2} is rejected by the portal.",
        ]
    )
    return text, [v]


def _use_to_log_in(rng: random.Random) -> tuple[str, list[str]]:
    v, user = password(rng), rng.choice(_USERS)
    text = rng.choice(
        [
            f"use {v} to log in",
            f"You can use {v} to sign in and check.",
            f"Try {v} as the password.",
            f"just log in with {user} / {v}",
            f"{v} is my password, please don't share it",
            f"login: {user} / {v}",
            f"Credentials: {user}:{v}",
            f"sign in with {user} and {v}",
            f"Please use {v} as the temporary password for {user}.",
        ]
    )
    return text, [v]


def _next_line(rng: random.Random) -> tuple[str, list[str]]:
    kw, v = _secret_pair(rng)
    user = rng.choice(_USERS)
    text = rng.choice(
        [
            f"{kw}:\n{v}",
            f"Here are the credentials:\nuser: {user}\n{kw}:\n  {v}\n",
            f"{kw.upper()}\n{v}",
            f"The {kw} is below\n{v}\nThanks",
            f"{kw} -\n{v}",
        ]
    )
    return text, [v]


def _connection_string(rng: random.Random) -> tuple[str, list[str]]:
    v, user, host = password(rng), rng.choice(_USERS), rng.choice(_HOSTS)
    text = rng.choice(
        [
            f"Server={host};Database=orders;User Id={user};Password={v};",
            f"Host={host};Port=5432;Username={user};Password={v};SSL Mode=Require",
            f"Data Source={host};Initial Catalog=crm;User ID={user};pwd={v}",
            f"jdbc:sqlserver://{host}:1433;databaseName=app;user={user};password={v};",
            f"Driver={{ODBC Driver 18}};Server={host};UID={user};PWD={v};Encrypt=yes",
        ]
    )
    lead = rng.choice(["Our connection string is ", "Connection string:\n", "config: ", ""])
    return lead + text, [v]


def _url_credentials(rng: random.Random) -> tuple[str, list[str]]:
    v, user, host = password(rng, _URL_SAFE_SYMBOLS), rng.choice(_USERS), rng.choice(_HOSTS)
    scheme = rng.choice(
        ["postgres", "postgresql", "mysql", "https", "mongodb+srv", "amqp", "redis"]
    )
    url = f"{scheme}://{user}:{v}@{host}{rng.choice([':5432/app', '/repo.git', '', ':6379/0'])}"
    text = rng.choice(
        [f"DATABASE_URL is {url}", f"we connect with {url} and it times out", f"URL: {url}"]
    )
    return text, [v]


def _auth_header(rng: random.Random) -> tuple[str, list[str]]:
    tok = rng.choice([token, token, _jwt])(rng)
    scheme = rng.choice(["Bearer", "bearer", "Token", "Basic"])
    if scheme == "Basic":
        tok = base64.b64encode(f"{rng.choice(_USERS)}:{password(rng)}".encode()).decode()
    text = rng.choice(
        [
            f"Authorization: {scheme} {tok}",
            f'curl -H "Authorization: {scheme} {tok}" https://api.example.com/v2/invoices',
            f"the request has header authorization={scheme} {tok} and still fails",
            f"We send bearer {tok} and get 401",
        ]
    )
    return text, [tok]


def _cli_flag(rng: random.Random) -> tuple[str, list[str]]:
    v, user, host = password(rng), rng.choice(_USERS), rng.choice(_HOSTS)
    tok = token(rng)
    choices = [
        (f"mysql -u {user} -p{v} orders", v),
        (f"mysqldump -u{user} -p'{v}' --all-databases > dump.sql", v),
        (f"psql -h {host} -U {user} --password={v} app", v),
        (f"redis-cli -h {host} -a {v} ping", v),
        (f"curl -u {user}:{v} https://{host}/api", v),
        (f"sshpass -p '{v}' ssh {user}@{host}", v),
        (f"./deploy.sh --token {tok} --env prod", tok),
        (f"az login --service-principal -u app-id --password {v} --tenant contoso", v),
        (f"tool sync --api-key={tok}", tok),
        (f"sqlcmd -S {host} -U {user} -P {v}", v),
    ]
    cmd, secret = rng.choice(choices)
    lead = rng.choice(["I ran ", "Command: ", "$ ", "Running\n    ", "this fails: "])
    return lead + cmd, [secret]


def _env_export(rng: random.Random) -> tuple[str, list[str]]:
    kw, v = _secret_pair(rng)
    prefix = rng.choice(["DB", "MYSQL_ROOT", "STRIPE", "APP", "AZURE_CLIENT", "SMTP", "REDIS", ""])
    suffix = (
        "PASSWORD"
        if kw.lower().startswith("pass") or kw == "pw"
        else rng.choice(["SECRET", "API_KEY", "TOKEN", "ACCESS_TOKEN", "SECRET_KEY"])
    )
    name = f"{prefix}_{suffix}" if prefix else suffix
    text = rng.choice(
        [
            f"export {name}={v}",
            f'export {name}="{v}"',
            f"set {name}={v}",
            f'$env:{name} = "{v}"',
            f"in our .env file: {name}={v}",
            f"setx {name} {v}",
            f"{name}={v} ./run.sh",
        ]
    )
    return text, [v]


def _json_yaml(rng: random.Random) -> tuple[str, list[str]]:
    kw, v = _secret_pair(rng)
    key = rng.choice(
        ["password", "db_password", "pass"]
        if kw.lower().startswith("pass") or kw in ("pw", "pwd")
        else ["api_key", "apiKey", "token", "client_secret", "secret", "accessToken"]
    )
    user = rng.choice(_USERS)
    text = rng.choice(
        [
            json.dumps({"user": user, key: v, "host": rng.choice(_HOSTS)}),
            json.dumps({"auth": {"username": user, key: v}}, indent=2),
            f"database:\n  host: {rng.choice(_HOSTS)}\n  user: {user}\n  {key}: {v}\n",
            f"{key}: '{v}'",
            f'settings.yaml has\n{key}: "{v}"\nport: 8443',
        ]
    )
    return text, [v]


def _vendor_token(rng: random.Random) -> tuple[str, list[str]]:
    v = vendor_token(rng)
    text = rng.choice(
        [
            f"Our CI started failing after we rotated {v} last night.",
            f"here: {v}",
            f"The webhook uses {v} and returns 403.",
            f"Pasting from the config: {v}",
            f"({v})",
            f"is {v} still valid?",
        ]
    )
    return text, [v]


def _token_near_context(rng: random.Random) -> tuple[str, list[str]]:
    v = token(rng)
    kw = rng.choice(["API token", "token", "key", "secret", "access key", "credential", "API key"])
    text = rng.choice(
        [
            f"the {kw} {v} expired this morning",
            f"{kw.capitalize()} {v} no longer works.",
            f"Here's the {kw} \u2014 {v}",
            f"I regenerated the {kw} and now it is {v} but calls still fail",
            f"we pass {v} as the {kw} and get 401",
            f"the {kw} for staging: {v}",
        ]
    )
    return text, [v]


def _private_key(rng: random.Random) -> tuple[str, list[str]]:
    v = values.secret_value(rng, "private_key")
    kind = rng.choice(["RSA ", "EC ", "OPENSSH ", ""])
    v = v.replace("RSA ", kind)
    text = rng.choice([f"Our deploy key:\n{v}", f"{v}\nThat is the key on the build box.", v])
    return text, [v]


def _code_assignment(rng: random.Random) -> tuple[str, list[str]]:
    kw, v = _secret_pair(rng)
    key = "password" if kw.lower().startswith("pass") or kw in ("pw", "pwd") else "api_key"
    text = rng.choice(
        [
            f'{key} = "{v}"',
            f"const {key.replace('_k', 'K')} = '{v}';",
            f'db_{key} := "{v}"',
            f'config["{key}"] = "{v}"',
            f"{key.upper()}='{v}'",
        ]
    )
    return f"The code is:\n    {text}\n", [v]


def _azure_connection(rng: random.Random) -> tuple[str, list[str]]:
    v = values.secret_value(rng, "azure_storage_connection_string")
    return rng.choice([f"connection string: {v}", f"Here it is {v}", v]), [v]


FORMS: dict[str, Form] = {
    "prose_is": _prose_is,
    "keyword_colon": _keyword_colon,
    "quoted_sentence": _quoted_sentence,
    "use_to_log_in": _use_to_log_in,
    "next_line": _next_line,
    "connection_string": _connection_string,
    "url_credentials": _url_credentials,
    "auth_header": _auth_header,
    "cli_flag": _cli_flag,
    "env_export": _env_export,
    "json_yaml": _json_yaml,
    "vendor_token": _vendor_token,
    "token_near_context": _token_near_context,
    "private_key": _private_key,
    "code_assignment": _code_assignment,
    "azure_connection_string": _azure_connection,
}


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
        f"C:\\Users\\{r.choice(_USERS)}\\AppData\\Local\\Temp."
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


# --- Measurement --------------------------------------------------------------------------------
Finder = Callable[[str], list[tuple[int, int, float]]]  # text -> secret spans (start, end, score)


def covered(text: str, value: str, spans: list[tuple[int, int, float]], min_score: float) -> bool:
    """Whether every character of every occurrence of `value` lies inside a secret span.

    Strict on purpose: a finding that leaves even one character of the value outside counts the
    credential as missed, so "most of it was redacted" is a miss.
    """
    inside = set()
    for start, end, score in spans:
        if score >= min_score:
            inside.update(range(start, end))
    starts = [i for i in range(len(text)) if text.startswith(value, i)]
    return bool(starts) and all(all(j in inside for j in range(i, i + len(value))) for i in starts)


@dataclass
class Rates:
    """Catch per form (caught, planted), and clean tickets with a finding (dropped, clean)."""

    per_form: dict[str, tuple[int, int]]
    false_drops: tuple[int, int]
    missed: list[tuple[str, str]]  # (form, ticket text) of some misses, to look at
    false: list[str]  # some clean tickets that had a finding

    @property
    def catch(self) -> float:
        caught = sum(c for c, _ in self.per_form.values())
        return caught / max(1, sum(n for _, n in self.per_form.values()))

    @property
    def false_drop_rate(self) -> float:
        return self.false_drops[0] / max(1, self.false_drops[1])


def measure(
    planted: list[Ticket], clean: list[Ticket], find: Finder, min_score: float = 0.5
) -> Rates:
    """Catch rate per form over `planted`, false-drop rate over `clean`."""
    per_form: dict[str, list[int]] = {}
    missed: list[tuple[str, str]] = []
    for tk in planted:
        spans = find(tk.text)
        counts = per_form.setdefault(tk.form or "", [0, 0])
        for value in tk.secrets:
            counts[1] += 1
            if covered(tk.text, value, spans, min_score):
                counts[0] += 1
            elif len(missed) < 200:
                missed.append((tk.form or "", tk.text))
    false = [tk.text for tk in clean if any(s >= min_score for _, _, s in find(tk.text))]
    return Rates(
        {k: (v[0], v[1]) for k, v in per_form.items()}, (len(false), len(clean)), missed, false
    )
