"""Credentials in free text: gitleaks' and Titus' catalogues, detect-secrets' plugins, rules for
how people write them.

gitleaks' and Titus' rule catalogues (`screening.finders.credential_rules`, vendored data) know ~650
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
from collections.abc import Iterator

os.environ.setdefault("TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS", "")  # offline: bundled suffix list


from screening.finders.credential_plugins import QUOTES, finds, plugin_findings
from screening.finders.credential_rules import catalogue
from screening.finders.credential_values import (
    KEY_WORD,
    MASKED,
    NOT_A_VALUE,
    NOT_SECRETS,
    PW_WORD,
    TRAILING,
    Finding,
    code_expression,
    context_before,
    credential_context,
    credible,
    entropy,
    kind_of_keyword,
    mixed,
)

# --- Free-text rules ----------------------------------------------------------------------------
_VALUE = (
    "(?:(?P<q>[\"'`\u201c\u2018])(?P<qv>[^\"'`\u201d\u2019\n]{1,200}?)[\"'`\u201d\u2019]"
    r"|(?P<uv>[^\s\"'`,;<>()\[\]{}]{1,200}))"
)
_KEY_NAME = (
    # DB_PASSWORD, dbPassword, x-api-key, "client_secret", password: a credential word that does
    # not end a longer word (bypass, compass) nor start one (passport, tokenizer).
    r"(?:(?<![a-z])|(?<=[a-z0-9])(?-i:(?=[A-Z])))"
    rf"(?:{PW_WORD}|{KEY_WORD})"
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
    while value and value[-1] in TRAILING:
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
        kind = kind_of_keyword(m.group("key"))
        if kind == "API_KEY" and not quoted and _SNAKE_VARIABLE.fullmatch(value):
            continue  # `key=sort_func`: a token or key is not two lower-case words
        if credible(value, strength, text[end : end + 1]):
            yield Finding(start, end, kind, 0.9)
    for m in _NEXT_LINE.finditer(text):
        start, end, value, quoted = _value_span(m)
        if not quoted and _SNAKE_VARIABLE.fullmatch(value):
            continue
        if credible(value, "quoted" if quoted else "prose", text[end : end + 1]):
            yield Finding(start, end, kind_of_keyword(m.group("key")), 0.9)
    for pattern in (_USE_TO_LOG_IN, _IS_MY_PASSWORD, _SETX):
        for m in pattern.finditer(text):
            start, end, value, quoted = _value_span(m)
            if credible(value, "quoted" if quoted else "prose"):
                yield Finding(start, end, kind_of_keyword(m.group("key")), 0.9)
    for m in _USER_SLASH_PASSWORD.finditer(text):
        start, end, value, quoted = _value_span(m)
        if credible(value, "quoted" if quoted else "prose", text[end : end + 1]):
            yield Finding(start, end, "PASSWORD", 0.9)
    for m in _URL_PASSWORD.finditer(text):
        if not MASKED.fullmatch(m.group("uv")):
            yield Finding(*m.span("uv"), "BASIC_AUTH_CREDENTIALS", 1.0)
    for m in _AUTH_HEADER.finditer(text):
        start, end, value, _ = _value_span(m)
        header = m.group("key").lower().startswith("authorization")
        if (header or credible(value, "prose")) and not MASKED.fullmatch(value):
            yield Finding(start, end, "BEARER_TOKEN", 0.9)
    for m in _CLI_FLAG.finditer(text):
        start, end, value, quoted = _value_span(m)
        if credible(value, "quoted" if quoted else "assign"):
            yield Finding(start, end, kind_of_keyword(m.group("key")), 0.9)
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
        and not MASKED.fullmatch(value)
        and value.lower() not in NOT_SECRETS
        and not re.fullmatch(r"[A-Za-z]+|[a-z]+(?:[\-_][a-z]+)*|\d{1,12}", value)
        and not code_expression(value)
    )


def _free_text_findings(text: str) -> Iterator[Finding]:
    """curl -u, HTTP headers, webhook URLs and credentials in query strings."""
    for m in _CURL_USER.finditer(text):
        user, pw = m.group("user"), m.group("pw")
        if pw and not MASKED.fullmatch(pw) and pw.lower() not in NOT_SECRETS and len(pw) >= 3:
            yield Finding(*m.span("pw"), "PASSWORD", 0.9)
        elif not pw and len(user) >= 12 and mixed(user) and not MASKED.fullmatch(user):
            yield Finding(*m.span("user"), "API_KEY", 0.9)  # -u sk_live_...: (token as user)
    for m in _HEADER.finditer(text):
        start, end = m.span("uv")
        value = m.group("uv")
        while value and value[-1] in TRAILING:
            value, end = value[:-1], end - 1
        if _token_like(value) and not re.search(r"[:/]{2}", value):
            yield Finding(start, end, "BEARER_TOKEN", 0.9)
    for m in _WEBHOOK.finditer(text):
        start, end = m.span()
        while end > start and text[end - 1] in TRAILING:
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
        while value and value[-1] in TRAILING:
            value = value[:-1]
        if len(value) < 16 or NOT_A_VALUE.fullmatch(value) or not mixed(value):
            continue
        if code_expression(value, text[start + len(value) : start + len(value) + 1]):
            continue
        if entropy(value) < 3.0:
            continue
        kind = credential_context(context_before(text, start))
        if kind:
            yield Finding(start, start + len(value), kind, 0.8)


def _catalogue_findings(text: str) -> Iterator[Finding]:
    """The catalogues' vendor formats (`screening.finders.credential_rules`), typed by the rule's vendor.

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
    while start < end and text[start] in QUOTES:
        start += 1
    while end > start and text[end - 1] in QUOTES:
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
        for f in (*_catalogue_findings(text), *plugin_findings(text), *_rule_findings(text))
        if f.end > f.start and not _placeholder_password(text, f)
    }
    values = {text[f.start : f.end]: f for f in sorted(found, key=lambda f: -f.score)}
    for value, f in values.items():
        if len(value) >= _MIN_PROPAGATED:
            for i in finds(text, value):
                found.add(Finding(i, i + len(value), f.entity, f.score))
    return sorted(found)
