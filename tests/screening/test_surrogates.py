"""surrogate: realistic fakes of the same type and shape, consistent per salt, records kept valid."""

from __future__ import annotations

import json
import re
import stat
from pathlib import Path

import pytest

from platforms.keys import key_id, secret_key
from platforms.store import Store
from screening.config import ScreenConfig
from screening.finders.ibans import iban_valid
from screening.policy import apply_policy
from screening.redact import Span
from screening.surrogates import Surrogates
from tasks.records import TaskType, check_answers_at_offsets
from tests.tasks.test_screen import _screen

SALT = b"0123456789abcdef0123456789abcdef"


def _luhn_ok(number: str) -> bool:
    digits = [int(d) for d in re.sub(r"\D", "", number)]
    total = 0
    for i, d in enumerate(reversed(digits)):
        n = d * 2 if i % 2 else d
        total += n - 9 if n > 9 else n
    return total % 10 == 0


@pytest.mark.parametrize(
    ("entity", "value", "shape"),
    [
        ("PERSON", "Maria Gonzalez", r"[^\W\d_][^\s]* [^\W\d_][^\s]*"),
        ("PERSON", "LIAM O'BRIEN", r"[^a-z\s]+ [^a-z\s]+"),
        ("PERSON", "priya", r"[^\W\d_A-Z]+"),
        ("EMAIL_ADDRESS", "maria.g@contoso.com", r"[a-z0-9.]+@[a-z0-9.-]+\.[a-z]+"),
        ("PHONE_NUMBER", "+44 20 7946 0958", r"\+44 \d\d \d{4} \d{4}"),
        ("PHONE_NUMBER", "(415) 555-0132", r"\(\d{3}\) \d{3}-\d{4}"),
        ("CREDIT_CARD", "4111 1111 1111 1111", r"4\d{3} \d{4} \d{4} \d{4}"),
        ("CREDIT_CARD", "3782 822463 10005", r"3\d{3} \d{6} \d{5}"),
        ("IBAN_CODE", "GB82 WEST 1234 5698 7654 32", r"GB\d\d [A-Z]{4} \d{4} \d{4} \d{4} \d\d"),
        ("IBAN_CODE", "DE89370400440532013000", r"DE\d{20}"),
        ("US_SSN", "123-45-6789", r"(?!000|666|9)\d{3}-(?!00)\d\d-(?!0000)\d{4}"),
        ("IP_ADDRESS", "10.0.0.12", r"\d{1,3}(\.\d{1,3}){3}"),
        ("IP_ADDRESS", "2001:db8::1", r"[0-9a-f]{1,4}(:[0-9a-f]{1,4}){7}"),
        ("GITHUB_TOKEN", "ghp_" + "aB3" * 12, r"ghp_[A-Za-z0-9]{36}"),
    ],
)
def test_surrogate_keeps_type_and_shape(entity: str, value: str, shape: str) -> None:
    fake = Surrogates(SALT)(entity, value)
    assert fake != value
    assert re.fullmatch(shape, fake), f"{entity} {fake!r} does not keep the shape {shape}"
    if entity == "CREDIT_CARD":
        assert _luhn_ok(fake) and len(fake) == len(value)
    if entity == "IBAN_CODE":
        assert iban_valid(fake), f"{fake} has wrong check digits"


def test_same_value_same_surrogate_and_the_salt_decides() -> None:
    one, again, other = (
        Surrogates(SALT),
        Surrogates(SALT),
        Surrogates(b"another salt of 32 bytes......!"),
    )
    names = [f"{first} {last}" for first in ("Ana", "Wei", "Omar") for last in ("Silva", "Zhang")]
    assert [one("PERSON", n) for n in names] == [again("PERSON", n) for n in names]
    assert [one("PERSON", n) for n in names] != [other("PERSON", n) for n in names]
    # a first name alone gets the first name of the full name's surrogate
    assert one("PERSON", "Ana Silva").split()[0] == one("PERSON", "Ana")
    assert len({one("PERSON", n) for n in names}) == len(names)
    with pytest.raises(ValueError, match="16 bytes"):
        Surrogates(b"short")


def _qa_record() -> tuple[dict, dict]:
    context = "Hi, my name is Maria Gonzalez and my card 4111 1111 1111 1111 was charged twice."
    record = {
        "id": "r1",
        "question": "According to Maria Gonzalez, which card was charged?",
        "context": context,
        "answers": {"text": ["Maria Gonzalez"], "answer_start": [context.index("Maria")]},
    }
    name_at = context.index("Maria")
    card_at = context.index("4111")
    findings = {
        "question": [Span(13, 27, "PERSON", 0.85)],
        "context": [
            Span(name_at, name_at + 14, "PERSON", 0.85),
            Span(card_at, card_at + 19, "CREDIT_CARD", 1.0),
        ],
        "answers.text[0]": [Span(0, 14, "PERSON", 0.85)],
    }
    return record, findings


def test_policy_surrogates_names_and_keeps_answers_at_their_offsets() -> None:
    record, findings = _qa_record()
    config = ScreenConfig(
        entities={"PERSON": {"action": "surrogate"}, "CREDIT_CARD": {"action": "redact"}}
    )
    surrogates = Surrogates(SALT)
    outcome = apply_policy(TaskType.extractive_qa, record, findings, 0.0, config, surrogates)
    out = outcome.record
    fake = surrogates("PERSON", "Maria Gonzalez")
    assert "Maria" not in json.dumps(out) and fake in out["context"]
    assert out["question"] == f"According to {fake}, which card was charged?"
    assert out["answers"]["text"] == [fake]  # a "who" answer stays a name, not <PERSON>
    check_answers_at_offsets(out)
    assert "<CREDIT_CARD>" in out["context"]  # rules keep their own action per entity
    assert outcome.counts[("PERSON", "surrogate")] == 3
    # the reviewer's masked view shows placeholders, never a surrogate that looks like a leak
    assert fake not in json.dumps(outcome.masked) and "<PERSON>" in outcome.masked["context"]
    assert fake not in json.dumps(outcome.shown)
    # ... but its changes show what training gets: the surrogate, after the name it replaced
    persons = [c for c in outcome.changes if c.entity == "PERSON"]
    assert {(c.action, c.before.value, c.after.value) for c in persons} == {
        ("surrogate", "Maria Gonzalez", fake)
    }
    with pytest.raises(ValueError, match="needs surrogates"):
        apply_policy(TaskType.extractive_qa, record, findings, 0.0, config)


def test_salt_lives_outside_datasets_owner_only_and_env_wins(tmp_path, monkeypatch) -> None:
    store = Store(str(tmp_path / "store"))
    monkeypatch.delenv("SALT_ENV", raising=False)
    first = secret_key(store, "surrogate-salt", "SALT_ENV")
    path = tmp_path / "store" / "keys" / "surrogate-salt"
    assert len(first) == 32 and stat.S_IMODE(path.stat().st_mode) == 0o600
    assert secret_key(store, "surrogate-salt", "SALT_ENV") == first  # created once
    monkeypatch.setenv("SALT_ENV", "a team-wide salt from the vault")
    assert secret_key(store, "surrogate-salt", "SALT_ENV") == b"a team-wide salt from the vault"
    monkeypatch.setenv("SALT_ENV", "short")
    with pytest.raises(ValueError, match="SALT_ENV"):
        secret_key(store, "surrogate-salt", "SALT_ENV")
    assert key_id(first) != key_id(b"a team-wide salt from the vault")


@pytest.mark.slow
def test_screen_with_surrogates_leaves_no_planted_name_and_a_new_salt_is_a_new_dataset(
    make_config, tmp_path, monkeypatch
) -> None:
    monkeypatch.delenv("TUNEGATE_SURROGATE_SALT", raising=False)
    rules = {
        "entities": {
            "PERSON": {"action": "surrogate"},
            "EMAIL_ADDRESS": {"action": "surrogate"},
            "IBAN_CODE": {"action": "surrogate"},
        }
    }
    sample, screened, _, kept, _, report_text = _screen(
        make_config, tmp_path, "extractive-qa", 300, 5, screen=rules
    )
    kept_text = json.dumps(kept, ensure_ascii=False)
    for kind in ("PERSON", "EMAIL_ADDRESS", "IBAN_CODE"):
        assert sample.planted_pii[kind], f"the sample plants {kind}"
        for value in sample.planted_pii[kind]:
            assert value not in kept_text and value not in report_text
    assert "<PERSON>" not in kept_text and "<EMAIL_ADDRESS>" not in kept_text
    for record in kept:
        check_answers_at_offsets(record)
    salt_file = Path(tmp_path, "store", "keys", "surrogate-salt")
    assert salt_file.exists() and salt_file.read_text().strip() not in kept_text
    assert not any(p.name == "surrogate-salt" for p in Path(screened.uri).rglob("*"))

    monkeypatch.setenv("TUNEGATE_SURROGATE_SALT", "a different salt, rotated by ops")
    _, again, _, kept_again, _, _ = _screen(
        make_config, tmp_path, "extractive-qa", 300, 5, screen=rules
    )
    assert again.uri != screened.uri and not again.reused
    assert len(kept_again) == len(kept) and kept_again != kept
