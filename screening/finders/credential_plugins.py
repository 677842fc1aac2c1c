"""Credentials found by detect-secrets' plugins: vendor token formats, its keyword detector and
its high-entropy strings, each widened or trimmed to the secret value.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable, Iterator

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

from screening.finders.credential_values import (
    B64,
    HEX,
    ID_CONTEXT,
    NOT_A_VALUE,
    TRAILING,
    Finding,
    code_expression,
    context_before,
    credential_context,
    credible,
)

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
QUOTES = "\"'`"


def _lines(text: str) -> Iterator[tuple[int, str]]:
    start = 0
    for line in text.split("\n"):
        yield start, line
        start += len(line) + 1


def finds(haystack: str, value: str) -> Iterator[int]:
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
                    for i in finds(m.group(0), value):
                        yield value, m.start() + i


def plugin_findings(text: str) -> Iterator[Finding]:
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
        if any(q in line for q in QUOTES):
            yield from _entropy_findings(text, line, offset)
        if "=" in line or ":" in line:
            yield from _assigned_findings(text, line, offset)


def _keyword_findings(line: str, offset: int) -> Iterator[Finding]:
    """detect-secrets' KeywordDetector; its values run to the end of the line unless quoted."""
    for attempt in _KEYWORD_ATTEMPTS:
        for value in set(_KEYWORD.analyze_string(line, attempt)):
            for i in finds(line, value):
                after = line[i + len(value) : i + len(value) + 1]
                quoted = i > 0 and line[i - 1] in QUOTES and after == line[i - 1]
                words = re.split(r"[\s;,]+", value.strip())
                token = value if quoted else words[0].rstrip(TRAILING) if words else ""
                before = line[:i].rstrip(" \t\"'`")
                strength = "quoted" if quoted else "assign" if before.endswith("=") else "prose"
                if not credential_context(before):  # "Secretary: Jane" is no keyword
                    continue
                following = line[i + len(token) : i + len(token) + 1]
                if token and credible(token, strength, following):
                    yield Finding(offset + i, offset + i + len(token), "SECRET_KEYWORD", 0.8)


def _entropy_findings(text: str, line: str, offset: int) -> Iterator[Finding]:
    """detect-secrets' high-entropy plugins (quoted strings), weighed by the words before them."""
    for plugin in (B64, HEX):
        for value in set(plugin.analyze_string(line)):
            if len(value) < 12 or plugin.calculate_shannon_entropy(value) <= plugin.entropy_limit:
                continue
            for i in finds(line, value):
                start = offset + i
                before = context_before(text, start - 1)
                if ID_CONTEXT.search(before[-30:]) and not credential_context(before):
                    continue
                if credential_context(before):
                    yield Finding(start, start + len(value), "HIGH_ENTROPY_SECRET", 0.8)
                elif plugin is B64 and not re.fullmatch(r"[0-9a-fA-F\-]+", value):
                    yield Finding(start, start + len(value), "HIGH_ENTROPY_SECRET", 0.6)


# An unquoted value after a key name of any kind (`ref=`, `x-data: `): base64 or base64url
# characters, 24 or more, of upper and lower case and digits, as random as a key
_ASSIGNED = re.compile(
    r"(?<![\w.\-])[A-Za-z_][\w.\-]{0,40}[ \t]*(?:=|:[ \t]*)([A-Za-z0-9+/_\-]{24,200}={0,2})"
    r"(?![\w+/=\-])"
)
_LOWER_RUN = re.compile(r"[a-z]{9}")


def random_like(value: str) -> bool:
    """Whether a value reads as random bytes in base64: two or more each of upper case, lower
    case and digits, no run of nine lower-case letters (a word), and its character entropy at
    least 85% of the most its length allows (a 40-character key: 4.5 of 5.3 bits)."""
    counts = (
        sum(c.isupper() for c in value),
        sum(c.islower() for c in value),
        sum(c.isdigit() for c in value),
    )
    if min(counts) < 2 or _LOWER_RUN.search(value):
        return False
    most = math.log2(min(len(value), 64))
    return B64.calculate_shannon_entropy(value) >= 0.85 * most


def _assigned_findings(text: str, line: str, offset: int) -> Iterator[Finding]:
    """Random-looking values under any key name, unquoted (`blob=q8Xr...` in a support
    message): a secret, unless the words before call it an identifier or a checksum, or it is
    a URL's query parameter with no credential word."""
    for match in _ASSIGNED.finditer(line):
        value = match.group(1)
        if NOT_A_VALUE.fullmatch(value) or code_expression(value) or not random_like(value):
            continue
        start = offset + match.start(1)
        before = context_before(text, start)
        if line[match.start() - 1 : match.start()] in ("?", "&") and not credential_context(before):
            continue  # a URL's query parameter (`gclid=`): a tracking or session id
        if ID_CONTEXT.search(before[-40:]) and not credential_context(before):
            continue
        yield Finding(start, start + len(value), "HIGH_ENTROPY_SECRET", 0.6)
