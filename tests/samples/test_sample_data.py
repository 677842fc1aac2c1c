"""Tests for the deterministic sample-data generator (samples/generate.py).

The line classifier below is written independently of the generator so that the answer key in
`Sample` is checked against what the bytes actually contain.
"""

from __future__ import annotations

import collections
import hashlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

from samples.generate import Sample, generate_sample, write_sample

QA, SUM = "extractive-qa", "summarization"
ROOT = Path(__file__).resolve().parents[2]
TOXIC_WORDS = re.compile(r"\b(fuck\w*|shit|assholes?|idiots?|morons?)\b", re.IGNORECASE)
ALL_KINDS = {
    "unparsable_json",
    "non_utf8",
    "non_object_json",
    "missing_field",
    "wrong_type",
    "empty_text",
    "answer_mismatch",
}


def classify(line: bytes, task: str) -> str:
    """Return "blank", "valid" or the malformed kind of one JSONL line."""
    if not line.strip():
        return "blank"
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        return "non_utf8"
    try:
        obj = json.loads(text)
    except json.JSONDecodeError:
        return "unparsable_json"
    if not isinstance(obj, dict):
        return "non_object_json"
    fields = (
        ["id", "question", "context", "answers"] if task == QA else ["id", "document", "summary"]
    )
    if any(f not in obj for f in fields):
        return "missing_field"
    if not all(isinstance(obj[f], str) for f in fields if f != "answers"):
        return "wrong_type"
    if task == QA:
        answers = obj["answers"]
        if not isinstance(answers, dict):
            return "wrong_type"
        if "text" not in answers or "answer_start" not in answers:
            return "missing_field"
        texts, starts = answers["text"], answers["answer_start"]
        if not (isinstance(texts, list) and all(isinstance(x, str) for x in texts)):
            return "wrong_type"
        if not (isinstance(starts, list) and all(type(s) is int for s in starts)):
            return "wrong_type"
        if not obj["question"].strip() or not obj["context"].strip():
            return "empty_text"
        if len(texts) != len(starts) or not texts:
            return "answer_mismatch"
        ctx = obj["context"]
        if any(ctx[s : s + len(x)] != x for x, s in zip(texts, starts, strict=True)):
            return "answer_mismatch"
        return "valid"
    if not obj["document"].strip() or not obj["summary"].strip():
        return "empty_text"
    return "valid"


def valid_records(sample: Sample, task: str) -> list[dict]:
    """Parsed valid records in line order, exact duplicates included."""
    return [json.loads(line) for line in sample.lines if classify(line, task) == "valid"]


def record_texts(rec: dict) -> list[str]:
    if "question" in rec:
        return [rec["question"], rec["context"], *rec["answers"]["text"]]
    return [rec["document"], rec["summary"]]


@pytest.fixture(scope="module", params=[QA, SUM])
def big(request: pytest.FixtureRequest) -> tuple[str, Sample]:
    return request.param, generate_sample(request.param, 2000, seed=0)


@pytest.mark.parametrize("task", [QA, SUM])
def test_same_seed_same_bytes_different_seed_different(task: str) -> None:
    a = generate_sample(task, 300, seed=7)
    b = generate_sample(task, 300, seed=7)
    c = generate_sample(task, 300, seed=8)
    assert a.lines == b.lines
    assert a == b
    assert a.lines != c.lines


def test_output_does_not_depend_on_hash_seed() -> None:
    code = (
        "import hashlib; from samples.generate import generate_sample as g; "
        "s, t, u = (g(task, 400, 3) for task in ('extractive-qa', 'summarization', 'chat')); "
        "lines = b'\\n'.join(s.lines + t.lines + u.lines); "
        "print(hashlib.sha256(lines + repr((s, t, u)).encode()).hexdigest())"
    )
    digests = set()
    for hash_seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed, "PYTHONPATH": str(ROOT)}
        out = subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
        )
        digests.add(out.stdout.strip())
    assert len(digests) == 1


@pytest.mark.parametrize("task", [QA, SUM])
@pytest.mark.parametrize("n", [20, 50, 51, 200, 1237])
def test_total_line_count_is_n(task: str, n: int) -> None:
    sample = generate_sample(task, n, seed=n)
    assert len(sample.lines) == n
    assert all(b"\n" not in line and b"\r" not in line for line in sample.lines)
    assert valid_records(sample, task)


def test_bad_arguments_raise() -> None:
    from samples.generate import valid_records as clean_records

    known = r"extractive-qa, summarization, chat, text-generation"
    with pytest.raises(ValueError, match=rf"unknown task 'translation' .*{known}"):
        generate_sample("translation", 100)
    with pytest.raises(ValueError, match=rf"unknown task 'QA' .*{known}"):
        clean_records("QA", 10)  # never a ticket's QA records for a task it does not know
    with pytest.raises(ValueError, match="at least"):
        generate_sample(QA, 5)


@pytest.mark.parametrize("task", [QA, SUM])
@pytest.mark.parametrize("n", [50, 200, 3000])
def test_answer_key_counts_match_lines(task: str, n: int) -> None:
    sample = generate_sample(task, n, seed=1)
    kinds = collections.Counter(classify(line, task) for line in sample.lines)
    assert kinds.pop("blank", 0) == sample.blank_lines
    valid_lines = kinds.pop("valid")
    assert dict(kinds) == {k: v for k, v in sample.malformed.items() if v}
    assert sum(sample.malformed.values()) + sample.blank_lines + valid_lines == n

    seen: set[bytes] = set()
    dups = 0
    for line in sample.lines:
        if classify(line, task) != "valid":
            continue
        if line in seen:
            dups += 1
        seen.add(line)
    assert dups == sample.duplicate_count
    assert 0.02 * n <= dups <= 0.04 * n + 1

    ids = [json.loads(line)["id"] for line in seen]
    assert len(ids) == len(set(ids)), "valid records must have unique ids"
    non_utf8 = 0
    for line in sample.lines:
        try:
            line.decode("utf-8")
        except UnicodeDecodeError:
            non_utf8 += 1
    assert non_utf8 == sample.malformed["non_utf8"]


@pytest.mark.parametrize("task", [QA, SUM])
def test_every_malformed_kind_present_at_n200(task: str) -> None:
    sample = generate_sample(task, 200, seed=0)
    expected = ALL_KINDS if task == QA else ALL_KINDS - {"answer_mismatch"}
    found = {classify(line, task) for line in sample.lines} - {"valid", "blank"}
    assert found == expected
    assert set(sample.malformed) == expected
    assert all(count >= 2 for count in sample.malformed.values())
    assert sample.blank_lines >= 2


def test_qa_answers_sit_at_answer_start_and_contexts_are_shared() -> None:
    recs = valid_records(generate_sample(QA, 2000, seed=4), QA)
    per_context = collections.Counter(r["context"] for r in recs)
    for rec in recs:
        assert re.fullmatch(r"ticket-\d{6}-q[1-4]", rec["id"])
        (text,), (start,) = rec["answers"]["text"], rec["answers"]["answer_start"]
        assert text and rec["context"][start : start + len(text)] == text
    tickets_per_context = collections.defaultdict(set)
    for rec in recs:
        tickets_per_context[rec["context"]].add(rec["id"].rsplit("-", 1)[0])
    # Different tickets never share a context, so only exact line copies repeat content.
    assert all(len(tickets) == 1 for tickets in tickets_per_context.values())
    unique = {json.dumps(r, sort_keys=True) for r in recs}
    assert max(collections.Counter(json.loads(u)["context"] for u in unique).values()) <= 4
    assert any(count >= 3 for count in per_context.values())
    assert len(per_context) > 0.3 * len(recs)


def test_summarization_records_look_like_tickets() -> None:
    recs = valid_records(generate_sample(SUM, 500, seed=2), SUM)
    for rec in recs:
        assert re.fullmatch(r"ticket-\d{6}", rec["id"])
        assert rec["document"].count(". ") >= 3
        assert len(rec["summary"]) < len(rec["document"])
    unique = {json.dumps(r, sort_keys=True) for r in recs}
    assert len({json.loads(u)["document"] for u in unique}) == len(unique)


def test_planted_values_appear_in_valid_lines(big: tuple[str, Sample]) -> None:
    task, sample = big
    texts = "\n".join(t for rec in valid_records(sample, task) for t in record_texts(rec))
    assert set(sample.planted_pii) == {
        "PERSON",
        "EMAIL_ADDRESS",
        "PHONE_NUMBER",
        "CREDIT_CARD",
        "IBAN_CODE",
        "IP_ADDRESS",
        "US_SSN",
        "LOCATION",
    }
    for kind, values in [*sample.planted_pii.items(), *sample.planted_secrets.items()]:
        assert values, kind
        assert len(values) == len(set(values)), kind
        for value in values:
            assert value in texts, (kind, value)
    assert sample.planted_secrets


def test_planted_value_shapes(big: tuple[str, Sample]) -> None:
    _, sample = big
    for ssn in sample.planted_pii["US_SSN"]:
        assert re.fullmatch(r"\d{3}-\d{2}-\d{4}", ssn)
        assert ssn not in {"078-05-1120", "123-45-6789"} and not ssn.startswith(("000", "666", "9"))
    for card in sample.planted_pii["CREDIT_CARD"]:
        digits = [int(d) for d in re.sub(r"[ -]", "", card)][::-1]
        luhn = sum(
            d if i % 2 == 0 else (d * 2 - 9 if d * 2 > 9 else d * 2) for i, d in enumerate(digits)
        )
        assert luhn % 10 == 0, card
    for iban in sample.planted_pii["IBAN_CODE"]:
        raw = iban.replace(" ", "")
        assert int("".join(str(int(c, 36)) for c in raw[4:] + raw[:4])) % 97 == 1, iban
    for ip in sample.planted_pii["IP_ADDRESS"]:
        assert all(0 <= int(p) <= 255 for p in ip.split(".")) and ip.count(".") == 3
    for email in sample.planted_pii["EMAIL_ADDRESS"]:
        assert re.fullmatch(r"[a-z0-9._]+@[a-z0-9.-]+\.[a-z]{2,}", email), email
    patterns = {
        "aws_access_key_id": r"AKIA[A-Z0-9]{16}",
        "github_token": r"ghp_[A-Za-z0-9]{36}",
        "azure_storage_connection_string": r"DefaultEndpointsProtocol=https;AccountName=[a-z0-9]+;"
        r"AccountKey=[A-Za-z0-9+/]{86}==;EndpointSuffix=core\.windows\.net",
        "private_key": r"-----BEGIN RSA PRIVATE KEY-----\n[A-Za-z0-9+/=\n]+\n"
        r"-----END RSA PRIVATE KEY-----",
        "jwt": r"eyJ[\w-]+\.eyJ[\w-]+\.[\w-]+",
        "slack_token": r"xoxb-\d+-\d+-[A-Za-z0-9]+",
        "password": r"\S{8,}",
    }
    for kind, values in sample.planted_secrets.items():
        for value in values:
            assert re.fullmatch(patterns[kind], value), (kind, value)


def test_planted_rates_are_roughly_as_specified(big: tuple[str, Sample]) -> None:
    task, sample = big
    recs = valid_records(sample, task)
    pii_values = [v for values in sample.planted_pii.values() for v in values]
    secret_values = [v for values in sample.planted_secrets.values() for v in values]

    def share(values: list[str]) -> float:
        hits = sum(any(v in t for t in record_texts(r) for v in values) for r in recs)
        return hits / len(recs)

    assert 0.3 <= share(pii_values) <= 0.5
    assert 0.01 <= share(secret_values) <= 0.06
    assert 0.01 <= len(sample.toxic_ids) / len(recs) <= 0.04


def test_pii_reaches_every_field(big: tuple[str, Sample]) -> None:
    task, sample = big
    values = [v for values in sample.planted_pii.values() for v in values]
    recs = valid_records(sample, task)
    if task == QA:
        fields = {
            "question": [r["question"] for r in recs],
            "context": [r["context"] for r in recs],
            "answer": [r["answers"]["text"][0] for r in recs],
        }
    else:
        fields = {
            "document": [r["document"] for r in recs],
            "summary": [r["summary"] for r in recs],
        }
    for name, texts in fields.items():
        assert any(v in text for text in texts for v in values), name
    if task == QA:  # some answers are exactly a PII value, so redacting answers is exercised
        answers = {r["answers"]["text"][0] for r in recs}
        assert answers & set(sample.planted_pii["PERSON"])
        assert answers & set(sample.planted_pii["EMAIL_ADDRESS"])


def test_toxic_ids_match_toxic_text(big: tuple[str, Sample]) -> None:
    task, sample = big
    recs = {r["id"]: r for r in valid_records(sample, task)}
    assert len(sample.toxic_ids) == len(set(sample.toxic_ids))
    for rec_id, rec in recs.items():
        toxic = any(TOXIC_WORDS.search(t) for t in record_texts(rec))
        assert toxic == (rec_id in sample.toxic_ids), rec_id


@pytest.mark.parametrize("task", [QA, SUM])
@pytest.mark.slow
def test_a_large_sample_has_its_size_and_tickets_never_share_text(task: str) -> None:
    sample = generate_sample(task, 20000, seed=0)
    assert len(sample.lines) == 20000
    # Content-based dedup must find exactly the planted copies: different tickets never share
    # a context/document, so near-duplicates cannot inflate the duplicate count.
    tickets_per_text = collections.defaultdict(set)
    for rec in valid_records(sample, task):
        text = rec["context"] if task == QA else rec["document"]
        tickets_per_text[text].add(rec["id"].split("-q")[0])
    assert all(len(tickets) == 1 for tickets in tickets_per_text.values())


@pytest.mark.parametrize("task", [QA, SUM])
def test_duplicates_follow_their_original(task: str) -> None:
    sample = generate_sample(task, 1000, seed=3)
    first_seen: list[str] = []
    seen: set[bytes] = set()
    for line in sample.lines:
        if classify(line, task) == "valid" and line not in seen:
            seen.add(line)
            first_seen.append(json.loads(line)["id"])
    # Originals appear in id order; a copy placed before its original would break this.
    assert first_seen == sorted(first_seen)


@pytest.mark.parametrize("task", [QA, SUM])
def test_write_jsonl_round_trip(task: str, tmp_path: Path) -> None:
    sample = generate_sample(task, 120, seed=5)
    out = tmp_path / "nested" / "data.jsonl"
    write_sample(sample, out)
    raw = out.read_bytes()
    assert raw.endswith(b"\n")
    assert raw[:-1].split(b"\n") == sample.lines
    assert hashlib.sha256(raw).digest() == hashlib.sha256(b"\n".join(sample.lines) + b"\n").digest()


def test_write_csv_round_trip(tmp_path: Path) -> None:
    sample = generate_sample(QA, 300, seed=6)
    recs = valid_records(sample, QA)
    out = tmp_path / "qa.csv"
    write_sample(sample, out)
    df = pd.read_csv(out, dtype={"id": str}, keep_default_na=False)
    assert list(df.columns) == [
        "id",
        "question",
        "context",
        "answer_text",
        "answer_start",
        "answers",
    ]
    assert len(df) == len(recs)
    for row, rec in zip(df.itertuples(index=False), recs, strict=True):
        assert row.id == rec["id"] and row.question == rec["question"]
        assert row.context == rec["context"]
        assert json.loads(row.answers) == rec["answers"]
        assert row.context[row.answer_start : row.answer_start + len(row.answer_text)] == (
            row.answer_text
        )

    sample = generate_sample(SUM, 300, seed=6)
    out = tmp_path / "sum.csv"
    write_sample(sample, out)
    df = pd.read_csv(out, keep_default_na=False)
    assert list(df.columns) == ["id", "document", "summary"]
    assert df.to_dict("records") == valid_records(sample, SUM)


def test_write_parquet_round_trip(tmp_path: Path) -> None:
    sample = generate_sample(QA, 300, seed=9)
    out = tmp_path / "qa.parquet"
    write_sample(sample, out)
    table = pq.read_table(out)
    answers_type = table.schema.field("answers").type
    assert answers_type.num_fields == 2
    assert str(answers_type.field("text").type) == "list<element: string>"
    assert "int" in str(answers_type.field("answer_start").type)
    assert table.to_pylist() == valid_records(sample, QA)

    sample = generate_sample(SUM, 300, seed=9)
    out = tmp_path / "sum.parquet"
    write_sample(sample, out)
    assert pq.read_table(out).to_pylist() == valid_records(sample, SUM)


def test_the_cli_names_an_unknown_task_and_the_known_ones_with_exit_2(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from cli.main import app

    out = tmp_path / "sample.jsonl"
    result = CliRunner().invoke(app, ["data", "sample", "--task", "bogus", "--out", str(out)])

    assert result.exit_code == 2
    message = " ".join(result.output.split())
    assert "unknown task 'bogus'" in message
    assert "extractive-qa, summarization, chat, text-generation" in message
    assert "Traceback" not in result.output
    assert not out.exists()


def test_write_rejects_unknown_extension(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="jsonl"):
        write_sample(generate_sample(QA, 50), tmp_path / "data.xml")


def test_valid_records_are_clean_and_distinct() -> None:
    from samples.generate import valid_records
    from tasks.records import ColumnMap, TaskType, validate_record

    records = valid_records("extractive-qa", 50, seed=3)
    assert len(records) == 50 and len({r["id"] for r in records}) == 50
    for record in records:  # each one passes the ingest validator as it is
        assert validate_record(TaskType.extractive_qa, ColumnMap(), record) == record
