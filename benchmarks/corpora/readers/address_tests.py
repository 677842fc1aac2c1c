"""Readers of address parsers' and detectors' own test cases (pyap, libpostal, pelias): the
input as the text, its street part as the STREET_ADDRESS value."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

from benchmarks.corpora.readers.records import record

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
