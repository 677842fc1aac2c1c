"""Vendor credential formats from maintained catalogues: gitleaks' and Titus' rules, read as data.

`screening/data/gitleaks.toml` is gitleaks' generated default config (MIT, version and commit in
its header; `screening/data/build/update_gitleaks.py` refreshes it): ~220 rules, each a Go RE2 regex,
the keywords that must occur before the regex is worth running, a minimum Shannon entropy for
the secret, the capture group that holds the secret, and allowlists (regexes on the secret, the
whole match or the line; stopwords). `Catalogue` reads it once per process, translates every
regex to Python `re` (inline flags in mid-pattern, `\\z`, POSIX classes; ASCII `\\w`, `\\b` as in
Go), and runs on a text only the rules one of whose keywords occurs in it (one lower-casing and
one pass of a regex holding every keyword as a trie), then applies entropy and allowlists as
gitleaks does.

Rules that need a file path (gitleaks runs them on files named like `*.p12` or `NuGet.config`
only) have none here: they are left out, each with its reason in `Catalogue.skipped`.
A regex that does not translate is an error when the catalogue loads, never a silent skip.

`screening/data/titus.json` is the second catalogue: the rules of Titus (praetorian-inc/titus,
Apache-2.0; the successor of Nosey Parker, with Nosey Parker's and Kingfisher's rules), converted
from their Rust dialect to Python `re` by `screening/data/build/update_titus.py`, which also derives
each rule's keywords (literals every match holds; Titus has none) and checks every kept rule on
its own examples; the rules it leaves out are listed with their reasons in the file. Its rules
join gitleaks' in the same keyword prefilter; a finding is their secret group (`token` when
named, else the last group named as a secret, else from the first group that matched to the
last: `user:password@host`), kept when it passes the rule's minimum entropy and
character requirements (`min_digits`, `min_uppercase`, `ignore_if_contains`...).
"""

from __future__ import annotations

import json
import math
import re
import tomllib
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from screening.finders.go_regex import UntranslatableRegex, go_to_python

CATALOGUE_PATH = Path(__file__).resolve().parents[1] / "data" / "gitleaks.toml"
TITUS_PATH = Path(__file__).resolve().parents[1] / "data" / "titus.json"

# gitleaks rule id (prefix) -> the screen's entity type; any other rule: VENDOR_SECRET.
_ENTITY_BY_PREFIX: tuple[tuple[str, str], ...] = (
    ("aws-access-token", "AWS_ACCESS_KEY"),
    ("github-", "GITHUB_TOKEN"),
    ("gitlab-", "GITLAB_TOKEN"),
    ("slack-webhook-url", "WEBHOOK_URL"),
    ("microsoft-teams-webhook", "WEBHOOK_URL"),
    ("slack-", "SLACK_TOKEN"),
    ("stripe-", "STRIPE_KEY"),
    ("twilio-", "TWILIO_KEY"),
    ("sendgrid-", "SENDGRID_KEY"),
    ("openai-", "OPENAI_KEY"),
    ("npm-", "NPM_TOKEN"),
    ("pypi-", "PYPI_TOKEN"),
    ("discord-", "DISCORD_TOKEN"),
    ("telegram-", "TELEGRAM_TOKEN"),
    ("mailchimp-", "MAILCHIMP_KEY"),
    ("square-", "SQUARE_OAUTH_SECRET"),
    ("artifactory-", "ARTIFACTORY_TOKEN"),
    ("jfrog-", "ARTIFACTORY_TOKEN"),
    ("private-key", "PRIVATE_KEY"),
    ("jwt", "JWT"),
    ("curl-auth-header", "BEARER_TOKEN"),
    ("curl-auth-user", "BASIC_AUTH_CREDENTIALS"),
    ("generic-api-key", "API_KEY"),
)
VENDOR_ENTITY = "VENDOR_SECRET"
# Rules whose capture groups are repeated pieces of a URL, not the secret: the whole match is.
_WHOLE_MATCH = frozenset({"microsoft-teams-webhook"})
# Scores: a vendor format is near-certain; gitleaks' generic rule (a credential word, an
# operator and an entropic value) less so.
_SCORE = {"generic-api-key": 0.8}
_DEFAULT_SCORE = 0.9


def entity_of(rule_id: str) -> str:
    for prefix, entity in _ENTITY_BY_PREFIX:
        if rule_id.startswith(prefix):
            return entity
    return VENDOR_ENTITY


# Titus rules are typed by their name (`AWS Secret Access Key`, `Password Hash (bcrypt)`).
_ENTITY_BY_NAME: tuple[tuple[str, str], ...] = (
    (r"(?i)webhook", "WEBHOOK_URL"),
    (r"(?i)private key|\bage identity", "PRIVATE_KEY"),
    (r"(?i)password|credentials in|username and", "PASSWORD"),
    (r"(?i)^aws secret|^aws session", "AWS_SECRET_KEY"),
    (r"(?i)^github", "GITHUB_TOKEN"),
    (r"(?i)^gitlab", "GITLAB_TOKEN"),
    (r"(?i)^slack", "SLACK_TOKEN"),
    (r"(?i)^stripe", "STRIPE_KEY"),
    (r"(?i)^openai", "OPENAI_KEY"),
    (r"(?i)^json web token \(", "JWT"),
    (r"(?i)^generic", "API_KEY"),
)


def entity_of_name(name: str) -> str:
    for pattern, entity in _ENTITY_BY_NAME:
        if re.search(pattern, name):
            return entity
    return VENDOR_ENTITY


# --- The catalogue ------------------------------------------------------------------------------
def shannon_entropy(value: str) -> float:
    """Bits per character over the value's own characters (gitleaks' `shannonEntropy`)."""
    if not value:
        return 0.0
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in Counter(value).values())


@dataclass(frozen=True)
class Allow:
    """One allowlist: a finding it matches is not reported."""

    target: str  # "secret", "match" or "line": what its regexes look at
    regex: re.Pattern[str] | None
    stopwords: tuple[str, ...]
    require_all: bool  # condition AND: every check it has must hold

    def allows(self, secret: str, match: str, line: str) -> bool:
        checks = []
        if self.regex is not None:
            target = {"match": match, "line": line}.get(self.target, secret)
            checks.append(self.regex.search(target) is not None)
        if self.stopwords:
            low = secret.lower()
            checks.append(any(w in low for w in self.stopwords))
        if not checks:
            return False
        return all(checks) if self.require_all else any(checks)


@dataclass(frozen=True)
class Rule:
    id: str
    entity: str
    score: float
    regex: re.Pattern[str]
    keywords: tuple[str, ...]
    entropy: float
    group: int | None  # None: the first non-empty group, else the whole match; 0: whole match
    allows: tuple[Allow, ...]
    widen_left: bool  # gitleaks' lazy identifier prefix was cut from the regex (below)
    cover_groups: bool = False  # group None: from the first group that matched to the last
    requirements: tuple[tuple[str, object], ...] = ()  # Titus' pattern_requirements

    def meets_requirements(self, secret: str) -> bool:
        """Titus' character requirements on the secret (Kingfisher's `pattern_requirements`)."""
        for name, value in self.requirements:
            if name == "ignore_if_contains":
                low = secret.lower()
                if any(str(w).lower() in low for w in value):  # type: ignore[attr-defined]
                    return False
                continue
            count = {
                "min_digits": sum(c.isdigit() for c in secret),
                "min_uppercase": sum(c.isupper() for c in secret),
                "min_lowercase": sum(c.islower() for c in secret),
                "min_special_chars": sum(not c.isalnum() for c in secret),
            }.get(name)
            if count is not None and count < int(value):  # type: ignore[call-overload]
                return False
        return True


@dataclass(frozen=True)
class CatalogueFinding:
    start: int
    end: int
    rule: Rule


# gitleaks prefixes some rules with `[\w.-]{0,50}?` so the reported match reaches back over the
# identifier around the keyword; a lazy prefix tried at every position is slow in Python `re`.
# The rule runs without it and the match is widened over those characters afterwards.
_LAZY_PREFIX = r"(?i)[\w.-]{0,50}?"
_PREFIX_CHARS = re.compile(r"[\w.-]", re.ASCII)


@dataclass(frozen=True)
class Catalogue:
    version: str
    rules: tuple[Rule, ...]
    skipped: dict[str, str]  # rule id -> why it cannot run on free text
    global_allow: tuple[Allow, ...]
    by_keyword: dict[str, tuple[int, ...]]  # lower-case keyword -> indices into rules
    unconditional: tuple[int, ...]  # rules with no keywords: run on every text
    # every keyword in one regex (a trie: one pass over the text); the longest keyword found at a
    # place -> the rules of it and of every keyword that is a prefix of it
    keyword_regex: re.Pattern[str]
    rules_at: dict[str, frozenset[int]]

    def rules_for(self, text: str) -> list[Rule]:
        """The rules whose keywords occur in `text` (gitleaks' prefilter), in catalogue order."""
        wanted = set(self.unconditional)
        for m in self.keyword_regex.finditer(text.lower()):
            wanted |= self.rules_at[m.group(1)]
        return [self.rules[i] for i in sorted(wanted)]

    def find(self, text: str) -> Iterator[CatalogueFinding]:
        for rule in self.rules_for(text):
            for m in rule.regex.finditer(text):
                start, end = _secret_span(m, rule.group, rule.cover_groups)
                if end <= start:
                    continue
                secret = text[start:end]
                if rule.entropy and shannon_entropy(secret) <= rule.entropy:
                    continue
                if rule.requirements and not rule.meets_requirements(secret):
                    continue
                match_start = m.start()
                if rule.widen_left:
                    while match_start > max(0, m.start() - 50) and _PREFIX_CHARS.match(
                        text, match_start - 1
                    ):
                        match_start -= 1
                whole = text[match_start : m.end()]
                line = text[text.rfind("\n", 0, start) + 1 : _line_end(text, end)]
                if any(a.allows(secret, whole, line) for a in (*self.global_allow, *rule.allows)):
                    continue
                yield CatalogueFinding(start, end, rule)


def _trie_regex(words: list[str]) -> re.Pattern[str]:
    """A regex finding, at every place, the longest of `words` that starts there."""
    trie: dict = {}
    for word in words:
        node = trie
        for ch in word:
            node = node.setdefault(ch, {})
        node[""] = {}

    def build(node: dict) -> str:
        branches = [re.escape(ch) + build(node[ch]) for ch in sorted(node) if ch]
        if not branches:
            return ""
        if "" in node:
            return "(?:" + "|".join(branches) + ")?"
        return branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"

    return re.compile("(?=(" + build(trie) + "))")


def _line_end(text: str, i: int) -> int:
    j = text.find("\n", i)
    return len(text) if j == -1 else j


def _secret_span(m: re.Match[str], group: int | None, cover: bool = False) -> tuple[int, int]:
    if group is not None:
        return m.span(group)
    if cover:
        spans = [m.span(g) for g in range(1, (m.re.groups or 0) + 1) if m.group(g)]
        if spans:
            return _trim(m.string, min(a for a, _ in spans), max(b for _, b in spans))
    for g in range(1, (m.re.groups or 0) + 1):
        if m.group(g):
            return _trim(m.string, *m.span(g))
    return _trim(m.string, *m.span(0))


def _trim(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start] in " \t\r\n\"'`":
        start += 1
    while end > start and text[end - 1] in " \t\r\n\"'`;":
        end -= 1
    return start, end


def _compile(pattern: str) -> re.Pattern[str]:
    return re.compile(go_to_python(pattern), re.ASCII)


def _allow(spec: dict) -> Allow | None:
    """An allowlist, or None when it checks nothing a text has (paths and commits only)."""
    regexes = spec.get("regexes", [])
    stopwords = tuple(w.lower() for w in spec.get("stopwords", []))
    require_all = spec.get("condition", "OR").upper() == "AND"
    if require_all and (spec.get("paths") or spec.get("commits")):
        return None  # a path check can never hold on a text: the whole AND never does
    if not regexes and not stopwords:
        return None
    regex = _compile("|".join(f"(?:{go_to_python(r)})" for r in regexes)) if regexes else None
    return Allow(spec.get("regexTarget", "secret"), regex, stopwords, require_all)


def _rule(spec: dict) -> Rule:
    pattern = spec["regex"]
    rule_id = spec["id"]
    widen_left = pattern.startswith(_LAZY_PREFIX)
    if widen_left:
        pattern = "(?i)" + pattern[len(_LAZY_PREFIX) :]
    regex = _compile(pattern)
    group = spec.get("secretGroup")
    if rule_id in _WHOLE_MATCH:
        group = 0
    allows = tuple(a for a in map(_allow, spec.get("allowlists", [])) if a is not None)
    return Rule(
        id=rule_id,
        entity=entity_of(rule_id),
        score=_SCORE.get(rule_id, _DEFAULT_SCORE),
        regex=regex,
        keywords=tuple(k.lower() for k in spec.get("keywords", [])),
        entropy=float(spec.get("entropy", 0.0)),
        group=group,
        allows=allows,
        widen_left=widen_left,
    )


def _version(path: Path) -> str:
    with path.open(encoding="utf-8") as f:
        for line in f:
            m = re.match(r"# source: (gitleaks \S+ commit [0-9a-f]{40})", line)
            if m:
                return m.group(1)
    return "unknown"


def _titus_rule(spec: dict) -> Rule:
    """A rule of `titus.json` (already in Python syntax: update_titus.py converted it)."""
    fuzzy = "fuzzy" in spec["categories"] or "generic" in spec["categories"]
    return Rule(
        id=spec["id"],
        entity=entity_of_name(spec["name"]),
        score=0.8 if fuzzy else _DEFAULT_SCORE,
        regex=re.compile(spec["regex"], re.ASCII),
        keywords=tuple(spec["keywords"]),
        entropy=float(spec["entropy"]),
        group=spec["group"],
        allows=(),
        widen_left=False,
        cover_groups=True,
        requirements=tuple(sorted(spec["requirements"].items())),
    )


def load_titus(path: Path = TITUS_PATH) -> tuple[str, list[Rule], dict[str, str]]:
    """(version, rules, rule id -> why left out) of the Titus catalogue."""
    data = json.loads(path.read_text(encoding="utf-8"))
    rules = []
    for spec in data["rules"]:
        try:
            rules.append(_titus_rule(spec))
        except re.error as exc:
            raise UntranslatableRegex(f"Titus rule {spec['id']}: {exc}") from exc
    return data["source"], rules, dict(data["skipped"])


def load_catalogue(path: Path = CATALOGUE_PATH, titus: Path | None = TITUS_PATH) -> Catalogue:
    """Every rule of the catalogues (gitleaks', then Titus' unless `titus` is None), compiled;
    raises UntranslatableRegex on one that is not."""
    with path.open("rb") as f:
        data = tomllib.load(f)
    rules: list[Rule] = []
    skipped: dict[str, str] = {}
    for spec in data["rules"]:
        if "path" in spec:
            skipped[spec["id"]] = "needs a file path (gitleaks runs it on matching files only)"
            continue
        if "regex" not in spec:
            skipped[spec["id"]] = "no regex"
            continue
        try:
            rules.append(_rule(spec))
        except (re.error, UntranslatableRegex) as exc:
            raise UntranslatableRegex(f"gitleaks rule {spec['id']}: {exc}") from exc
    version = _version(path)
    if titus is not None:
        titus_version, titus_rules, titus_skipped = load_titus(titus)
        version += f" + {titus_version}"
        rules += titus_rules
        skipped.update(titus_skipped)
    top = data.get("allowlist")
    tops = [top] if isinstance(top, dict) else []
    tops += data.get("allowlists", [])
    global_allow = tuple(a for a in map(_allow, tops) if a is not None)
    by_keyword: dict[str, list[int]] = {}
    for i, rule in enumerate(rules):
        for keyword in rule.keywords:
            by_keyword.setdefault(keyword, []).append(i)
    rules_at = {
        k: frozenset(i for p, indices in by_keyword.items() if k.startswith(p) for i in indices)
        for k in by_keyword
    }
    return Catalogue(
        version=version,
        rules=tuple(rules),
        skipped=skipped,
        global_allow=global_allow,
        by_keyword={k: tuple(v) for k, v in by_keyword.items()},
        unconditional=tuple(i for i, r in enumerate(rules) if not r.keywords),
        keyword_regex=_trie_regex(sorted(by_keyword)),
        rules_at=rules_at,
    )


@cache
def catalogue() -> Catalogue:
    """The vendored catalogues, loaded once per process."""
    return load_catalogue()
