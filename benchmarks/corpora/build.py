"""Rebuild the external evaluation corpora (benchmarks/corpora/*.jsonl) from their sources.

    python benchmarks/corpora/build.py \\
        [--presidio-tests DIR] [--noseyparker-rules DIR] [--usaddress-xml FILE] [--wnut FILE] \\
        [--validatorjs-tests FILE] [--libpostal-tests FILE] [--usaddress-us50 FILE] \\
        [--pyap-tests DIR] [--opencage-tests DIR] [--pelias-tests DIR] \\
        [--usaddress-training DIR] [--out DIR]

Each corpus whose input is given is rebuilt (libphonenumber's always: it reads the installed
package); SOURCES.md has the full command.

Every corpus is labelled personal data or credentials written by others (SOURCES.md says where
from, at which commit, under which licence). Each line of a corpus is one record a user could
ingest, in one common format:

    {"id", "source", "split", "text", "spans": [{"type", "value", "start", "end", "label"?}],
     "clean", "question"?, "answers"?}

`spans` are the source's labels turned into character offsets of `text`, typed as one of
`measure.TYPES`; `clean` is true when the source says the record holds none of them (a negative
example); `split` is `dev` or `test` by a hash of the id (`measure.split_of`): tune on dev only.
A deterministic third of the labelled records is also shaped as an extractive-QA record
(`question` asks for the first labelled value, `answers` is that value at its offset), so the
benchmark can check that every kept answer still sits at its `answer_start`.

The inputs are the files of the fetched sources (the sources' own repositories at the commits
SOURCES.md names); phone numbers come from the `phonenumbers` package (libphonenumber's
metadata) installed with Presidio. Nothing here is downloaded.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import re
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import regex
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.corpora.measure import QUESTION_LABELS, load, split_of

HERE = Path(__file__).resolve().parent


def record(
    source: str,
    n: int,
    text: str,
    spans: list[dict[str, Any]],
    split: str | None = None,
) -> dict[str, Any]:
    """One corpus record; spans sorted and checked against the text; its split by the id's hash
    unless given (a dev-only corpus)."""
    rid = f"{source}-{n:04d}"
    spans = sorted(spans, key=lambda s: (s["start"], s["end"]))
    for s in spans:
        assert text[s["start"] : s["end"]] == s["value"], (rid, s)
    out: dict[str, Any] = {
        "id": rid,
        "source": source,
        "split": split or split_of(rid),
        "text": text,
        "spans": spans,
        "clean": not spans,
    }
    if spans and _hash(rid, "qa") % 3 == 0:  # a third also as an extractive-QA record
        first = spans[0]
        out["question"] = f"What is the {QUESTION_LABELS[first['type']]}?"
        out["answers"] = {"text": [first["value"]], "answer_start": [first["start"]]}
    return out


def _hash(*parts: str) -> int:
    return int.from_bytes(hashlib.sha256("/".join(parts).encode()).digest()[:8], "big")


def sample(items: list[Any], n: int, salt: str) -> list[Any]:
    """At most `n` items, chosen by a hash of their position (stable across rebuilds)."""
    if len(items) <= n:
        return items
    order = sorted(range(len(items)), key=lambda i: _hash(salt, str(i)))
    return [items[i] for i in sorted(order[:n])]


# --- microsoft/presidio: the parametrized cases of its recognizers' unit tests ---------------

PRESIDIO_FILES = {
    "test_credit_card_recognizer.py": "CREDIT_CARD",
    "test_email_recognizer.py": "EMAIL_ADDRESS",
    "test_iban_recognizer.py": "IBAN_CODE",
    "test_ip_recognizer.py": "IP_ADDRESS",
    "test_phone_recognizer.py": "PHONE_NUMBER",
    "test_us_ssn_recognizer.py": "US_SSN",
    "test_spacy_recognizer.py": "PERSON",  # its cases with entity_num 0 (1 is DATE_TIME)
}


def presidio_cases(folder: Path) -> list[dict[str, Any]]:
    """Each parametrized case `(text, expected_len, expected_positions, ...)` of the tests: the
    positions label the values; a case expecting nothing is a clean record. A match the test itself
    scores below 0.5 at most (Presidio's "very weak" / "weak" matches, e.g. a bare 9-digit number
    as an SSN, `::` as an IPv6 address) is not labelled, and a case of only such matches is left
    out: the source does not call them personal data."""
    out: list[dict[str, Any]] = []
    for name, entity in PRESIDIO_FILES.items():
        tree = ast.parse((folder / name).read_text())
        for node in ast.walk(tree):
            if not (
                isinstance(node, ast.Call)
                and getattr(node.func, "attr", None) == "parametrize"
                and isinstance(node.args[0], ast.Constant)
            ):
                continue
            fields = [f.strip() for f in node.args[0].value.split(",")]
            text_at = fields.index("iban" if "iban" in fields else "text")
            pos_at = fields.index(
                "expected_res" if "expected_res" in fields else "expected_positions"
            )
            for case in node.args[1].elts:
                values = [_literal(e) for e in case.elts]
                text, expected = values[text_at], values[fields.index("expected_len")]
                positions = values[pos_at]
                if not isinstance(text, str) or positions is None:
                    continue
                if "entity_num" in fields and values[fields.index("entity_num")] != 0:
                    expected, positions = 0, ()  # a DATE_TIME case: no personal data
                if expected and len(positions) != expected:
                    continue  # counted but not placed: no span to measure
                ranges = (
                    values[fields.index("expected_score_ranges")]
                    if "expected_score_ranges" in fields
                    else [(0, "max")] * len(positions)
                )
                spans = [
                    {"type": entity, "value": text[a:b], "start": a, "end": b}
                    for (a, b), (_, hi) in zip(positions, ranges, strict=True)
                    if hi == "max" or hi >= 0.5
                ]
                if len(spans) < len(positions) and not spans:
                    continue  # only weak matches: neither labelled nor clean
                out.append(record("presidio-tests", len(out), text, spans))
    return out


def _literal(node: ast.expr) -> Any:
    """A literal; an `update_iban_checksum("...")` call evaluated (the test's own helper: the
    IBAN with its check digits set by ISO 13616's mod-97); anything else None."""
    if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "update_iban_checksum":
        return _iban_with_checksum(ast.literal_eval(node.args[0]))
    try:
        return ast.literal_eval(node)
    except ValueError:
        return None


def _iban_with_checksum(iban: str) -> str:
    compact = iban.replace(" ", "").upper()
    digits = "".join(str(int(c, 36)) for c in compact[4:] + compact[:2] + "00")
    return iban[:2] + f"{98 - int(digits) % 97:02d}" + iban[4:]


# --- validatorjs/validator.js: the valid values of its isCreditCard, isEmail, isIBAN tests ----

VALIDATORS = {"isCreditCard": "CREDIT_CARD", "isEmail": "EMAIL_ADDRESS", "isIBAN": "IBAN_CODE"}
_JS_TEST = re.compile(
    r"validator: '(isCreditCard|isEmail|isIBAN)',\n((?:\s+args: [^\n]*\n)?)\s+valid: \[(.*?)\n\s+\],",
    re.S,
)
_JS_STRING = re.compile(r"^\s*'((?:[^'\\]|\\.)*)',?\s*$", re.M)


def validatorjs_values(path: Path, phones: int) -> list[dict[str, Any]]:
    """Every value a `valid:` list of the tests holds as a plain string literal, each one record
    as a user's field holds it (alone): card numbers of every network and length (with the
    tests' `provider` options too), e-mail addresses (default options only: other options accept
    display names or hosts without a domain) and IBANs; and `phones` of its mobile numbers."""
    values: dict[str, str] = {}
    for m in _JS_TEST.finditer(path.read_text()):
        validator, args, body = m.groups()
        if args.strip() and validator == "isEmail":
            continue
        for literal in _JS_STRING.findall(body):
            value = re.sub(r"\\(.)", r"\1", literal)
            values.setdefault(value, VALIDATORS[validator])
    out = [
        record(
            "validatorjs", i, value, [{"type": t, "value": value, "start": 0, "end": len(value)}]
        )
        for i, (value, t) in enumerate(values.items())
    ]
    return out + _mobile_phones(path.read_text(), len(out), phones)


_MOBILE_TEST = re.compile(r"it\('should validate mobile phone number'.*?fixtures\.forEach", re.S)
_LOCALE = re.compile(r"locale: '([\w-]+)',\n\s+valid: \[(.*?)\n\s+\],", re.S)


def _mobile_phones(source: str, first: int, n: int) -> list[dict[str, Any]]:
    """`n` of the valid numbers of the isMobilePhone fixtures (one list per locale), sampled by
    hash, each after `Mobile: ` (the frame is ours: a number alone is no phone to anyone)."""
    block = _MOBILE_TEST.search(source)
    assert block is not None, "isMobilePhone fixtures not found"
    numbers = list(
        dict.fromkeys(
            re.sub(r"\\(.)", r"\1", literal)
            for _, body in _LOCALE.findall(block.group(0))
            for literal in _JS_STRING.findall(body)
        )
    )
    out = []
    for i, number in enumerate(sample(numbers, n, "mobiles")):
        span = {"type": "PHONE_NUMBER", "value": number, "start": 8, "end": 8 + len(number)}
        out.append(record("validatorjs", first + i, f"Mobile: {number}", [span]))
    return out


# --- praetorian-inc/noseyparker: the examples of its credential rules ------------------------


def noseyparker_examples(folder: Path) -> list[dict[str, Any]]:
    """Each rule's `examples`: a credential, the value its last capture group, found by the
    rule's own pattern. Rules of identifiers only (bucket names, account and client ids) are
    left out, and so are the `negative_examples`: they say a rule must not match, not that the
    text holds no credential (many hold one in another form)."""
    out: list[dict[str, Any]] = []
    for path in sorted(folder.glob("*.yml")):
        for rule in yaml.safe_load(path.read_text())["rules"]:
            categories = set(rule.get("categories") or [])
            if "identifier" in categories and "secret" not in categories:
                continue
            pattern = _rust_to_python(rule["pattern"])
            try:
                compiled = regex.compile(pattern)
            except regex.error:
                continue
            for example in rule.get("examples") or []:
                text = example.rstrip("\n")
                spans = []
                for m in compiled.finditer(text):
                    groups = [i for i in range(1, len(m.groups()) + 1) if m.group(i)]
                    if groups:
                        g = groups[-1]
                        spans.append(
                            {
                                "type": "CREDENTIAL",
                                "value": m.group(g),
                                "start": m.start(g),
                                "end": m.end(g),
                                "label": rule["name"],
                            }
                        )
                if spans:
                    out.append(record("noseyparker", len(out), text, _disjoint(spans)))
    return out


def _rust_to_python(pattern: str) -> str:
    return pattern.replace(r"\z", r"\Z")


def _disjoint(spans: list[dict[str, Any]]) -> list[dict[str, Any]]:
    kept: list[dict[str, Any]] = []
    for s in sorted(spans, key=lambda s: (s["start"], -s["end"])):
        if not kept or s["start"] >= kept[-1]["end"]:
            kept.append(s)
    return kept


# --- datamade/usaddress: its hand-labelled training addresses --------------------------------

STREET_TAGS = ("AddressNumber", "StreetName", "Occupancy", "USPSBox", "Subaddress", "Building")


def usaddress_lines(
    path: Path, n: int, source: str = "usaddress", exclude: frozenset[str] = frozenset()
) -> list[dict[str, Any]]:
    """Each labelled address as one line; the street address is its run of street-level tokens
    (number, street, suite, PO box; not the city, state or ZIP), only where it has a number.
    Lines in `exclude` (another corpus's texts) are left out before sampling."""
    out: list[dict[str, Any]] = []
    nodes = [node for node in ET.parse(path).getroot() if _xml_line(node) not in exclude]
    if exclude:  # and each line once
        nodes = [
            node for i, node in enumerate(nodes) if _xml_line(node) not in map(_xml_line, nodes[:i])
        ]
    for node in sample(nodes, n, source):
        text, start, end, numbered = "", None, None, False
        for token in node:
            if text:
                text += " "
            value = (token.text or "").strip()
            if token.tag.startswith(STREET_TAGS):
                start = len(text) if start is None else start
                end = len(text) + len(value.rstrip(","))
                numbered |= token.tag in ("AddressNumber", "USPSBoxID")
            text += value
        if start is None or not numbered:
            continue
        span = {"type": "STREET_ADDRESS", "value": text[start:end], "start": start, "end": end}
        out.append(record(source, len(out), text, [span]))
    return out


def _xml_line(node: ET.Element) -> str:
    """A labelled address's tokens joined by spaces (the text `usaddress_lines` writes)."""
    return " ".join((token.text or "").strip() for token in node)


def usaddress_us50(path: Path, training: Path, n: int) -> list[dict[str, Any]]:
    """usaddress's other hand-labelled test file, `us50_test_tagged.xml` (business addresses of
    the 50 states), as `usaddress_lines` reads it; the lines its `training/labeled.xml` also
    holds (the `usaddress` corpus samples that file) are left out, so no line is in both."""
    seen = frozenset(_xml_line(node) for node in ET.parse(training).getroot())
    return usaddress_lines(path, n, "usaddress-us50", seen)


# usaddress's training files beside `labeled.xml`'s sample: messy US lines to tune on, no test half.
USADDRESS_TRAINING = (
    "labeled.xml",
    "us50_train_tagged.xml",
    "us50_messiest_manual_label.xml",
    "multi_word_state_addresses.xml",
)
ADDRESS_CORPORA = ("usaddress", "libpostal", "usaddress-us50", "pyap", "opencage", "pelias")


def usaddress_training(folder: Path, n: int, corpora: Path) -> list[dict[str, Any]]:
    """Dev-only records (every `split` is `dev`) from usaddress's `training/` files: the lines
    of `labeled.xml` the `usaddress` corpus did not sample (its `n`), and every line of the
    other labelled files, each once, as written (the text between tags kept: `Road# 1,
    Kenai`), its street part as `usaddress_lines` takes it. Left out, so that nothing here is
    a test value: a line whose text (or street part), spaces and case aside, is a text or a
    labelled value of any record of the address corpora already written in `corpora`."""
    taken: set[str] = set()
    for name in ADDRESS_CORPORA:
        for r in load(name, None, corpora):
            taken.add(_plain(r["text"]))
            taken.update(_plain(s["value"]) for s in r["spans"])
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for name in USADDRESS_TRAINING:
        nodes = list(ET.parse(folder / name).getroot())
        if name == "labeled.xml":  # the usaddress corpus's sample of this file
            sampled = {id(node) for node in sample(nodes, n, "usaddress")}
            nodes = [node for node in nodes if id(node) not in sampled]
        for node in nodes:
            text, start, end, numbered = (node.text or "").lstrip(), None, None, False
            for token in node:
                value = (token.text or "").strip()
                at = len(text)
                text += value
                if token.tag.startswith(STREET_TAGS):
                    start = at if start is None else start
                    end = at + len(value.rstrip(","))
                    numbered |= token.tag in ("AddressNumber", "USPSBoxID")
                text += re.sub(r"\s+", " ", token.tail or "") if token is not node[-1] else ""
            text = text.strip()
            if start is None or not numbered or _plain(text) in seen:
                continue
            seen.add(_plain(text))
            value = text[start:end]
            if _plain(text) in taken or _plain(value) in taken:
                continue
            span = {"type": "STREET_ADDRESS", "value": value, "start": start, "end": end}
            out.append(record("usaddress-training", len(out), text, [span], split="dev"))
    return out


def _plain(text: str) -> str:
    """A text with its case, spaces and punctuation left out, for comparing lines."""
    return re.sub(r"[\W_]+", "", text.lower())


# --- vladimarius/pyap: the address detector's own tests (US, Canada, UK) ---------------------

PYAP_TESTS = ("test_parser_us.py", "test_parser_ca.py", "test_parser_gb.py")
# The tests' functions whose cases are whole streets or whole addresses.
PYAP_FUNCTIONS = (
    "test_full_street",
    "test_full_street_positive",
    "test_full_address",
    "test_full_address_positive",
)
_NUMBER_WORD = re.compile(
    r"\d|^(?:zero|one|two|three|four|five|six|seven|eight|nine|ten|twenty|thirty|forty|fifty|"
    r"sixty|seventy|eighty|ninety)\b",
    re.I,
)


def pyap_cases(folder: Path) -> list[dict[str, Any]]:
    """The parametrized cases `(input, expected)` of pyap's `full_street` and `full_address`
    tests: each input the test expects to match whole is a record whose value is all of it (a
    street with its units, or a whole address with its city, state or province, postcode),
    where it holds a house or box number (a digit, or a number word: `Two Hundred S. Alloy
    Drive`); each input it expects not to match is a clean record (`3 STRUCTURE WITH PE`),
    but for one that holds an address after other words (`44 sq. ft. 000 Columbia Ave. ...,
    Newfield, NJ 08344`: the test says only that the whole is no address). Trailing spaces and
    commas are dropped; an input in several files is one record."""
    values: dict[str, bool] = {}
    for name in PYAP_TESTS:
        tree = ast.parse((folder / name).read_text())
        for node in tree.body:
            if not (isinstance(node, ast.FunctionDef) and node.name in PYAP_FUNCTIONS):
                continue
            for decorator in node.decorator_list:
                if getattr(decorator.func, "attr", None) != "parametrize":
                    continue
                for case in decorator.args[1].elts:
                    text, expected = (ast.literal_eval(e) for e in case.elts)
                    values.setdefault(text.strip().rstrip(",").strip(), expected)
    out: list[dict[str, Any]] = []
    for text, expected in values.items():
        if expected and _NUMBER_WORD.search(text):
            span = {"type": "STREET_ADDRESS", "value": text, "start": 0, "end": len(text)}
            out.append(record("pyap", len(out), text, [span]))
        elif not expected and not re.search(r"\b[A-Z]{2} \d{5}\b", text):
            out.append(record("pyap", len(out), text, []))
    return out


# --- openvenues/libpostal: the address parser's test cases (many countries) ------------------

# The components of an address's street part: what is personal (a house, its unit, a box).
LIBPOSTAL_STREET = ("house_number", "road", "unit", "level", "staircase", "entrance", "po_box")
# Countries of the test functions kept: Latin-script addresses (not CN, JP, KR, RU).
LIBPOSTAL_COUNTRIES = [
    "us",
    "ca",
    "jm",
    "gb",
    "im",
    "nz",
    "fr",
    "es",
    "co",
    "mx",
    "br",
    "my",
    "za",
    "de",
    "at",
    "nl",
    "da",
    "fi",
    "no",
    "se",
    "hu",
    "ro",
]
_C_CASE = re.compile(
    r'test_parse_result_equals\(\s*(?:(?://[^\n]*\n|/\*.*?\*/)\s*)*"((?:[^"\\]|\\.)*)"'
    r"\s*,\s*options\s*,\s*\d+\s*,(.*?)\)\s*\);",
    re.S,
)
_C_COMPONENT = re.compile(r'\{"(\w+)",\s*"((?:[^"\\]|\\.)*)"\}')


def libpostal_cases(path: Path) -> list[dict[str, Any]]:
    """Each case of `test/test_parser.c` of the kept countries with a house number or a PO box:
    the input as the text, the street part (from its first to its last street component, found
    in the input in order, case-insensitively) as the value. Cases whose components cannot be
    found in the input as written (libpostal's normalised forms) are left out."""
    source = path.read_text()
    tests = [
        (m.start(), m.group(1)) for m in re.finditer(r"^TEST test_(\w\w)_parses", source, re.M)
    ]
    out: list[dict[str, Any]] = []
    for m in _C_CASE.finditer(source):
        country = [c for at, c in tests if at < m.start()][-1]
        if country not in LIBPOSTAL_COUNTRIES:
            continue
        text = m.group(1).encode().decode("unicode_escape").encode("latin-1").decode()
        components = _C_COMPONENT.findall(m.group(2))
        labels = [label for label, _ in components]
        if not {"house_number", "po_box"} & set(labels):
            continue
        span = street_span(text, components, LIBPOSTAL_STREET)
        if span is not None:
            out.append(record("libpostal", len(out), text, [span]))
    return out


def street_span(
    text: str, components: list[tuple[str, str]], street_labels: tuple[str, ...]
) -> dict[str, Any] | None:
    """The STREET_ADDRESS span of a parser's test case: from the first to the last of its
    components labelled one of `street_labels`, each component found in `text` after the one
    before it, case-insensitively; None when one is not found in order."""
    lower, at, start, end = text.lower(), 0, None, None
    for label, value in components:
        found = lower.find(value.lower(), at)
        if found < 0:
            return None
        at = found + len(value)
        if label in street_labels:
            start = found if start is None else start
            end = at
    if start is None or end is None:
        return None
    return {"type": "STREET_ADDRESS", "value": text[start:end], "start": start, "end": end}


# --- pelias/parser: the address parser's test cases (geocoder queries, 18 countries) ----------

PELIAS_STREET = ("housenumber", "street", "unit", "unit_type")
_JS_ASSERT = re.compile(r"\bassert\(\s*'((?:[^'\\]|\\.)*)'\s*,")
_JS_COMPONENT = re.compile(r"\{\s*(\w+):\s*'((?:[^'\\]|\\.)*)'\s*\}")


def pelias_cases(folder: Path) -> list[dict[str, Any]]:
    """Each `assert(input, expected)` of `test/address.*.test.js` and `test/addressit.*.test.js`
    with a house number: the input as the text, its street part as the value (from the first to
    the last of its housenumber, street, unit and unit_type components, found in the input in
    order, case-insensitively; the first solution where the test lists several). Cases whose
    components cannot be found in the input in order are left out; an input in several files is
    one record."""
    cases: dict[str, list[tuple[str, str]]] = {}
    for path in sorted(folder.glob("address*.test.js")):
        source = path.read_text()
        for m in _JS_ASSERT.finditer(source):
            depth, at = 0, m.end()
            while at < len(source):  # the expected list: up to its closing bracket
                depth += {"[": 1, "]": -1}.get(source[at], 0)
                at += 1
                if depth == 0 and source[at - 1] == "]":
                    break
            body = source[m.end() : at]
            if body.lstrip().startswith("[") and body.lstrip()[1:].lstrip().startswith("["):
                body = body[: body.index("]") + 1]  # the first of several solutions
            text = re.sub(r"\\(.)", r"\1", m.group(1))
            components = [(k, re.sub(r"\\(.)", r"\1", v)) for k, v in _JS_COMPONENT.findall(body)]
            cases.setdefault(text, components)
    out: list[dict[str, Any]] = []
    for text, components in cases.items():
        if "housenumber" not in {k for k, _ in components}:
            continue
        span = street_span(text, components, PELIAS_STREET)
        if span is not None:
            out.append(record("pelias", len(out), text, [span]))
    return out


# --- OpenCageData/address-formatting: the expected addresses of its formatter's test cases ---

# Countries and territories whose cases are kept: Europe, its overseas parts, Australia and New
# Zealand, none of the 16 countries whose cases the dev set addresses_phones_cards_dev.jsonl holds.
OPENCAGE_COUNTRIES = [
    "ad",
    "al",
    "ba",
    "bg",
    "cy",
    "cz",
    "ee",
    "fi",
    "fo",
    "gi",
    "gr",
    "hr",
    "hu",
    "im",
    "is",
    "je",
    "gg",
    "li",
    "lt",
    "lu",
    "lv",
    "mc",
    "md",
    "me",
    "mk",
    "mt",
    "no",
    "ro",
    "rs",
    "si",
    "sk",
    "sm",
    "ua",
    "va",
    "xk",
    "gl",
    "ax",
    "bl",
    "re",
    "gf",
    "gp",
    "mq",
    "yt",
    "mf",
    "au",
    "nz",
]


@dataclass(frozen=True)
class FormattedCase:
    """A test case of OpenCage's address formatter that has a house number."""

    components: dict[str, Any]
    expected: str  # the expected address as the case writes it
    lines: list[str]  # the expected address, a line each (stripped, empty ones dropped)
    number: str  # the house number

    def house_lines(self) -> list[int]:
        """The lines that hold the house number as a word of its own."""
        word = re.compile(rf"(?<!\w){re.escape(self.number)}(?!\w)")
        return [i for i, line in enumerate(self.lines) if word.search(line)]


def formatted_cases(source: str) -> list[FormattedCase]:
    """The cases of one `testcases/countries/<cc>.yaml` (its text) with a house number
    (`house_number` or `housenumber`) and an expected address (`\\uXXXX` escapes read): what
    `opencage_cases` here and the dev set's `make_addresses_phones_cards.py` both read."""
    out = []
    for case in yaml.safe_load_all(source):
        parts = (case or {}).get("components") or {}
        number = str(parts.get("house_number", parts.get("housenumber", "")))
        expected = re.sub(
            r"\\u([0-9a-fA-F]{4})",
            lambda m: chr(int(m.group(1), 16)),
            (case and case["expected"]) or "",
        )
        if number and expected:
            lines = [line.strip() for line in expected.strip().splitlines() if line.strip()]
            out.append(FormattedCase(parts, expected, lines, number))
    return out


def opencage_cases(folder: Path) -> list[dict[str, Any]]:
    """Each test case of `testcases/countries/<cc>.yaml` (of `OPENCAGE_COUNTRIES`) with a house
    number and an address in Latin script: its `expected` address (OpenCage's formatting of
    OpenStreetMap's components, the name of the place first where it has one, the country
    last) as the text, on its lines or, for half of them by hash, joined by commas; the value
    the line that holds the house number (with the road where the case has one), without a
    final full stop."""
    out: list[dict[str, Any]] = []
    for country in OPENCAGE_COUNTRIES:
        path = folder / f"{country}.yaml"
        if not path.exists():
            continue
        for case in formatted_cases(path.read_text()):
            lines = case.lines
            if re.search(r"[\u0370-\u1fff]", case.expected):
                continue
            road = str(case.components.get("road", ""))
            street = [lines[i] for i in case.house_lines() if road in lines[i]]
            if not street:
                continue
            joined = ", " if _hash("opencage", case.expected) % 2 else "\n"
            text = joined.join(lines)
            value = street[0].rstrip(".,")
            start = text.index(value)
            span = {
                "type": "STREET_ADDRESS",
                "value": value,
                "start": start,
                "end": start + len(value),
            }
            out.append(record("opencage", len(out), text, [span]))
    return out


# --- WNUT-17 Emerging Entities: person names in tweets, Reddit, YouTube, StackOverflow -------

_NO_SPACE_BEFORE = {",", ".", "!", "?", ":", ";", ")", "%", "'s", "n't", "'m", "'re", "'ll"}
_NO_SPACE_AFTER = {"@", "#"}


def wnut_sentences(path: Path, with_person: int, without: int) -> list[dict[str, Any]]:
    """Sentences with a `person` entity (each one a PERSON span) and, as clean records,
    sentences without one; tokens joined by spaces (none before closing punctuation, none after
    the `@` of a handle or the `#` of a hashtag: `@jellombooty` as it was written, not the
    tokenizer's `@ jellombooty`)."""
    sentences: list[list[tuple[str, str]]] = [[]]
    for line in path.read_text().splitlines():
        if not line.strip():
            sentences.append([])
        else:
            token, tag = line.rsplit("\t", 1)
            sentences[-1].append((token, tag))
    named, plain = [], []
    for tokens in filter(None, sentences):
        text, spans = "", []
        previous = ""
        for token, tag in tokens:
            if text and token not in _NO_SPACE_BEFORE and previous not in _NO_SPACE_AFTER:
                text += " "
            previous = token
            start = len(text)
            text += token
            if tag == "B-person":
                spans.append({"type": "PERSON", "value": token, "start": start, "end": len(text)})
            elif tag == "I-person" and spans:
                spans[-1]["end"] = len(text)
                spans[-1]["value"] = text[spans[-1]["start"] : len(text)]
        (named if spans else plain).append((text, spans))
    chosen = sample(named, with_person, "wnut+") + sample(plain, without, "wnut-")
    return [record("wnut17", i, text, spans) for i, (text, spans) in enumerate(chosen)]


# --- libphonenumber: its example number of every region, as it formats them -------------------

PHONE_FRAMES = ("Phone: {national}", "{e164}", "Call me on {international}", "tel. {national}")


def phone_examples(n: int) -> list[dict[str, Any]]:
    """libphonenumber's example mobile and fixed-line number of every region it knows, in its
    national, international or E.164 format, each after a phone context word or alone (E.164)."""
    import phonenumbers
    from phonenumbers import PhoneNumberFormat as F
    from phonenumbers import PhoneNumberType as T

    items = []
    for region in sorted(phonenumbers.SUPPORTED_REGIONS):
        for kind in (T.MOBILE, T.FIXED_LINE):
            number = phonenumbers.example_number_for_type(region, kind)
            if number is not None:
                items.append(number)
    out = []
    for i, number in enumerate(sample(items, n, "phones")):
        formats = {
            "national": phonenumbers.format_number(number, F.NATIONAL),
            "international": phonenumbers.format_number(number, F.INTERNATIONAL),
            "e164": phonenumbers.format_number(number, F.E164),
        }
        frame = PHONE_FRAMES[i % len(PHONE_FRAMES)]
        key = re.search(r"\{(\w+)\}", frame).group(1)
        start = frame.index("{")
        text = frame.format(**formats)
        value = formats[key]
        span = {"type": "PHONE_NUMBER", "value": value, "start": start, "end": start + len(value)}
        out.append(record("libphonenumber", i, text, [span]))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--presidio-tests", type=Path)
    parser.add_argument("--noseyparker-rules", type=Path)
    parser.add_argument("--usaddress-xml", type=Path, help="training/labeled.xml")
    parser.add_argument("--wnut", type=Path)
    parser.add_argument("--validatorjs-tests", type=Path)
    parser.add_argument("--libpostal-tests", type=Path, help="test/test_parser.c")
    parser.add_argument(
        "--usaddress-us50", type=Path, help="measure_performance/test_data/us50_test_tagged.xml"
    )
    parser.add_argument("--pyap-tests", type=Path, help="a pyap checkout (its test_parser_*.py)")
    parser.add_argument("--pelias-tests", type=Path, help="pelias/parser's test folder")
    parser.add_argument(
        "--opencage-tests", type=Path, help="address-formatting's testcases/countries"
    )
    parser.add_argument(
        "--usaddress-training",
        type=Path,
        help="usaddress's training/ folder (a dev-only corpus; needs the address corpora in --out)",
    )
    parser.add_argument("--out", type=Path, default=HERE)
    parser.add_argument("--n", type=int, default=300, help="records per sampled source")
    args = parser.parse_args()
    builders = {  # corpus: (its input, how it is built); only corpora whose input is given
        "presidio-tests": (args.presidio_tests, presidio_cases),
        "noseyparker": (args.noseyparker_rules, noseyparker_examples),
        "usaddress": (args.usaddress_xml, lambda p: usaddress_lines(p, args.n)),
        "wnut17": (args.wnut, lambda p: wnut_sentences(p, args.n, args.n // 2)),
        "libphonenumber": (True, lambda _: phone_examples(args.n)),
        "validatorjs": (args.validatorjs_tests, lambda p: validatorjs_values(p, args.n // 2)),
        "libpostal": (args.libpostal_tests, libpostal_cases),
        "usaddress-us50": (
            args.usaddress_us50 and args.usaddress_xml,
            lambda _: usaddress_us50(args.usaddress_us50, args.usaddress_xml, args.n),
        ),
        "pyap": (args.pyap_tests, pyap_cases),
        "opencage": (args.opencage_tests, opencage_cases),
        "pelias": (args.pelias_tests, pelias_cases),
        "usaddress-training": (
            args.usaddress_training,
            lambda p: usaddress_training(p, args.n, args.out),
        ),
    }
    for name, (source, build) in builders.items():
        if not source:
            continue
        records = build(source)
        path = args.out / f"{name}.jsonl"
        with path.open("w") as f:
            for r in records:
                f.write(json.dumps(r, ensure_ascii=False) + "\n")
        spans = sum(len(r["spans"]) for r in records)
        clean = sum(r["clean"] for r in records)
        print(f"{path}: {len(records)} records, {spans} values, {clean} clean")


if __name__ == "__main__":
    main()
