"""The record contract: task types, configurable column names, validation and normalisation.

What each task's records hold is its TaskSpec (trainer/taskspec.py); every stage after ingest
sees canonical records only:
- `extractive-qa`: `id, question, context, answers{text[], answer_start[]}`; both lists empty is
  an unanswerable question (SQuAD v2's `is_impossible`), kept like any other
- `summarization`: `id, document, summary`
- `chat`: `id, messages[{role, content}]`, every role one of system, user, assistant and the last
  message the assistant's reply (the training target)

`validate_record` turns one parsed input object into a canonical record or a reason, so a bad
record is quarantined with an explanation instead of failing its file.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from enum import StrEnum
from typing import Any

import pyarrow as pa
from pydantic import BaseModel, ConfigDict, Field

from platforms.hashing import sha256_text, stable_json
from platforms.manifest import DatasetRef
from trainer.taskspec import ROLES, TASK_SPECS, task_spec

TaskType = StrEnum(  # type: ignore[misc]
    "TaskType", {spec.name.replace("-", "_"): spec.name for spec in TASK_SPECS.values()}
)
TaskType.__doc__ = "What the records train: one per TaskSpec (trainer/taskspec.py)."


class ColumnMap(BaseModel):
    """Input column names, like Azure ML's `question_key`, `context_key`, `answers_key`..."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    id_key: str = Field("id", description="Column holding a record id (generated when absent).")
    question_key: str = Field("question", description="QA: column holding the question.")
    context_key: str = Field("context", description="QA: column holding the context passage.")
    answers_key: str = Field(
        "answers", description="QA: column holding {text[], answer_start[]} (or its JSON string)."
    )
    answer_text_key: str = Field(
        "text", description="QA: key of the answer texts inside answers, or a flat column."
    )
    answer_start_key: str = Field(
        "answer_start", description="QA: key of the answer offsets inside answers, or a column."
    )
    answer_text_column: str = Field(
        "answer_text",
        description="QA, flat form (CSV): column holding the answer text when there is no "
        "answers column; its offset is in answer_start_key, or found in the context when absent.",
    )
    document_key: str = Field("document", description="Summarization: the source document.")
    summary_key: str = Field("summary", description="Summarization: the reference summary.")
    messages_key: str = Field("messages", description="Chat: list of {role, content} messages.")
    text_key: str = Field("text", description="Text generation: a document's raw text.")


class Invalid(ValueError):
    """A record that cannot be used, with the reason that goes into the quarantine."""


# Where a record came from and why it was set aside: the quarantine table of every stage.
QUARANTINE_SCHEMA = pa.schema(
    [
        ("source", pa.string()),
        ("line", pa.int64()),
        ("id", pa.string()),
        ("stage", pa.string()),
        ("reason", pa.string()),
        ("raw", pa.string()),
    ]
)


class NoUsableRecords(ValueError):
    """A data stage kept no record: the run stops before approval (input exit code 2)."""


def require_records(dataset: DatasetRef, reasons: Mapping[str, int]) -> None:
    """Raise NoUsableRecords when a data stage kept nothing, naming its most common quarantine
    reasons (`reasons`: quarantined records per reason) and where each record's reason is."""
    if dataset.counts.get("accepted", 0) > 0:
        return
    counts = ", ".join(f"{k} {v}" for k, v in dataset.counts.items())
    top = sorted(reasons.items(), key=lambda kv: -kv[1])[:5]
    why = "; ".join(f"{reason} ({n})" for reason, n in top)
    raise NoUsableRecords(
        f"{dataset.stage} left no usable record ({counts}); nothing to approve or train on. "
        + (f"Most common reasons: {why}. " if why else "")
        + f"Each record's reason is in {dataset.uri}/quarantine/"
    )


def require_trainable(split: DatasetRef) -> None:
    """Raise NoUsableRecords, before anything trains, when a split left no record to train on
    or none to judge the model with (e.g. 100,000 copies of one line: one distinct record)."""
    train, test = split.counts.get("train", 0), split.counts.get("test", 0)
    if train > 0 and test > 0:
        return
    counts = ", ".join(f"{k} {split.counts.get(k, 0)}" for k in ("train", "validation", "test"))
    raise NoUsableRecords(
        f"the split left {counts}: no model can be {'trained' if not train else 'judged'} on "
        "that; give more distinct records (duplicates count once, a group goes whole to one "
        "side), or change the split.train / split.validation / split.test shares"
    )


def record_hash(record: dict[str, Any]) -> str:
    """Hash of a record's content, without its id: equal content means a duplicate."""
    return sha256_text(stable_json({k: v for k, v in record.items() if k != "id"}))


def identity_hash(content: str, record_id: str, source: str = "") -> str:
    """What a dataset's content hash adds up per record: its content (`record_hash`), its id
    and, at ingest, its source (the input's name and format). The same texts under other ids,
    or read from another input, make another dataset, with its own screen, approval and split;
    duplicates are still found on the content alone."""
    return sha256_text(stable_json([content, record_id, source]))


def validate_record(task: TaskType, columns: ColumnMap, obj: Any) -> dict[str, Any]:
    """Return the canonical record for one parsed input object, or raise `Invalid` with why."""
    if not isinstance(obj, dict):
        raise Invalid(f"not a JSON object (got {_type_name(obj)})")
    record: dict[str, Any] = {}
    for name in task_spec(task).fields:
        if name == "answers":
            record[name] = _answers(columns, obj)
        elif name == "messages":
            record[name] = _messages(obj, columns.messages_key)
        elif name != "id":
            record[name] = _text(obj, getattr(columns, f"{name}_key"))
    if "answers" in record:
        _locate_answers(record, columns)
        check_answers_at_offsets(record)
    raw_id = obj.get(columns.id_key)
    if raw_id is None or (isinstance(raw_id, str) and not raw_id.strip()):
        record_id = f"rec-{record_hash(record)[:16]}"
    elif isinstance(raw_id, str | int) and not isinstance(raw_id, bool):
        record_id = str(raw_id)
    else:
        raise Invalid(
            f"field '{columns.id_key}' must be a string or integer, got {_type_name(raw_id)}"
        )
    return {"id": record_id, **record}


def check_answers_at_offsets(record: dict[str, Any]) -> None:
    """Raise `Invalid` unless every QA answer text sits at its answer_start in the context."""
    context = record["context"]
    answers = record["answers"]
    for i, (text, start) in enumerate(zip(answers["text"], answers["answer_start"], strict=True)):
        if context[start : start + len(text)] != text:
            raise Invalid(f"answer {i} text is not at answer_start {start} in the context")


def _answers(columns: ColumnMap, obj: dict[str, Any]) -> dict[str, list[Any]]:
    """A QA record's answers `{text[], answer_start[]}`, from a nested object, its JSON string or
    the flat (CSV) columns.

    No answers at all (both lists empty) is an unanswerable question: it is kept, as SQuAD v2 keeps
    them, so a model learns to say so (trainer/qa.py labels it with the first token) and the
    metric scores an empty prediction as right (trainer/metrics/scores.py).
    """
    answers = obj.get(columns.answers_key)
    if answers is None and columns.answer_text_column in obj:
        # Flat form (CSV): one answer as two columns, its offset column optional.
        answers = {columns.answer_text_key: [obj[columns.answer_text_column]]}
        if not _blank(obj.get(columns.answer_start_key)):
            answers[columns.answer_start_key] = [obj[columns.answer_start_key]]
    if isinstance(answers, str):
        answers = _json_field(answers, columns.answers_key)
    if answers is None:
        raise Invalid(
            f"missing field '{columns.answers_key}' (or a flat '{columns.answer_text_column}' "
            f"column, with '{columns.answer_start_key}' optional)"
        )
    if not isinstance(answers, dict):
        raise Invalid(f"field '{columns.answers_key}' must be an object, got {_type_name(answers)}")
    texts = _list_of(answers, columns.answer_text_key, str, columns.answers_key)
    if _blank(answers.get(columns.answer_start_key)):
        return {"text": texts, "answer_start": [None] * len(texts)}  # placed from the context
    starts = _list_of(answers, columns.answer_start_key, int, columns.answers_key)
    if len(texts) != len(starts):
        raise Invalid(
            f"field '{columns.answers_key}' has {len(texts)} texts but {len(starts)} offsets"
        )
    for i, text in enumerate(texts):
        if not text.strip():
            raise Invalid(f"answer {i} text is empty")
    return {"text": texts, "answer_start": starts}


def offsets_missing(columns: ColumnMap, obj: Any) -> bool:
    """Whether a QA input object gives its answer texts without offsets (the context places them)."""
    if not isinstance(obj, dict):
        return False
    answers = obj.get(columns.answers_key)
    if answers is None:
        return columns.answer_text_column in obj and _blank(obj.get(columns.answer_start_key))
    if isinstance(answers, str):
        try:
            answers = json.loads(answers)
        except ValueError:
            return False
    return isinstance(answers, dict) and _blank(answers.get(columns.answer_start_key))


def _blank(value: Any) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())


def _locate_answers(record: dict[str, Any], columns: ColumnMap) -> None:
    """Give each answer without an offset its first occurrence in the context."""
    answers, context = record["answers"], record["context"]
    for i, (text, start) in enumerate(zip(answers["text"], answers["answer_start"], strict=True)):
        if start is not None:
            continue
        found = context.find(text)
        if found < 0:
            raise Invalid(
                f"answer {i} text is not in the context, and there is no "
                f"'{columns.answer_start_key}' to say where it is"
            )
        answers["answer_start"][i] = found


def _text(obj: dict[str, Any], key: str) -> str:
    if key not in obj or obj[key] is None:
        raise Invalid(f"missing field '{key}'")
    value = obj[key]
    if not isinstance(value, str):
        raise Invalid(f"field '{key}' must be a string, got {_type_name(value)}")
    if not value.strip():
        raise Invalid(f"field '{key}' is empty")
    return value


def _list_of(obj: dict[str, Any], key: str, kind: type, parent: str) -> list[Any]:
    if key not in obj:
        raise Invalid(f"missing field '{parent}.{key}'")
    value = obj[key]
    if isinstance(value, kind) and not isinstance(value, bool):
        value = [value]  # a single answer given as a scalar
    if not isinstance(value, list) or not all(
        isinstance(v, kind) and not isinstance(v, bool) for v in value
    ):
        raise Invalid(f"field '{parent}.{key}' must be a list of {kind.__name__}")
    if kind is int and any(v < 0 for v in value):
        raise Invalid(f"field '{parent}.{key}' has a negative offset")
    return list(value)


def _messages(obj: dict[str, Any], key: str) -> list[dict[str, str]]:
    value = obj.get(key)
    if isinstance(value, str):
        value = _json_field(value, key)
    if value is None:
        raise Invalid(f"missing field '{key}'")
    if not isinstance(value, list) or not value:
        raise Invalid(f"field '{key}' must be a non-empty list of {{role, content}} objects")
    messages = []
    for i, message in enumerate(value):
        if not isinstance(message, dict):
            raise Invalid(f"field '{key}[{i}]' must be an object, got {_type_name(message)}")
        try:
            role = _text(message, "role")
            content = _text(message, "content")
        except Invalid as exc:
            raise Invalid(f"{key}[{i}]: {exc}") from None
        if role not in ROLES:  # the value is not echoed: it could be any text
            raise Invalid(f"{key}[{i}]: field 'role' must be one of {', '.join(ROLES)}")
        messages.append({"role": role, "content": content})
    if messages[-1]["role"] != "assistant":
        raise Invalid(
            f"field '{key}' must end with the assistant's reply (the reference), "
            f"not a {messages[-1]['role']} message"
        )
    return messages


def _json_field(text: str, key: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        raise Invalid(f"field '{key}' is a string but not valid JSON") from None


def _type_name(value: Any) -> str:
    return {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}.get(
        type(value), type(value).__name__
    )
