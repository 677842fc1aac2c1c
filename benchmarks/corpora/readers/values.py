"""Readers of the value corpora: the test cases of Presidio's recognizers, validator.js's valid
values, Nosey Parker's credential rule examples, libphonenumber's example numbers and the valid
numbers of AfterShip's `phone` tests."""

from __future__ import annotations

import ast
import csv
import re
from pathlib import Path
from typing import Any

import regex
import yaml

from benchmarks.corpora.readers.records import record, sample

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


def mobile_numbers(source: str) -> list[str]:
    """Every valid number of the isMobilePhone fixtures (one list per locale), once, in order."""
    block = _MOBILE_TEST.search(source)
    assert block is not None, "isMobilePhone fixtures not found"
    return list(
        dict.fromkeys(
            re.sub(r"\\(.)", r"\1", literal)
            for _, body in _LOCALE.findall(block.group(0))
            for literal in _JS_STRING.findall(body)
        )
    )


def _mobile_phones(source: str, first: int, n: int) -> list[dict[str, Any]]:
    """`n` of the valid numbers of the isMobilePhone fixtures (one list per locale), sampled by
    hash, each after `Mobile: ` (the frame is ours: a number alone is no phone to anyone)."""
    out = []
    for i, number in enumerate(sample(mobile_numbers(source), n, "mobiles")):
        span = {"type": "PHONE_NUMBER", "value": number, "start": 8, "end": 8 + len(number)}
        out.append(record("validatorjs", first + i, f"Mobile: {number}", [span]))
    return out


# Frames with no phone word near the number (ours): a signature's last line, a form's field, a
# line of a list, a sentence. The two first are what `screening.finders.phones` reads as a field;
# in the sentence only the number's own shape speaks.
UNLABELLED_FRAMES = (
    "Best regards,\nThe front desk\n{}",
    "Details: {}, weekdays only",
    "Front desk, {}, Mon-Fri",
    "If anything changes, {} works until Friday.",
)


def validatorjs_unlabelled_phones(path: Path, labelled: int) -> list[dict[str, Any]]:
    """The isMobilePhone fixtures' valid numbers that `validatorjs.jsonl` leaves out (its
    `labelled` sampled ones), as each locale writes them, each in one of UNLABELLED_FRAMES in
    turn: numbers of 149 locales with no phone word."""
    numbers = mobile_numbers(path.read_text())
    taken = set(sample(numbers, labelled, "mobiles"))
    return _unlabelled("phones-unlabelled", [n for n in numbers if n not in taken])


def _unlabelled(source: str, numbers: list[str]) -> list[dict[str, Any]]:
    """One record per number, in UNLABELLED_FRAMES in turn."""
    out = []
    for i, number in enumerate(numbers):
        frame = UNLABELLED_FRAMES[i % len(UNLABELLED_FRAMES)]
        start = frame.index("{}")
        span = {"type": "PHONE_NUMBER", "value": number, "start": start, "end": start + len(number)}
        out.append(record(source, i, frame.format(number), [span]))
    return out


def aftership_phones(path: Path) -> list[dict[str, Any]]:
    """The numbers AfterShip's `phone` tests (`__tests__/data.csv`) expect to be valid, each once
    as its contributors typed it (`+1 (817) 569-8900`, `22-6569-8900`, `+852 6569-8900`), in one
    of UNLABELLED_FRAMES in turn: a second source of numbers with no phone word."""
    with path.open(newline="") as f:
        rows = list(csv.DictReader(f))
    numbers = {r["input_phone"].strip() for r in rows if r["output_is_valid"] == "true"} - {""}
    return _unlabelled("phones-aftership", sorted(numbers))


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
