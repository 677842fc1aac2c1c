"""Deterministic generator of messy support-ticket training data.

Why: the pipeline has to prove that it screens PII and secrets, drops toxic, duplicate and
malformed records, and still trains on what is left. This module produces JSONL with a known
answer key (`Sample`) so tests and demos can check each of those steps against ground truth.
All randomness comes from one `random.Random(seed)`, so the same arguments give the same bytes.

Extractive QA and summarization records are made from tickets (`_ticket`); chat records are
support conversations made from the same scenarios, values and planted sentences
(`samples.chat`); text-generation records are raw-text passages of a weather station's logbook
(`samples.text`), which `write_sample` also writes as a plain `.txt` file.
"""

from __future__ import annotations

import csv
import json
import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from samples import chat, text, values
from samples import templates as t
from trainer.taskspec import ROLES, task_spec

TASKS = (
    "extractive-qa",
    "summarization",
    "chat",
    "text-generation",
)  # the tasks this generator writes records for
_COMMON_KINDS = (
    "unparsable_json",
    "non_utf8",
    "non_object_json",
    "missing_field",
    "wrong_type",
    "empty_text",
)
# The kinds of broken line each task's samples hold: every one is a line ingest quarantines.
MALFORMED_BY_TASK: dict[str, tuple[str, ...]] = {
    "extractive-qa": (*_COMMON_KINDS, "answer_mismatch"),
    "summarization": _COMMON_KINDS,
    "chat": (*_COMMON_KINDS, "wrong_role", "last_not_assistant"),
    "text-generation": _COMMON_KINDS,
}
MALFORMED_KINDS = tuple(dict.fromkeys(k for kinds in MALFORMED_BY_TASK.values() for k in kinds))
MIN_LINES = 20
_PII_RATE, _SECRET_RATE, _TOXIC_RATE, _TOXIC_QUESTION_RATE = 0.4, 0.03, 0.015, 0.006
_FIELDS = {task: task_spec(task).fields for task in TASKS}  # the canonical record's fields


@dataclass(frozen=True)
class Sample:
    """A generated data set plus the answer key describing what was planted in it."""

    lines: list[bytes]
    planted_pii: dict[str, list[str]]
    planted_secrets: dict[str, list[str]]
    toxic_ids: list[str]
    duplicate_count: int
    malformed: dict[str, int]
    blank_lines: int
    # Chat: record id -> "messages[i].content" -> the planted PII and secret values that message
    # holds (each value of `planted_pii` / `planted_secrets` is in at least one).
    planted_fields: dict[str, dict[str, list[str]]] = field(default_factory=dict)


@dataclass
class _Ticket:
    num: int
    text: str
    qa: list[tuple[str, str]]
    summary: str
    pii: list[tuple[str, str]] = field(default_factory=list)
    secrets: list[tuple[str, str]] = field(default_factory=list)
    toxic: bool = False


# --- tickets -----------------------------------------------------------------------------------
def _find(text: str, value: str) -> int:
    """Index of `value` in `text` as a whole token (not inside a longer word/number), or -1."""
    match = re.search(rf"(?<![\w.]){re.escape(value)}(?!\w)", text)
    return match.start() if match else -1


def _lower_first(question: str) -> str:
    return question[0].lower() + question[1:]


def _ticket(rng: random.Random, num: int, clean: bool) -> _Ticket:
    """Build one ticket; `clean` tickets carry no PII, secrets or toxic text."""
    sc = rng.choice(t.SCENARIOS)
    slots = {key: make(rng) for key, make in values.FACTS.items()}
    sents = [rng.choice(sc["open"]), *rng.sample(sc["body"], 2), rng.choice(sc["ask"])]
    if rng.random() < 0.75:
        sents.append(rng.choice(sc["reply"]))
    sents = [s.format_map(slots) for s in sents]
    tk = _Ticket(num=num, text="", qa=[], summary="")
    pii_questions: list[tuple[str, str]] = []
    name = ""
    if not clean and rng.random() < _PII_RATE:
        kinds, name = values.pii_plan(rng)
        for kind in kinds:
            value = values.pii_value(rng, kind, name)
            sentence, question = rng.choice(t.PII_SENTENCES[kind])
            pos = {"PERSON": 0, "PERSON_AGENT": len(sents)}.get(kind, rng.randint(1, len(sents)))
            sents.insert(pos, sentence.format(v=value))
            tk.pii.append(("PERSON" if kind == "PERSON_AGENT" else kind, value))
            if rng.random() < 0.6:
                pii_questions.append((question, value))
    if not clean and rng.random() < _SECRET_RATE:
        kind = rng.choice(sorted(t.SECRET_SENTENCES))
        value = values.secret_value(rng, kind)
        sents.insert(
            rng.randint(1, len(sents)), rng.choice(t.SECRET_SENTENCES[kind]).format(v=value)
        )
        tk.secrets.append((kind, value))
    if not clean and rng.random() < _TOXIC_RATE:
        for line in rng.sample(t.TOXIC_LINES, 2):
            sents.insert(rng.randint(1, len(sents)), line)
        tk.toxic = True
    tk.text = " ".join(sents)
    facts = [(q, slots[slot]) for q, slot in sc["questions"] if _find(tk.text, slots[slot]) >= 0]
    rng.shuffle(facts)
    pool = pii_questions + facts
    tk.qa = pool[: rng.randint(1, 4)]
    rng.shuffle(tk.qa)
    pii = dict(tk.pii)
    prefix_kinds = [k for k in t.PII_QUESTION_PREFIX if k in pii]
    for i, (q, a) in enumerate(tk.qa):
        if prefix_kinds and rng.random() < 0.3 and (q, a) not in pii_questions:
            kind = rng.choice(prefix_kinds)
            tk.qa[i] = (t.PII_QUESTION_PREFIX[kind].format(v=pii[kind]) + _lower_first(q), a)
    usable = [
        s
        for s in sc["summaries"]
        if all(_find(tk.text, slots[k]) >= 0 for k in re.findall(r"{(\w+)}", s) if k != "who")
    ]
    who = name if name and rng.random() < 0.6 else rng.choice(["The customer", "A customer"])
    tk.summary = rng.choice(usable).format_map({**slots, "who": who})
    if "EMAIL_ADDRESS" in pii and rng.random() < 0.3:
        tk.summary += f" Contact email: {pii['EMAIL_ADDRESS']}."
    if "LOCATION" in pii and rng.random() < 0.3:
        tk.summary += f" The customer is in {pii['LOCATION']}."
    return tk


def _records(
    tk: _Ticket, task: str, rng: random.Random, clean: bool
) -> list[tuple[dict[str, Any], bool]]:
    """Turn a ticket into records (QA: one per question) paired with a 'has toxic text' flag."""
    base = f"ticket-{tk.num:06d}"
    if task == "summarization":
        return [({"id": base, "document": tk.text, "summary": tk.summary}, tk.toxic)]
    if task != "extractive-qa":
        raise ValueError(f"a ticket makes summarization or extractive-qa records, not {task!r}")
    out = []
    for j, (question, answer) in enumerate(tk.qa, start=1):
        toxic_q = not clean and rng.random() < _TOXIC_QUESTION_RATE
        if toxic_q:
            question = t.TOXIC_QUESTION + _lower_first(question)
        answers = {"text": [answer], "answer_start": [_find(tk.text, answer)]}
        rec = {"id": f"{base}-q{j}", "question": question, "context": tk.text, "answers": answers}
        out.append((rec, tk.toxic or toxic_q))
    return out


@dataclass
class _Unit:
    """What one ticket or conversation adds to a sample."""

    key: str  # its text: no two units of a sample share it, so only exact copies repeat content
    records: list[tuple[dict[str, Any], bool]]  # its records, each with a "has toxic text" flag
    pii: list[tuple[str, str]]
    secrets: list[tuple[str, str]]
    fields: dict[str, dict[str, list[str]]]  # chat: record id -> message field -> planted values


def _document_unit(task: str, rng: random.Random, num: int, clean: bool) -> _Unit:
    doc = text.document(rng, clean)
    rec = {"id": f"doc-{num:06d}", "text": doc.text}
    return _Unit(doc.text, [(rec, False)], doc.pii, [], {})


def _conversation_unit(task: str, rng: random.Random, num: int, clean: bool) -> _Unit:
    rates = {"pii_rate": _PII_RATE, "secret_rate": _SECRET_RATE, "toxic_rate": _TOXIC_RATE}
    conv = chat.conversation(rng, num, **({} if clean else rates))
    rec = conv.record
    fields = {rec["id"]: conv.fields} if conv.fields else {}
    return _Unit(_dumps(rec["messages"]), [(rec, conv.toxic)], conv.pii, conv.secrets, fields)


def _ticket_unit(task: str, rng: random.Random, num: int, clean: bool) -> _Unit:
    tk = _ticket(rng, num, clean)
    return _Unit(tk.text, _records(tk, task, rng, clean), tk.pii, tk.secrets, {})


# What each task's records are made from: support tickets, conversations or logbook documents.
_UNITS: dict[str, Callable[[str, random.Random, int, bool], _Unit]] = {
    "extractive-qa": _ticket_unit,
    "summarization": _ticket_unit,
    "chat": _conversation_unit,
    "text-generation": _document_unit,
}


def check_task(task: str) -> str:
    """`task`, when this generator writes records for it; else a ValueError naming it and the
    tasks it knows."""
    if task not in _UNITS:
        raise ValueError(
            f"unknown task {task!r} for sample data: the generator writes records for "
            f"{', '.join(_UNITS)}"
        )
    return task


def _unit(task: str, rng: random.Random, num: int, clean: bool) -> _Unit:
    """Ticket, conversation or document `num` as the records of `task`; `clean` ones plant
    nothing."""
    return _UNITS[check_task(task)](task, rng, num, clean)


# --- malformed lines ---------------------------------------------------------------------------
def _dumps(obj: object) -> str:
    return json.dumps(obj, ensure_ascii=False)


def _corrupt(kind: str, rec: dict[str, Any], rng: random.Random) -> bytes:
    """Return one line that is broken in exactly the way `kind` names (first failing check)."""
    qa = "question" in rec
    text_key = "content" if "messages" in rec else "context" if qa else _texts(rec)[0]
    line = _dumps(rec)
    if kind == "unparsable_json":  # any proper prefix of a JSON object fails to parse
        return line[: rng.randint(len(line) // 3, len(line) - 2)].encode()
    if kind == "non_utf8":
        cut = line.index(f'"{text_key}": "') + len(text_key) + 5 + rng.randint(0, 30)
        bad = rng.choice([b"\xff\xfe", b"\xe9", b"\x80", b"\xc3\x28"])
        return line[:cut].encode() + bad + line[cut:].encode()
    if kind == "non_object_json":
        return rng.choice(["[1, 2]", '"just a string"', "42", "null", _dumps([rec])]).encode()
    if "messages" in rec:
        _break_chat(kind, rec, rng)
    elif kind == "missing_field":  # never the id: ingest gives a record without one its own
        fields = [k for k in rec if k != "id"]
        drop = rng.choice([*fields, "answers.answer_start"] if qa else fields)
        if drop == "answers.answer_start":
            rec["answers"] = {"text": rec["answers"]["text"]}
        else:
            del rec[drop]
    elif kind == "wrong_type":
        if qa:
            start = rec["answers"]["answer_start"][0]
            key, value = rng.choice(
                [
                    ("answers", {"text": rec["answers"]["text"], "answer_start": str(start)}),
                    ("answers", {"text": rec["answers"]["text"], "answer_start": [str(start)]}),
                    ("answers", rec["answers"]["text"]),
                    ("question", 42),
                    ("context", [rec["context"]]),
                    ("id", [rec["id"]]),  # an integer id is a valid one
                ]
            )
        else:
            first, last = _texts(rec)[0], _texts(rec)[-1]
            key, value = rng.choice(
                [
                    (first, 12345),
                    (first, None),
                    (last, [rec[last]]),
                    ("id", [rec["id"]]),  # an integer id is a valid one
                ]
            )
        rec[key] = value
    elif kind == "empty_text":
        rec[rng.choice(["question", "question", "context"] if qa else _texts(rec))] = rng.choice(
            ["", "   ", " \t "]
        )
    elif kind == "answer_mismatch":
        answer, start = rec["answers"]["text"][0], rec["answers"]["answer_start"][0]
        for shift in rng.sample([-7, -3, 1, 2, 5, 11], 6):
            if start + shift >= 0 and not rec["context"].startswith(answer, start + shift):
                rec["answers"]["answer_start"] = [start + shift]
                break
        else:  # past the end of the context nothing can match
            rec["answers"]["answer_start"] = [len(rec["context"]) + 1]
    else:
        raise ValueError(f"unknown malformed kind {kind!r}")
    return _dumps(rec).encode()


def _texts(rec: dict[str, Any]) -> list[str]:
    """The text fields of a summarization or text-generation record."""
    return [k for k in rec if k != "id"]


def _break_chat(kind: str, rec: dict[str, Any], rng: random.Random) -> None:
    """Break a chat record in place in the way `kind` names (a field, type, text or role)."""
    messages = rec["messages"]
    i = rng.randrange(len(messages))
    message = messages[i]
    if kind == "missing_field":
        drop = rng.choice(["messages", "messages", "role", "content"])
        if drop == "messages":
            del rec["messages"]
        else:
            del message[drop]
    elif kind == "wrong_type":
        how = rng.choice(["object", "string", "message", "content", "number", "role", "id"])
        if how == "object":  # one message where the list should be
            rec["messages"] = message
        elif how == "string":  # text that is not JSON where the list should be
            rec["messages"] = message["content"]
        elif how == "message":
            messages[i] = message["content"]
        elif how == "content":
            message["content"] = [message["content"]]
        elif how == "number":
            message["content"] = rng.randint(1, 999)
        elif how == "role":
            message["role"] = rng.randint(0, 2)
        else:
            rec["id"] = [rec["id"]]
    elif kind == "empty_text":
        if rng.random() < 0.2:
            rec["messages"] = []
        else:
            message["content"] = rng.choice(["", "   ", " \t "])
    elif kind == "wrong_role":
        message["role"] = rng.choice(["customer", "agent", "bot", "human", "support", "tool"])
    elif kind == "last_not_assistant":  # the conversation ends before the reply, or after it
        if rng.random() < 0.5:
            messages.pop()
        else:
            messages.append({"role": "user", "content": rng.choice(t.SIGN_OFFS)})
    else:
        raise ValueError(f"unknown malformed kind {kind!r}")


def _valid_record(line: bytes) -> dict[str, Any] | None:
    """Return the parsed record if `line` is a valid QA, summarization, chat or text-generation
    record, else None."""
    try:
        obj = json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None
    if not isinstance(obj, dict) or not isinstance(obj.get("id"), str):
        return None
    if set(obj) == set(_FIELDS["chat"]):
        messages = obj["messages"]
        ok = (
            isinstance(messages, list)
            and messages
            and all(
                isinstance(m, dict)
                and set(m) == {"role", "content"}
                and m["role"] in ROLES
                and isinstance(m["content"], str)
                and m["content"].strip()
                for m in messages
            )
            and messages[-1]["role"] == "assistant"
        )
        return obj if ok else None
    if set(obj) in (set(_FIELDS["summarization"]), set(_FIELDS["text-generation"])):
        texts = [obj[k] for k in _texts(obj)]
        return obj if all(isinstance(x, str) and x.strip() for x in texts) else None
    if set(obj) != set(_FIELDS["extractive-qa"]):
        return None
    ans, ctx, question = obj["answers"], obj["context"], obj["question"]
    if not (
        isinstance(question, str) and question.strip() and isinstance(ctx, str) and ctx.strip()
    ):
        return None
    if not isinstance(ans, dict) or set(ans) != {"text", "answer_start"}:
        return None
    texts, starts = ans["text"], ans["answer_start"]
    if not (isinstance(texts, list) and isinstance(starts, list) and len(texts) == len(starts)):
        return None
    ok = texts and all(
        isinstance(x, str) and type(s) is int and ctx[s : s + len(x)] == x
        for x, s in zip(texts, starts, strict=True)
    )
    return obj if ok else None


# --- public API --------------------------------------------------------------------------------
def generate_sample(task: str, n: int, seed: int = 0) -> Sample:
    """Generate `n` JSONL lines for `task` and return them with their answer key.

    Lines mix valid records with exact duplicates, malformed lines of every kind in
    `MALFORMED_BY_TASK[task]` and blank lines.
    Deterministic: the same (task, n, seed) always gives byte-identical lines.
    """
    check_task(task)
    if n < MIN_LINES:
        raise ValueError(f"n must be at least {MIN_LINES}; got {n}")
    rng = random.Random(seed)
    kinds = MALFORMED_BY_TASK[task]
    per_kind, blanks = (max(2, n // 250), max(2, n // 200)) if n >= 50 else (1, 1)
    dups = max(1, round(n * 0.03))
    n_valid = n - per_kind * len(kinds) - blanks - dups
    valid: list[bytes] = []
    toxic_ids: list[str] = []
    pii: dict[str, dict[str, None]] = {}
    secrets: dict[str, dict[str, None]] = {}
    fields: dict[str, dict[str, list[str]]] = {}
    seen_texts: set[str] = set()  # no two tickets share a context: only exact copies repeat
    num = 0
    while len(valid) < n_valid:
        unit = _unit(task, rng, num + 1, clean=False)
        recs = unit.records[: n_valid - len(valid)]
        if not recs or unit.key in seen_texts:
            continue
        num += 1
        seen_texts.add(unit.key)
        valid += [_dumps(rec).encode() for rec, _ in recs]
        toxic_ids += [rec["id"] for rec, toxic in recs if toxic]
        for kind, value in unit.pii:
            pii.setdefault(kind, {})[value] = None
        for kind, value in unit.secrets:
            secrets.setdefault(kind, {})[value] = None
        fields.update(unit.fields)
    extras: list[tuple[float, bytes]] = []
    for kind in kinds:
        for _ in range(per_kind):
            num += 1
            rec = _unit(task, rng, num, clean=True).records[0][0]
            extras.append((rng.uniform(0, n_valid), _corrupt(kind, rec, rng)))
    for _ in range(blanks):
        extras.append((rng.uniform(0, n_valid), rng.choice([b"", b"", b" ", b"\t", b"   "])))
    for src in rng.sample(range(n_valid), dups):  # strictly after the line it copies
        extras.append((rng.uniform(src + 0.5, n_valid), valid[src]))
    keyed = [(float(i), i, line) for i, line in enumerate(valid)]
    keyed += [(key, n_valid + i, line) for i, (key, line) in enumerate(extras)]
    order = list(t.PII_SENTENCES)
    return Sample(
        lines=[line for _, _, line in sorted(keyed)],
        planted_pii={k: list(pii[k]) for k in order if k in pii},
        planted_secrets={k: list(v) for k, v in sorted(secrets.items())},
        toxic_ids=toxic_ids,
        duplicate_count=dups,
        malformed=dict.fromkeys(kinds, per_kind),
        blank_lines=blanks,
        planted_fields=fields,
    )


def valid_records(task: str, n: int, seed: int = 0) -> list[dict[str, Any]]:
    """Up to `n` valid, distinct records of a generated sample (its planted breakage left out),
    for benchmarks and examples that need clean data."""
    records: dict[str, dict[str, Any]] = {}
    for line in generate_sample(task, max(MIN_LINES, n * 2), seed=seed).lines:
        record = _valid_record(line)
        if record is not None:
            records.setdefault(record["id"], record)
    return list(records.values())[:n]


def write_sample(sample: Sample, out: Path) -> None:
    """Write `sample` to `out`, choosing the format from the extension.

    `.jsonl` gets every line (broken ones included); `.csv` and `.parquet` get only the valid
    records (exact duplicates included), since those formats cannot carry a broken row; `.txt`
    (text-generation only) the valid documents' texts, separated by blank lines.
    """
    out = Path(out)
    suffix = out.suffix.lower()
    if suffix not in (".jsonl", ".csv", ".parquet", ".txt"):
        raise ValueError(
            f"unsupported extension {out.suffix!r}; use .jsonl, .csv, .parquet or .txt"
        )
    out.parent.mkdir(parents=True, exist_ok=True)
    if suffix == ".jsonl":
        out.write_bytes(b"\n".join(sample.lines) + b"\n")
        return
    rows = [rec for rec in map(_valid_record, sample.lines) if rec is not None]
    if not rows:
        raise ValueError("sample has no valid records to write")
    task = next(task for task in TASKS if set(rows[0]) == set(_FIELDS[task]))
    if suffix == ".txt":
        if task != "text-generation":
            raise ValueError(f"a .txt sample holds text-generation documents, not {task} records")
        out.write_text("\n\n".join(r["text"] for r in rows) + "\n", encoding="utf-8")
        return
    if suffix == ".csv":
        _write_csv(rows, task, out)
    else:
        _write_parquet(rows, task, out)


def _write_csv(rows: list[dict[str, Any]], task: str, out: Path) -> None:
    """Write rows as CSV; QA answers are flattened to the first answer plus a JSON column, chat
    messages are a JSON column."""
    if task == "chat":
        rows = [{"id": r["id"], "messages": _dumps(r["messages"])} for r in rows]
    if task == "extractive-qa":
        rows = [
            {**{k: r[k] for k in ("id", "question", "context")},
             "answer_text": r["answers"]["text"][0],
             "answer_start": r["answers"]["answer_start"][0],
             "answers": _dumps(r["answers"])}
            for r in rows
        ]  # fmt: skip
    with out.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)


def _write_parquet(rows: list[dict[str, Any]], task: str, out: Path) -> None:
    """Write rows as Parquet; QA answers stay a struct of two lists, as in SQuAD, chat messages
    a list of {role, content} structs."""
    import pyarrow as pa  # heavy import, only needed for this format
    import pyarrow.parquet as pq

    if task == "chat":
        pq.write_table(pa.Table.from_pylist(rows, schema=task_spec(task).record_schema), out)
        return
    qa = task == "extractive-qa"
    fields = [(name, pa.string()) for name in _FIELDS[task]]
    if qa:
        answers = pa.struct(
            [("text", pa.list_(pa.string())), ("answer_start", pa.list_(pa.int32()))]
        )
        fields[-1] = ("answers", answers)
    pq.write_table(pa.Table.from_pylist(rows, schema=pa.schema(fields)), out)
