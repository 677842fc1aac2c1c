"""Credentials in free text: gitleaks' and Titus' catalogues, detect-secrets' plugins, rules for
how people write them.

gitleaks' and Titus' rule catalogues (`screening.credential_rules`, vendored data) know ~650
vendor token formats, password hashes and connection strings; they run first and their findings
are typed by vendor (VENDOR_SECRET when the screen has no type of its own for one).

detect-secrets (Yelp) is built for source code: its token-format plugins (AWS, GitHub, Slack,
Stripe, JWT, private keys...) work anywhere, but its keyword plugin expects code-style
assignments and its high-entropy plugins only look inside quotes. Support tickets say "my password
is X", "use X to log in", "pw: X", paste `export DB_PASSWORD=X`, `mysql -pX`, connection strings,
`Authorization: Bearer X`, URLs with user:password@, JSON or YAML, or put the password on the line
after "password:", `curl -u user:X`, `-H "x-api-key: X"`, webhook URLs and `?api_key=X`.
`find_credentials` runs them all over a text and returns typed spans that cover the
secret value only (never the keyword before it), at every place the value occurs.

What is *not* a credential matters as much: order, invoice and ticket numbers, UUIDs, commit SHAs,
checksums, tracking numbers and versions look random too. Entropy alone never decides: a random
token counts only next to a credential word (password, token, key, secret, login...) with no
identifier word (sha, commit, checksum, order, invoice, tracking, build, request id...) after it;
a value after a credential word must look like one (not "incorrect", "expired", "********"),
and not like code (`credentials=credentials`, `token = get_token()`, `settings.SECRET_KEY`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

os.environ.setdefault("TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS", "")  # offline: bundled suffix list

from detect_secrets.plugins.artifactory import ArtifactoryDetector
from detect_secrets.plugins.aws import AWSKeyDetector
from detect_secrets.plugins.azure_storage_key import AzureStorageKeyDetector
from detect_secrets.plugins.base import RegexBasedDetector
from detect_secrets.plugins.basic_auth import BasicAuthDetector
from detect_secrets.plugins.cloudant import CloudantDetector
from detect_secrets.plugins.discord import DiscordBotTokenDetector
from detect_secrets.plugins.github_token import GitHubTokenDetector
from detect_secrets.plugins.gitlab_token import GitLabTokenDetector
from detect_secrets.plugins.high_entropy_strings import (
    Base64HighEntropyString,
    HexHighEntropyString,
)
from detect_secrets.plugins.ibm_cloud_iam import IbmCloudIamDetector
from detect_secrets.plugins.ibm_cos_hmac import IbmCosHmacDetector
from detect_secrets.plugins.jwt import JwtTokenDetector
from detect_secrets.plugins.keyword import (
    CONFIG_DENYLIST_REGEX_TO_GROUP,
    DENYLIST,
    QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP,
    KeywordDetector,
)
from detect_secrets.plugins.mailchimp import MailchimpDetector
from detect_secrets.plugins.npm import NpmDetector
from detect_secrets.plugins.openai import OpenAIDetector
from detect_secrets.plugins.private_key import PrivateKeyDetector
from detect_secrets.plugins.pypi_token import PypiTokenDetector
from detect_secrets.plugins.sendgrid import SendGridDetector
from detect_secrets.plugins.slack import SlackDetector
from detect_secrets.plugins.softlayer import SoftlayerDetector
from detect_secrets.plugins.square_oauth import SquareOAuthDetector
from detect_secrets.plugins.stripe import StripeDetector
from detect_secrets.plugins.telegram_token import TelegramBotTokenDetector
from detect_secrets.plugins.twilio import TwilioKeyDetector

from screening.credential_rules import catalogue
from screening.entities import SECRET_ENTITIES
from screening.recognizers import FinderRecognizer


@dataclass(frozen=True, order=True)
class Finding:
    """A credential in one text: [start, end) covers the secret value only."""

    start: int
    end: int
    entity: str
    score: float


# --- What a credential value looks like -------------------------------------------------------
_B64 = Base64HighEntropyString()
_HEX = HexHighEntropyString()


def entropy(value: str) -> float:
    """Shannon entropy per character over the base64 alphabet (detect-secrets' helper)."""
    return _B64.calculate_shannon_entropy(value)


# Words that follow "password is" / "token:" in tickets without being a credential.
_NOT_SECRETS = frozenset(
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
_MASKED = re.compile(
    r"[*•xX#.\-_]{3,}|<[^>]*>|\[[^\]]*\]|\$\{[^}]*\}|\{\{[^}]*\}\}|%\w+%|\$[A-Z_][A-Z0-9_]*"
)
_NOT_A_VALUE = re.compile(
    r"(?i)[a-z][a-z0-9+.\-]*://\S*"  # a URL (one with user:password@ is caught on its own)
    r"|[\w.+\-]+@[\w\-]+\.[\w.\-]+"  # an email address
    r"|(?:[a-z]:\\|~?/|\\\\)[\w.\-]+(?:[\\/][\w.\-]*)+|~?/[a-z]+"  # a path
    r"|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"  # a UUID
    r"|v?\d+(?:\.\d+){1,3}(?:[\-+][\w.]+)?"  # a version
    r"|[0-9a-f]{2}(?:[:\-][0-9a-f]{2}){5}"  # a MAC address
    r"|\d{1,4}(?:[\-/.]\d{1,4}){2}"  # a date
    r"|#?\d+"  # a plain number
)
_TRAILING = ".,;:?!)]}>'\"\u201d\u2019"
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


def _mixed(value: str) -> bool:
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
    if len(value) < 4 or len(value) > 200 or value.lower() in _NOT_SECRETS:
        return False
    if _MASKED.fullmatch(value) or _NOT_A_VALUE.fullmatch(value):
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
_PW_WORD = r"(?:pass(?:word|wd|phrase|code)?s?|pwd|pw|passwort|contrase(?:ñ|n)a)"
_KEY_WORD = (
    r"(?:secrets?|tokens?|api[_\- ]?keys?|apikeys?|access[_\- ]?keys?|auth[_\- ]?keys?"
    r"|private[_\- ]?keys?|secret[_\- ]?keys?|keys?|credentials?|creds|auth)"
)
_CRED_CONTEXT = re.compile(
    rf"(?i)(?<![a-z]){_PW_WORD}(?![a-z])|(?<![a-z]){_KEY_WORD}(?![a-z])"
    r"|(?<![a-z])(?:log|sign)[\s\-]?(?:in|on)(?![a-z])|(?<![a-z])login(?![a-z])"
)
_PW_CONTEXT = re.compile(rf"(?i)(?<![a-z]){_PW_WORD}(?![a-z])|log[\s\-]?in|sign[\s\-]?in")
# Words that say the random string next to them is an identifier or a checksum.
_ID_CONTEXT = re.compile(
    r"(?i)(?<![a-z])(?:sha(?:-?\d+)?|md5|hash(?:es)?|checksums?|digests?|commits?|revision|rev"
    r"|builds?|orders?|invoices?|tracking|shipments?|parcels?|(?:request|req|trace|span"
    r"|correlation|session|transaction|txn|message|device|user|customer|account|key|client"
    r"|tenant|subscription|object|file|job|run|event)[\s_\-]?ids?|ids?|reference|ref|refs"
    r"|tickets?|cases?|sku|serial|part|model|versions?|uuid|guid|etag|fingerprint|image|docker"
    r"|container|branch|tag|pr|mac|confirmation|receipt|booking|voucher|coupon|promo)(?![a-z])"
)


def _context_before(text: str, start: int, width: int = 60) -> str:
    """Up to `width` characters before `start`: this line, or the previous one if this is empty."""
    line_start = text.rfind("\n", 0, start) + 1
    before = text[max(line_start, start - width) : start]
    if not before.strip() and line_start > 0:
        prev_start = text.rfind("\n", 0, line_start - 1) + 1
        before = text[max(prev_start, line_start - 1 - width) : line_start - 1] + " "
    return _SENTENCE_END.split(before)[-1]


_SENTENCE_END = re.compile(r"[.!?](?:\s+|$)(?=[A-Z\s]|$)")


def _credential_context(before: str) -> str | None:
    """PASSWORD or API_KEY when a credential word is the last word of note before a value."""
    cred = list(_CRED_CONTEXT.finditer(before))
    if not cred:
        return None
    last = cred[-1]
    ids = [m for m in _ID_CONTEXT.finditer(before) if m.start() >= last.end()]
    if ids:
        return None
    return "PASSWORD" if _PW_CONTEXT.fullmatch(last.group(0)) else "API_KEY"


def _kind(keyword: str) -> str:
    return "PASSWORD" if re.search(rf"(?i){_PW_WORD}|log|sign", keyword) else "API_KEY"


# --- detect-secrets plugins ---------------------------------------------------------------------
_WIDEN = re.compile(r"[\w\-]")
_WIDEN_JWT = re.compile(r"[\w\-.=+/]")
_PRIVATE_KEY_BLOCK = re.compile(
    r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----"
    r"(?:[\s\S]*?-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|(?:\s*[A-Za-z0-9+/=:\-]+)*)"
)


def _widen(text: str, start: int, end: int, chars: re.Pattern[str] = _WIDEN) -> tuple[int, int]:
    """Grow [start, end) to the whole token: detect-secrets may yield a regex group only."""
    while start > 0 and chars.fullmatch(text[start - 1]):
        start -= 1
    while end < len(text) and chars.fullmatch(text[end]):
        end += 1
    while chars is _WIDEN_JWT and end > start and text[end - 1] == ".":  # a sentence's full stop
        end -= 1
    return start, end


def _strip_key(text: str, start: int, end: int) -> tuple[int, int]:
    """`AccountKey=abc` -> `abc`; ` AKC...` -> `AKC...`."""
    value = text[start:end]
    m = re.match(r"\s*(?:\w+=|[=:\"])?\s*", value)
    start += m.end() if m else 0
    while end > start and text[end - 1] in ' "\n':
        end -= 1
    return start, end


def _private_key(text: str, start: int, end: int) -> tuple[int, int]:
    """The header line detect-secrets matches -> the whole key block."""
    block_start = text.rfind("-----", max(0, start - 6), start)
    if block_start != -1:
        m = _PRIVATE_KEY_BLOCK.match(text, block_start)
        if m:
            return m.start(), m.end()
    return start, end


Refine = Callable[[str, int, int], tuple[int, int]]


def _aws(value: str) -> str:
    return "AWS_ACCESS_KEY" if re.fullmatch(r"[A-Z0-9]{20}", value) else "AWS_SECRET_KEY"


# plugin, entity (or a function of the value), score, how to turn the value into its span
_TOKEN_PLUGINS: tuple[tuple[RegexBasedDetector, str | Callable[[str], str], float, Refine], ...] = (
    (AWSKeyDetector(), _aws, 1.0, _widen),
    (GitHubTokenDetector(), "GITHUB_TOKEN", 1.0, _widen),
    (GitLabTokenDetector(), "GITLAB_TOKEN", 1.0, _widen),
    (SlackDetector(), "SLACK_TOKEN", 1.0, _widen),
    (StripeDetector(), "STRIPE_KEY", 1.0, _widen),
    (TwilioKeyDetector(), "TWILIO_KEY", 0.9, _widen),
    (SendGridDetector(), "SENDGRID_KEY", 1.0, lambda t, s, e: _widen(t, s, e, _WIDEN_JWT)),
    (OpenAIDetector(), "OPENAI_KEY", 1.0, _widen),
    (NpmDetector(), "NPM_TOKEN", 1.0, lambda t, s, e: (s, s + len(t[s:e].split()[0]))),
    (PypiTokenDetector(), "PYPI_TOKEN", 1.0, _widen),
    (DiscordBotTokenDetector(), "DISCORD_TOKEN", 0.9, lambda t, s, e: _widen(t, s, e, _WIDEN_JWT)),
    (TelegramBotTokenDetector(), "TELEGRAM_TOKEN", 0.9, lambda t, s, e: (s, e)),
    (MailchimpDetector(), "MAILCHIMP_KEY", 0.9, _widen),
    (SquareOAuthDetector(), "SQUARE_OAUTH_SECRET", 1.0, _widen),
    (ArtifactoryDetector(), "ARTIFACTORY_TOKEN", 0.9, _strip_key),
    (IbmCloudIamDetector(), "IBM_CLOUD_KEY", 0.9, _widen),
    (IbmCosHmacDetector(), "IBM_CLOUD_KEY", 0.9, _widen),
    (CloudantDetector(), "IBM_CLOUD_KEY", 0.9, _widen),
    (SoftlayerDetector(), "IBM_CLOUD_KEY", 0.9, _widen),
    (AzureStorageKeyDetector(), "AZURE_STORAGE_KEY", 1.0, _strip_key),
    (JwtTokenDetector(), "JWT", 1.0, lambda t, s, e: _widen(t, s, e, _WIDEN_JWT)),
    (PrivateKeyDetector(), "PRIVATE_KEY", 1.0, _private_key),
    (BasicAuthDetector(), "BASIC_AUTH_CREDENTIALS", 1.0, lambda t, s, e: (s, e)),
)
# Token formats detect-secrets has no plugin for, or matches too narrowly for free text.
_TOKEN_PATTERNS: tuple[tuple[str, re.Pattern[str], float], ...] = (
    (
        "AWS_SECRET_KEY",
        re.compile(r"(?i)aws_?secret_?access_?key\W{0,3}([A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])"),
        1.0,
    ),
    ("NPM_TOKEN", re.compile(r"\b(npm_[A-Za-z0-9]{36})(?![A-Za-z0-9])"), 1.0),
    (
        "AZURE_CONNECTION_STRING",
        re.compile(
            r"((?:DefaultEndpointsProtocol=[^;\s]+;)?AccountName=[^;\s]+;AccountKey="
            r"[A-Za-z0-9+/=]{20,}(?:;[A-Za-z]+=[^;\s]+)*)"
        ),
        1.0,
    ),
    (
        "AZURE_SAS_TOKEN",
        re.compile(r"(?:[?&]|\b)(sv=\d{4}-\d{2}-\d{2}&[^\s\"']*sig=[A-Za-z0-9%+/=]{20,})"),
        1.0,
    ),
)
_KEYWORD = KeywordDetector()
_KEYWORD_LINE = re.compile("(?i)" + "|".join(DENYLIST))
_KEYWORD_ATTEMPTS = (CONFIG_DENYLIST_REGEX_TO_GROUP, QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP)
_QUOTES = "\"'`"


def _lines(text: str) -> Iterator[tuple[int, str]]:
    start = 0
    for line in text.split("\n"):
        yield start, line
        start += len(line) + 1


def _finds(haystack: str, value: str) -> Iterator[int]:
    i = haystack.find(value)
    while i != -1:
        yield i
        i = haystack.find(value, i + 1)


def _plugin_values(plugin: RegexBasedDetector, text: str) -> Iterator[tuple[str, int]]:
    """The values a plugin yields, each located in the text inside the match that produced it."""
    for regex in plugin.denylist:
        for m in regex.finditer(text):
            for value in set(plugin.analyze_string(m.group(0))):
                if value:
                    for i in _finds(m.group(0), value):
                        yield value, m.start() + i


def _plugin_findings(text: str) -> Iterator[Finding]:
    for plugin, entity, score, refine in _TOKEN_PLUGINS:
        for value, i in _plugin_values(plugin, text):
            name = entity(value) if callable(entity) else entity
            start, end = refine(text, i, i + len(value))
            yield Finding(start, end, name, score)
    for entity, pattern, score in _TOKEN_PATTERNS:
        for m in pattern.finditer(text):
            yield Finding(*m.span(1), entity, score)
    for offset, line in _lines(text):
        if _KEYWORD_LINE.search(line):
            yield from _keyword_findings(line, offset)
        if any(q in line for q in _QUOTES):
            yield from _entropy_findings(text, line, offset)


def _keyword_findings(line: str, offset: int) -> Iterator[Finding]:
    """detect-secrets' KeywordDetector; its values run to the end of the line unless quoted."""
    for attempt in _KEYWORD_ATTEMPTS:
        for value in set(_KEYWORD.analyze_string(line, attempt)):
            for i in _finds(line, value):
                after = line[i + len(value) : i + len(value) + 1]
                quoted = i > 0 and line[i - 1] in _QUOTES and after == line[i - 1]
                words = re.split(r"[\s;,]+", value.strip())
                token = value if quoted else words[0].rstrip(_TRAILING) if words else ""
                before = line[:i].rstrip(" \t\"'`")
                strength = "quoted" if quoted else "assign" if before.endswith("=") else "prose"
                if not _credential_context(before):  # "Secretary: Jane" is no keyword
                    continue
                following = line[i + len(token) : i + len(token) + 1]
                if token and credible(token, strength, following):
                    yield Finding(offset + i, offset + i + len(token), "SECRET_KEYWORD", 0.8)


def _entropy_findings(text: str, line: str, offset: int) -> Iterator[Finding]:
    """detect-secrets' high-entropy plugins (quoted strings), weighed by the words before them."""
    for plugin in (_B64, _HEX):
        for value in set(plugin.analyze_string(line)):
            if len(value) < 12 or plugin.calculate_shannon_entropy(value) <= plugin.entropy_limit:
                continue
            for i in _finds(line, value):
                start = offset + i
                before = _context_before(text, start - 1)
                if _ID_CONTEXT.search(before[-30:]) and not _credential_context(before):
                    continue
                if _credential_context(before):
                    yield Finding(start, start + len(value), "HIGH_ENTROPY_SECRET", 0.8)
                elif plugin is _B64 and not re.fullmatch(r"[0-9a-fA-F\-]+", value):
                    yield Finding(start, start + len(value), "HIGH_ENTROPY_SECRET", 0.6)


# --- Free-text rules ----------------------------------------------------------------------------
_VALUE = (
    "(?:(?P<q>[\"'`\u201c\u2018])(?P<qv>[^\"'`\u201d\u2019\n]{1,200}?)[\"'`\u201d\u2019]"
    r"|(?P<uv>[^\s\"'`,;<>()\[\]{}]{1,200}))"
)
_KEY_NAME = (
    # DB_PASSWORD, dbPassword, x-api-key, "client_secret", password: a credential word that does
    # not end a longer word (bypass, compass) nor start one (passport, tokenizer).
    r"(?:(?<![a-z])|(?<=[a-z0-9])(?-i:(?=[A-Z])))"
    rf"(?:{_PW_WORD}|{_KEY_WORD})"
    r"(?![\w\-]*?(?:name|_?id|_?ids|file|path|url|uri|arn|ref|length|policy|type|expiry|expires"
    r"|rotation|manager|field|hint|reset|format|count|location|store|vault|age|prompt|len)\b)"
    r"(?:[_\-.][a-z0-9]+){0,3}(?![a-z])"
)
# key = value, key: value, "key": "value", key is value, key for the admin account is value...
_ASSIGNED = re.compile(
    rf"(?i)(?P<key>{_KEY_NAME})(?P<gap>[\"'\]]{{0,2}}[ \t]*"
    r"(?:(?P<op>:=|=>|=|:|[ \t][\-\u2013\u2014][ \t]|[ \t]is(?:[ \t]now|[ \t]still)?|[ \t]was"
    r"|[ \t](?:has been[ \t])?"
    r"(?:set|changed|reset)[ \t]to|[ \t]to)"
    r"|[ \t]+(?:for|on|of)[ \t]+(?:the[ \t]+|my[ \t]+|our[ \t]+)?[^\s:=]{1,40}(?:[ \t][^\s:=]{1,40})?"
    r"(?:[ \t]+(?:account|user|login|server|box|portal|db|database|vm|instance|site|panel"
    r"|console|mailbox|router|wifi|network|app))?[ \t]*(?P<op2>(?<=[ \t])(?:is|was)"
    r"(?:[ \t]+(?:set|changed|reset)[ \t]+to)?|=|:)"
    r"|(?P<sp>[ \t]))[ \t]*)" + _VALUE
)
# the credential alone on the line after "password:" or "API token -"
_NEXT_LINE = re.compile(
    rf"(?im)(?P<key>{_KEY_NAME})[ \t]*(?:is|are|[:=\-])?[ \t]*(?:below|follows)?[ \t]*:?[ \t]*\n"
    r"[ \t]*(?:[\"'`](?P<qv>[^\"'`\n]+)[\"'`]|(?P<uv>\S+))"
)
# use X to log in / try X as the password / X is my password / log in with admin / X
_USE_TO_LOG_IN = re.compile(
    r"(?i)\b(?:use|try|with|enter|type|using)[ \t]+(?:the[ \t]+)?(?:password[ \t]+)?"
    + _VALUE
    + r"[ \t]+(?P<key>to[ \t]+(?:log|sign)[ \t]?(?:in|on)|as[ \t]+(?:the|my|a|your|our)[ \t]+"
    r"(?:new[ \t]+|temporary[ \t]+|temp[ \t]+|current[ \t]+)?(?:password|pw|passcode|passphrase"
    r"|login|token|key|secret|api[ \t]key))"
)
_IS_MY_PASSWORD = re.compile(
    r"(?i)(?<![^\s\"'`(])"
    + _VALUE
    + r"[ \t]+(?:is|was|would be)[ \t]+(?:the|my|our|his|her|their|your)[ \t]+(?:new[ \t]+"
    r"|current[ \t]+|temporary[ \t]+|temp[ \t]+|old[ \t]+|admin[ \t]+)?(?P<key>password|pw"
    r"|passcode|passphrase|login|token|api[ \t]key|secret)\b"
)
_USER_SLASH_PASSWORD = re.compile(
    r"(?i)(?P<key>(?:log|sign)[ \t]?(?:in|on)[ \t]+(?:with|using)|login|credentials?|creds"
    r"|user(?:name)?[ \t]*/[ \t]*pass(?:word)?)[ \t]*(?:is|are|:|=)?[ \t]*(?:user(?:name)?[ \t]+)?"
    r"[^\s/:]{2,64}[ \t]*(?:/|:|[ \t]and[ \t](?:password[ \t]+)?|,[ \t]*(?:password[ \t]+)?)[ \t]*"
    + _VALUE
)
_URL_PASSWORD = re.compile(r"(?i)\b[a-z][a-z0-9+.\-]*://[^\s:/@]+:(?P<uv>[^\s/]+)@[^\s@/]")
_AUTH_HEADER = re.compile(
    r"(?i)(?P<key>authorization\b[\"']?[ \t]*[:=]?[ \t]*[\"']?(?:bearer|basic|token|digest|apikey"
    r"|api-key|sso-key)|\bbearer(?:[ \t]+token)?)[ \t]+(?P<uv>[A-Za-z0-9._~+/\-:]{8,}=*)"
)
_CLI_FLAG = re.compile(
    r"(?i)(?<![\w-])(?P<key>--?(?:db-|admin-|root-)?(?:password|passwd|pass|pwd|token|api-?key"
    r"|secret|client-secret|auth-token|access-token|private-token))(?:=|[ \t]+)" + _VALUE
)
_CLI_SHORT = re.compile(
    r"(?i)\b(?:(?P<mysql>mysql|mysqldump|mysqladmin|mariadb)\b[^\n]*?[ \t]-p"
    r"|psexec(?:\.exe)?\b[^\n]*?[ \t]-p[ \t]+"
    r"|(?:sshpass|mongo|mongosh)\b[^\n]*?[ \t]-p[ \t]*|sqlcmd\b[^\n]*?[ \t]-P[ \t]*"
    r"|redis-cli\b[^\n]*?[ \t]-a[ \t]+)" + _VALUE
)
# curl -u user:password, --user=user:password, -u "user:password", -u token: (a token as user)
_CURL_USER = re.compile(
    r"\bcurl\b(?:[^\n]|\\\n)*?[ \t](?:-u|--user)(?:[ \t]*=[ \t]*|[ \t]*)(?P<q>[\"']?)"
    r"(?P<user>[^\s:\"']*):(?P<pw>[^\s\"']*)(?P=q)(?=[\s;|&)]|$)"
)
# HTTP headers that carry a credential: raw header lines, curl/httpie/wget -H "...", quoted
_HEADER_NAMES = (
    r"(?:proxy-)?authorization|x-api-?key|api-?key|apikey|x-auth-?token|x-access-?token"
    r"|x-auth-?key|x-api-?token|x-token|private-token|x-gitlab-token|x-vault-token"
    r"|ocp-apim-subscription-key|x-functions-key|x-goog-api-key|x-rapidapi-key|x-figma-token"
    r"|x-shopify-access-token|x-postmark-server-token|x-[a-z0-9-]*(?:api-?key|secret|token)"
)
_HEADER = re.compile(
    r"(?im)(?:^[ \t]*|(?:-H|--header)(?:[ \t]*=?[ \t]*)[\"']?|[\"'{,][ \t]*)"
    rf"(?P<key>{_HEADER_NAMES})[\"']?[ \t]*:[ \t]*[\"']?[ \t]*"
    r"(?:(?:bearer|basic|token|digest|apikey|api-key|sso-key|key|ssws|sharedaccesssignature)[ \t]+)?"
    r"(?P<uv>[A-Za-z0-9._~+/\-:=%&]{8,})"
)
# incoming-webhook URLs: whoever holds one can post as the integration
_WEBHOOK = re.compile(
    r"(?i)\bhttps?://(?:hooks\.slack\.com/(?:services|workflows|triggers)/[\w/+\-]{20,}"
    r"|(?:(?:ptb|canary)\.)?discord(?:app)?\.com/api/webhooks/\d{5,25}/[\w\-]{20,}"
    r"|[\w\-]+\.webhook\.office\.com/webhookb2/[^\s\"'<>]{20,}"
    r"|outlook\.office(?:365)?\.com/webhook/[^\s\"'<>]{20,}"
    r"|hooks\.zapier\.com/hooks/catch/\d+/\w+/?)"
)
# credentials in a URL's query string: ?api_key=X, &access_token=X, &sig=X (SAS), ...
_URL_QUERY = re.compile(
    r"(?i)[?&](?P<key>api[_\-]?key|apikey|access[_\-]?token|auth[_\-]?token|token|secret"
    r"|client[_\-]?secret|password|passwd|pwd|sig|signature|key|private[_\-]?token"
    r"|refresh[_\-]?token|id[_\-]?token|session[_\-]?token|x-amz-signature"
    r"|x-amz-security-token|access[_\-]?key|secret[_\-]?key|auth)=(?P<uv>[^&#\s\"'<>]{8,})"
)
_SETX = re.compile(rf"(?i)\bsetx[ \t]+(?P<key>{_KEY_NAME})[ \t]+" + _VALUE)
_TOKEN = re.compile(r"(?<![\w\-+/=.~@:])[A-Za-z0-9+/\-_][A-Za-z0-9_\-+/=.~!@#$%^&*]{15,199}")


_SNAKE_VARIABLE = re.compile(r"[a-z]+_[a-z]+[0-9]?")


def _value_span(m: re.Match[str]) -> tuple[int, int, str, bool]:
    if m.groupdict().get("qv") is not None:
        return m.start("qv"), m.end("qv"), m.group("qv"), True
    start, end = m.span("uv")
    value = m.group("uv")
    while value and value[-1] in _TRAILING:
        value, end = value[:-1], end - 1
    return start, end, value, False


def _strength(m: re.Match[str], quoted: bool) -> str:
    if quoted:
        return "quoted"
    op = (m.groupdict().get("op") or m.groupdict().get("op2") or "").strip()
    return "assign" if op in ("=", ":=", "=>", "==") else "prose"


def _rule_findings(text: str) -> Iterator[Finding]:
    for m in _ASSIGNED.finditer(text):
        start, end, value, quoted = _value_span(m)
        strength = _strength(m, quoted)
        if m.group("sp") and not quoted and m.group("key").lower().rstrip("s") in ("key", "auth"):
            continue  # "key X", "auth X": too loose without an operator; entropy rule decides
        kind = _kind(m.group("key"))
        if kind == "API_KEY" and not quoted and _SNAKE_VARIABLE.fullmatch(value):
            continue  # `key=sort_func`: a token or key is not two lower-case words
        if credible(value, strength, text[end : end + 1]):
            yield Finding(start, end, kind, 0.9)
    for m in _NEXT_LINE.finditer(text):
        start, end, value, quoted = _value_span(m)
        if not quoted and _SNAKE_VARIABLE.fullmatch(value):
            continue
        if credible(value, "quoted" if quoted else "prose", text[end : end + 1]):
            yield Finding(start, end, _kind(m.group("key")), 0.9)
    for pattern in (_USE_TO_LOG_IN, _IS_MY_PASSWORD, _SETX):
        for m in pattern.finditer(text):
            start, end, value, quoted = _value_span(m)
            if credible(value, "quoted" if quoted else "prose"):
                yield Finding(start, end, _kind(m.group("key")), 0.9)
    for m in _USER_SLASH_PASSWORD.finditer(text):
        start, end, value, quoted = _value_span(m)
        if credible(value, "quoted" if quoted else "prose", text[end : end + 1]):
            yield Finding(start, end, "PASSWORD", 0.9)
    for m in _URL_PASSWORD.finditer(text):
        if not _MASKED.fullmatch(m.group("uv")):
            yield Finding(*m.span("uv"), "BASIC_AUTH_CREDENTIALS", 1.0)
    for m in _AUTH_HEADER.finditer(text):
        start, end, value, _ = _value_span(m)
        header = m.group("key").lower().startswith("authorization")
        if (header or credible(value, "prose")) and not _MASKED.fullmatch(value):
            yield Finding(start, end, "BEARER_TOKEN", 0.9)
    for m in _CLI_FLAG.finditer(text):
        start, end, value, quoted = _value_span(m)
        if credible(value, "quoted" if quoted else "assign"):
            yield Finding(start, end, _kind(m.group("key")), 0.9)
    for m in _CLI_SHORT.finditer(text):
        start, end, value, quoted = _value_span(m)
        if credible(value, "quoted" if quoted else "assign"):
            yield Finding(start, end, "PASSWORD", 0.9)
    yield from _free_text_findings(text)
    yield from _near_context_findings(text)


def _token_like(value: str) -> bool:
    """A header or query value that is a token: 8+ characters, not masked, not a word."""
    return (
        len(value) >= 8
        and not _MASKED.fullmatch(value)
        and value.lower() not in _NOT_SECRETS
        and not re.fullmatch(r"[A-Za-z]+|[a-z]+(?:[\-_][a-z]+)*|\d{1,12}", value)
        and not code_expression(value)
    )


def _free_text_findings(text: str) -> Iterator[Finding]:
    """curl -u, HTTP headers, webhook URLs and credentials in query strings."""
    for m in _CURL_USER.finditer(text):
        user, pw = m.group("user"), m.group("pw")
        if pw and not _MASKED.fullmatch(pw) and pw.lower() not in _NOT_SECRETS and len(pw) >= 3:
            yield Finding(*m.span("pw"), "PASSWORD", 0.9)
        elif not pw and len(user) >= 12 and _mixed(user) and not _MASKED.fullmatch(user):
            yield Finding(*m.span("user"), "API_KEY", 0.9)  # -u sk_live_...: (token as user)
    for m in _HEADER.finditer(text):
        start, end = m.span("uv")
        value = m.group("uv")
        while value and value[-1] in _TRAILING:
            value, end = value[:-1], end - 1
        if _token_like(value) and not re.search(r"[:/]{2}", value):
            yield Finding(start, end, "BEARER_TOKEN", 0.9)
    for m in _WEBHOOK.finditer(text):
        start, end = m.span()
        while end > start and text[end - 1] in _TRAILING:
            end -= 1
        yield Finding(start, end, "WEBHOOK_URL", 0.9)
    for m in _URL_QUERY.finditer(text):
        value = m.group("uv")
        loose = m.group("key").lower() in ("key", "sig", "signature", "auth", "token")
        if _token_like(value) and (not loose or entropy(value) >= 3.0):
            yield Finding(*m.span("uv"), "API_KEY", 0.9)


def _near_context_findings(text: str) -> Iterator[Finding]:
    """Random-looking tokens after a credential word (and no identifier word in between)."""
    for m in _TOKEN.finditer(text):
        value, start = m.group(0), m.start()
        while value and value[-1] in _TRAILING:
            value = value[:-1]
        if len(value) < 16 or _NOT_A_VALUE.fullmatch(value) or not _mixed(value):
            continue
        if code_expression(value, text[start + len(value) : start + len(value) + 1]):
            continue
        if entropy(value) < 3.0:
            continue
        kind = _credential_context(_context_before(text, start))
        if kind:
            yield Finding(start, start + len(value), kind, 0.8)


def _catalogue_findings(text: str) -> Iterator[Finding]:
    """The catalogues' vendor formats (`screening.credential_rules`), typed by the rule's vendor.

    gitleaks' `curl -u` rule yields `user:password`: the finding is the password alone (the
    user when the password is empty: a token passed as the user name)."""
    for f in catalogue().find(text):
        start, end = f.start, f.end
        if f.rule.entity == "BASIC_AUTH_CREDENTIALS" and ":" in text[start:end]:
            colon = text.index(":", start, end)
            if colon + 1 < end:
                start = colon + 1
            else:
                end = colon
            start, end = _unquote(text, start, end)
        yield Finding(start, end, f.rule.entity, f.rule.score)


def _unquote(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start] in _QUOTES:
        start += 1
    while end > start and text[end - 1] in _QUOTES:
        end -= 1
    return start, end


_QUERY_KEY_BEFORE = re.compile(r"[?&][\w.\-\[\]]+=$")


def _placeholder_password(text: str, f: Finding) -> bool:
    """`scheme://username:password@host` in documentation: the password is the word itself."""
    value = text[f.start : f.end].lower()
    return f.entity == "BASIC_AUTH_CREDENTIALS" and value in (
        *("password", "passwd", "pwd", "pass", "token", "mypassword", "mypass"),
        *("yourpassword", "your_password", "changeme"),
    )


def _query_value(text: str, f: Finding) -> Finding:
    """A value found in a URL's query string ends at the next `&` or `#`."""
    value = text[f.start : f.end]
    cut = min((i for i in (value.find("&"), value.find("#")) if i > 0), default=-1)
    if cut > 0 and _QUERY_KEY_BEFORE.search(text, max(0, f.start - 60), f.start):
        return Finding(f.start, f.start + cut, f.entity, f.score)
    return f


# --- Entry point --------------------------------------------------------------------------------
_MIN_PROPAGATED = 6


def find_credentials(text: str) -> list[Finding]:
    """Every credential in `text`, typed, each span covering exactly the secret value.

    A value found once is also found wherever else it occurs in the text.
    """
    found = {
        _query_value(text, f)
        for f in (*_catalogue_findings(text), *_plugin_findings(text), *_rule_findings(text))
        if f.end > f.start and not _placeholder_password(text, f)
    }
    values = {text[f.start : f.end]: f for f in sorted(found, key=lambda f: -f.score)}
    for value, f in values.items():
        if len(value) >= _MIN_PROPAGATED:
            for i in _finds(text, value):
                found.add(Finding(i, i + len(value), f.entity, f.score))
    return sorted(found)


class CredentialRecognizer(FinderRecognizer):
    """Presidio recognizer for `find_credentials`: one finding per credential, typed."""

    def __init__(self) -> None:
        super().__init__("CredentialRecognizer", list(SECRET_ENTITIES), find_credentials)
