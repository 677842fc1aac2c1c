"""Chat sample data (`tunegate data sample --task chat`): support conversations with planted PII,
secrets, toxic lines and broken lines, checked against what the bytes hold and what the real
ingest and screen stages make of them.

The line classifier below is written from the chat record contract (tasks/records.py), not from
the generator, so that the answer key in `Sample` is checked against the lines themselves.
"""

from __future__ import annotations

import collections
import json
import re
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from cli.main import app
from platforms.compute import shared_client
from platforms.store import read_table
from samples import templates as t
from samples.generate import Sample, generate_sample, write_sample
from screening.config import ScreenConfig
from tasks.ingest import run_ingest
from tasks.records import ColumnMap, TaskType, validate_record
from tasks.screen import run_screen
from tests.conftest import DASK

CHAT = "chat"
KINDS = {
    "unparsable_json",
    "non_utf8",
    "non_object_json",
    "missing_field",
    "wrong_type",
    "empty_text",
    "wrong_role",
    "last_not_assistant",
}
TOXIC_WORDS = re.compile(r"\b(fuck\w*|shit|assholes?|idiots?|morons?)\b", re.IGNORECASE)


def classify(line: bytes) -> str:
    """ "blank", "valid" or the malformed kind of one chat JSONL line."""
    if not line.strip():
        return "blank"
    try:
        obj = json.loads(line.decode("utf-8"))
    except UnicodeDecodeError:
        return "non_utf8"
    except json.JSONDecodeError:
        return "unparsable_json"
    if not isinstance(obj, dict):
        return "non_object_json"
    messages = obj.get("messages")
    if messages is None:
        return "missing_field"
    if not isinstance(messages, list) or not isinstance(obj.get("id"), str):
        return "wrong_type"
    if not messages:
        return "empty_text"
    for m in messages:
        if not isinstance(m, dict):
            return "wrong_type"
        if "role" not in m or "content" not in m:
            return "missing_field"
        if not isinstance(m["role"], str) or not isinstance(m["content"], str):
            return "wrong_type"
        if not m["content"].strip():
            return "empty_text"
        if m["role"] not in ("system", "user", "assistant"):
            return "wrong_role"
    if messages[-1]["role"] != "assistant":
        return "last_not_assistant"
    return "valid"


def records(sample: Sample) -> list[dict]:
    """Valid records in line order, exact duplicates left out."""
    seen: dict[bytes, dict] = {}
    for line in sample.lines:
        if classify(line) == "valid" and line not in seen:
            seen[line] = json.loads(line)
    return list(seen.values())


def user_text(rec: dict) -> str:
    return " ".join(m["content"] for m in rec["messages"] if m["role"] == "user")


def reply(rec: dict) -> str:
    return rec["messages"][-1]["content"]


@pytest.fixture(scope="module")
def big() -> Sample:
    return generate_sample(CHAT, 2000, seed=0)


# --- the generator ------------------------------------------------------------------------------
def test_same_seed_same_bytes() -> None:
    assert generate_sample(CHAT, 300, seed=7) == generate_sample(CHAT, 300, seed=7)
    assert generate_sample(CHAT, 300, seed=7).lines != generate_sample(CHAT, 300, seed=8).lines


@pytest.mark.parametrize("n", [20, 51, 200, 1237])
def test_answer_key_counts_match_lines(n: int) -> None:
    sample = generate_sample(CHAT, n, seed=n)
    assert len(sample.lines) == n
    assert all(b"\n" not in line and b"\r" not in line for line in sample.lines)
    kinds = collections.Counter(classify(line) for line in sample.lines)
    assert kinds.pop("blank", 0) == sample.blank_lines
    valid = kinds.pop("valid")
    assert dict(kinds) == sample.malformed
    assert set(sample.malformed) == KINDS
    assert valid - len(records(sample)) == sample.duplicate_count
    ids = [r["id"] for r in records(sample)]
    assert len(ids) == len(set(ids))
    assert len({json.dumps(r["messages"]) for r in records(sample)}) == len(ids)


def test_conversations_have_their_shape(big: Sample) -> None:
    recs = records(big)
    exchanges = collections.Counter()
    for rec in recs:
        roles = [m["role"] for m in rec["messages"]]
        if roles[0] == "system":
            roles = roles[1:]
        assert roles == ["user", "assistant"] * (len(roles) // 2), rec["id"]
        exchanges[len(roles) // 2] += 1
    assert set(exchanges) == {1, 2, 3}
    assert min(exchanges.values()) > 0.1 * len(recs)
    with_system = sum(r["messages"][0]["role"] == "system" for r in recs)
    assert 0.3 * len(recs) < with_system < 0.8 * len(recs)


def test_templates_give_every_ask_its_fix() -> None:
    """The last reply answers the customer's ask with `fix[i]`: one list per ask, using only
    values the ask names."""
    for sc in t.SCENARIOS:
        assert len(sc["fix"]) == len(sc["ask"]) and all(len(f) >= 3 for f in sc["fix"])
        assert len(sc["restate"]) >= 5
        for ask, fixes in zip(sc["ask"], sc["fix"], strict=True):
            for fix in fixes:
                assert set(re.findall(r"{(\w+)}", fix)) <= set(re.findall(r"{(\w+)}", ask))


def _facts(text: str, ignore_case: bool = False) -> set[str]:
    """Facts a conversation can name: pool values (products, plans, apps...) and numbers, in
    lower case."""
    pools = [
        *t.PRODUCTS,
        *t.PLANS,
        *t.APPS,
        *t.VPN_CLIENTS,
        *t.HTTP_ERRORS,
        *t.ENDPOINTS,
        *t.EXPORT_FORMATS,
        *t.DEVICES,
        *t.WARRANTIES,
    ]
    flags = re.IGNORECASE if ignore_case else 0
    found = {
        p.lower() for p in pools if re.search(rf"(?<![\w/]){re.escape(p)}(?![\w/])", text, flags)
    }
    numbers = re.findall(
        r"\$\d+\.\d\d|#\d{7}|INV-\d{6}|\d+ failed attempts|[\d,]+ rows", text, flags
    )
    return found | {n.lower() for n in numbers}


@pytest.mark.slow
def test_the_last_reply_follows_from_the_conversation(big: Sample) -> None:
    """Learnable: the reply restates what the customer named and never names a fact (product,
    plan, amount, order...) the conversation does not hold."""
    recs = records(big)
    restated = 0
    for rec in recs:
        prompt = " ".join(m["content"] for m in rec["messages"][:-1])
        # As the agent writes them (the customer may not); the export limit is the same in every
        # reply that names it.
        named = _facts(reply(rec)) - {"50,000 rows"}
        assert named <= _facts(prompt, ignore_case=True), rec["id"]
        restated += bool(named & _facts(user_text(rec), ignore_case=True))
    assert restated > 0.75 * len(recs)


# Values a reply takes from the conversation: taken out, a reply's wording is left.
_POOLS = sorted(
    {
        *t.PRODUCTS,
        *t.PLANS,
        *t.APPS,
        *t.VPN_CLIENTS,
        *t.ENDPOINTS,
        *t.HTTP_ERRORS,
        *t.EXPORT_FORMATS,
        *t.DEVICES,
        *t.WARRANTIES,
        *t.RETURN_REASONS,
        *t.MONTHS,
    },
    key=len,
    reverse=True,
)


def _wording(text: str, planted: set[str]) -> str:
    for value in sorted(planted, key=len, reverse=True):
        text = text.replace(value, "<v>")
    text = text.lower()
    for value in _POOLS:
        text = text.replace(value.lower(), "_")
    return re.sub(r"\S*\d\S*", "#", text)


def test_wording_varies(big: Sample) -> None:
    """Many ways to open a conversation and to reply, not one template per case. Measured on
    seeds 0-2, 500 records: 494-498 distinct reply wordings (values taken out), 356-374 distinct
    first four words of the customer's first turn, 970-1210 distinct words the customers type."""
    planted = {v for vs in [*big.planted_pii.values(), *big.planted_secrets.values()] for v in vs}
    recs = records(big)[:500]
    assert len({_wording(reply(r), planted) for r in recs}) > 400
    first_turns = [next(m["content"] for m in r["messages"] if m["role"] == "user") for r in recs]
    assert len({" ".join(turn.split()[:4]).lower() for turn in first_turns}) > 250
    assert any(turn == turn.lower() for turn in first_turns), "some customers type in lower case"
    words = {w for r in recs for w in re.findall(r"[a-z]+", user_text(r).lower())}
    assert len(words) > 750  # typos make words of their own


def test_planted_values_and_where_they_are(big: Sample) -> None:
    recs = {r["id"]: r for r in records(big)}
    assert set(big.planted_pii) == {
        "PERSON",
        "EMAIL_ADDRESS",
        "PHONE_NUMBER",
        "CREDIT_CARD",
        "IBAN_CODE",
        "IP_ADDRESS",
        "US_SSN",
        "LOCATION",
    }
    assert big.planted_secrets and big.toxic_ids
    located = set()
    places = collections.Counter()
    for rec_id, fields in big.planted_fields.items():
        messages = recs[rec_id]["messages"]
        for name, values in fields.items():
            i = int(re.fullmatch(r"messages\[(\d+)\]\.content", name).group(1))
            assert all(v in messages[i]["content"] for v in values), (rec_id, name)
            located |= set(values)
            last = "last" if i == len(messages) - 1 else "earlier"
            places[(messages[i]["role"], last)] += 1
    planted = {v for vs in [*big.planted_pii.values(), *big.planted_secrets.values()] for v in vs}
    assert located == planted
    # Every kind of message carries planted values: the system message, the customer's turns, the
    # agent's turns before the last and the last reply (the training target).
    for place in [("system", "earlier"), ("user", "earlier"), ("assistant", "earlier")]:
        assert places[place] > 40, place
    assert places[("assistant", "last")] > 80
    share = len(big.planted_fields) / len(recs)
    assert 0.3 < share < 0.55
    for rec_id, rec in recs.items():
        toxic = any(TOXIC_WORDS.search(m["content"]) for m in rec["messages"])
        assert toxic == (rec_id in big.toxic_ids)


def test_valid_records_pass_the_ingest_validator(big: Sample) -> None:
    for rec in records(big)[:300]:
        assert validate_record(TaskType.chat, ColumnMap(), rec) == rec


@pytest.mark.parametrize("ext", ["csv", "parquet"])
def test_write_csv_and_parquet(tmp_path: Path, ext: str) -> None:
    sample = generate_sample(CHAT, 200, seed=4)
    out = tmp_path / f"chat.{ext}"
    write_sample(sample, out)
    valid = [json.loads(line) for line in sample.lines if classify(line) == "valid"]
    if ext == "csv":
        rows = pd.read_csv(out, keep_default_na=False).to_dict("records")
        assert [validate_record(TaskType.chat, ColumnMap(), r) for r in rows] == valid
    else:
        assert pq.read_table(out).to_pylist() == valid


def test_cli_writes_a_chat_sample(tmp_path: Path) -> None:
    out = tmp_path / "chat.jsonl"
    result = CliRunner().invoke(
        app, ["data", "sample", "--task", "chat", "--n", "80", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert "wrote 80 lines" in result.output
    assert out.read_bytes() == b"\n".join(generate_sample(CHAT, 80, seed=0).lines) + b"\n"
    help_text = CliRunner().invoke(app, ["data", "sample", "--help"]).output
    assert "chat" in help_text


# --- through ingest and screen ------------------------------------------------------------------
def _rows(store, ref, table: str) -> list[dict]:
    return [r for f in store.table_files(ref, table) for r in read_table(store, f)]


@pytest.mark.parametrize("task", ["extractive-qa", "summarization", CHAT])
def test_ingest_accounts_for_every_line(make_config, tmp_path: Path, task: str) -> None:
    """Every line the answer key calls broken is quarantined (its reason naming what is wrong),
    every planted copy is a duplicate, every other line is accepted."""
    sample = generate_sample(task, 600, seed=3)
    path = tmp_path / "sample.jsonl"
    write_sample(sample, path)
    cfg = make_config(task=task, ingest={"inputs": [str(path)]})
    store = cfg.open_store()
    ref = run_ingest(
        shared_client(cfg.dask), store, cfg.task, cfg.columns, cfg.ingest, cfg.azure, 200
    )
    c = ref.counts
    assert c["read"] == c["accepted"] + c["quarantined"] + c["duplicates"] == 600 - c["blank"]
    assert c["blank"] == sample.blank_lines
    assert c["quarantined"] == sum(sample.malformed.values())
    assert c["duplicates"] == sample.duplicate_count
    if task != CHAT:
        return
    reasons = {
        "unparsable_json": "unparsable JSON",
        "non_utf8": "non-UTF-8",
        "non_object_json": "not a JSON object",
        "missing_field": "missing field",
        "wrong_type": "must be|not valid JSON",
        "empty_text": "empty",
        "wrong_role": "field 'role' must be one of system, user, assistant",
        "last_not_assistant": "must end with the assistant's reply",
    }
    by_line = {q["line"]: q["reason"] for q in _rows(store, ref, "quarantine")}
    for number, line in enumerate(sample.lines, start=1):
        kind = classify(line)
        if kind not in ("valid", "blank"):
            assert re.search(reasons[kind], by_line[number]), (kind, by_line[number])
    assert {r["id"] for r in _rows(store, ref, "accepted")} == {r["id"] for r in records(sample)}


@pytest.fixture(scope="module")
def screened(tmp_path_factory: pytest.TempPathFactory):
    """A chat sample through the real ingest, then the real screen twice: with the default rules
    (personal data redacted, secrets and toxic records quarantined) and with every personal-data
    rule set to drop, so each finding's quarantine reason names its field."""
    from flows.config import validate_config

    tmp = tmp_path_factory.mktemp("chat-screen")
    sample = generate_sample(CHAT, 300, seed=2)
    path = tmp / "chat.jsonl"
    write_sample(sample, path)
    cfg = validate_config(
        {
            "store": str(tmp / "store"),
            "dask": DASK.model_dump(),
            "task": CHAT,
            "ingest": {"inputs": [str(path)]},
            "screen": {"max_samples": 200},
        }
    )
    client, store = shared_client(cfg.dask), cfg.open_store()
    ingested = run_ingest(client, store, cfg.task, cfg.columns, cfg.ingest, cfg.azure, 200)
    redact = run_screen(client, store, ingested, cfg.screen)
    rules = {
        k: {"action": "drop", "min_score": r.min_score} for k, r in cfg.screen.entities.items()
    }
    drop_all = ScreenConfig.model_validate({**cfg.screen.model_dump(), "entities": rules})
    drop = run_screen(client, store, ingested, drop_all)
    return sample, store, ingested, redact, drop


def _kind_of(sample: Sample, value: str) -> str:
    return next(
        k for k, vs in [*sample.planted_pii.items(), *sample.planted_secrets.items()] if value in vs
    )


def _alone(sample: Sample) -> list[tuple[str, str, str, str]]:
    """(record id, field, place, value) of every planted value that is in one message only of its
    record (so no other message's finding can redact it), place being "system", "user",
    "assistant" or "last" (the assistant's last reply)."""
    recs = {r["id"]: r for r in records(sample)}
    out = []
    for rec_id, fields in sample.planted_fields.items():
        messages = recs[rec_id]["messages"]
        counts = collections.Counter(v for values in fields.values() for v in values)
        for name, values in fields.items():
            i = int(re.fullmatch(r"messages\[(\d+)\]\.content", name).group(1))
            place = "last" if i == len(messages) - 1 else messages[i]["role"]
            out += [(rec_id, name, place, v) for v in values if counts[v] == 1]
    return out


@pytest.mark.slow
def test_screen_redacts_planted_values_in_every_message(screened) -> None:
    sample, store, ingested, (ref, report), _ = screened
    assert report.records_in == ingested.counts["accepted"] == report.kept + report.quarantined
    kept = {r["id"]: r for r in _rows(store, ref, "screened")}
    quarantined = {r["id"]: r for r in _rows(store, ref, "quarantine")}
    kept_text = json.dumps(kept, ensure_ascii=False)
    quarantine_text = json.dumps(quarantined, ensure_ascii=False)
    report_text = Path(ref.uri, "report.json").read_text()
    for kind, values in sample.planted_pii.items():
        if kind == "LOCATION":  # flagged, not redacted, by default
            continue
        for value in values:
            assert value not in kept_text, f"a planted {kind} survived screening"
            assert value not in quarantine_text, f"a planted {kind} is in the quarantine"
            assert value not in report_text, f"a planted {kind} is in the report"
    for kind, values in sample.planted_secrets.items():  # the quarantine keeps them to review
        for value in values:
            assert value not in kept_text, f"a planted {kind} was kept"
            assert value not in report_text, f"a planted {kind} is in the report"
    # Each message holding a planted value now holds a placeholder instead, the last reply too.
    redacted = collections.Counter()
    for rec_id, name, place, value in _alone(sample):
        if rec_id not in kept or _kind_of(sample, value) == "LOCATION":
            continue
        i = int(name[len("messages[") : name.index("]")])
        content = kept[rec_id]["messages"][i]["content"]
        assert value not in content and "<" in content, (rec_id, name)
        redacted[place] += 1
    assert all(redacted[p] >= 5 for p in ("system", "user", "assistant", "last")), redacted
    assert {s.field for s in report.samples} >= {f"messages[{i}].content" for i in range(4)}
    toxic = {i for i, q in quarantined.items() if "toxicity" in q["reason"]}
    assert toxic == set(sample.toxic_ids) and toxic
    secrets = {v for vs in sample.planted_secrets.values() for v in vs}
    for rec_id, fields in sample.planted_fields.items():
        for name, values in fields.items():
            if secrets & set(values):  # quarantined, the reason naming the message
                assert f" in {name}" in quarantined[rec_id]["reason"], (rec_id, name)


def test_screen_reasons_name_the_message_of_each_finding(screened) -> None:
    """With personal data set to drop, a record is quarantined for each planted value, and the
    reason names the one message that holds it: whichever role it has and wherever it is."""
    sample, store, _, _, (ref, _) = screened
    reasons = {r["id"]: r["reason"] for r in _rows(store, ref, "quarantine")}
    kept_ids = {r["id"] for r in _rows(store, ref, "screened")}
    named = collections.Counter()
    for rec_id, name, place, value in _alone(sample):
        kind = _kind_of(sample, value)
        if kind == "LOCATION" or kind in sample.planted_secrets:
            continue
        assert rec_id not in kept_ids, (rec_id, name)
        assert f" in {name}" in reasons[rec_id], (rec_id, name, reasons[rec_id])
        named[place] += 1
    assert all(named[p] >= 5 for p in ("system", "user", "assistant", "last")), named
