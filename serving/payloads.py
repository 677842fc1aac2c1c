"""Request payloads of each task, validated into model records with errors that name the field.

A scoring request is one JSON object of the deployment's task (its `TaskSpec.request_shape`), or
`{"inputs": [obj, ...]}`:

- extractive-qa: `{"question": str, "context": str}` -> `{"answer", "score", "start", "end"}`
- summarization: `{"document": str}` -> `{"summary"}`
- causal-lm (chat): `{"messages": [{"role", "content"}, ...]}` -> `{"reply"}`
- text-generation: `{"prompt": str}` -> `{"completion"}`

`task` is the deployment's (trainer) task name; what its requests hold comes from its `TaskSpec`.

Validation happens before a request joins a batch, so one bad request never fails its neighbours.
`mlflow_request` / `mlflow_response`: the same request and response through an Azure ML no-code
MLflow deployment (`azureml.model_type: mlflow_model`, serving/mlflow_model.py).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from trainer.taskspec import ROLES, task_spec

MAX_DEPTH = 32  # nesting a request may have (a chat request needs 4)


def parse_json(raw: str | bytes, max_depth: int = MAX_DEPTH) -> Any:
    """The decoded JSON body, or a ValueError saying where it is broken or that it is nested more
    than `max_depth` levels. Linear in the body's size whatever it holds: the C decoder reads it
    (nesting past the interpreter's recursion limit is its RecursionError), then one walk of the
    decoded value measures its nesting (no pattern is matched over the text, so no body can make
    the check backtrack: runs of escaped quotes once took minutes)."""
    try:
        value = json.loads(raw)
    except RecursionError:
        raise ValueError(f"request body is nested more than {max_depth} levels deep") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"request body is not valid JSON: {exc}") from None
    if nesting(value, max_depth) > max_depth:
        raise ValueError(f"request body is nested more than {max_depth} levels deep")
    return value


def nesting(value: Any, stop_above: int | None = None) -> int:
    """How many levels of arrays and objects `value` has (a scalar: 0), walked without recursion;
    the walk stops once it is deeper than `stop_above`."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        deepest = max(deepest, depth)
        if stop_above is not None and deepest > stop_above:
            return deepest
        stack.extend((child, depth + 1) for child in children)
    return deepest


def parse_payload(task: str, payload: Any) -> tuple[list[dict[str, Any]], bool]:
    """(records, is_batch): the records of a single request or of an `{"inputs": [...]}` batch."""
    shape = task_spec(task).request_shape
    if isinstance(payload, dict) and "inputs" in payload:
        inputs = payload["inputs"]
        if not isinstance(inputs, list) or not inputs:
            raise ValueError(f"field 'inputs' must be a non-empty list of {shape}")
        return [
            parse_record(task, item, where=f"inputs[{i}]") for i, item in enumerate(inputs)
        ], True
    return [parse_record(task, payload)], False


def parse_record(task: str, item: Any, where: str = "request") -> dict[str, Any]:
    """One request object checked against its task's fields; returns the model record."""
    spec = task_spec(task)
    if not isinstance(item, dict):
        raise ValueError(f"{where} must be a JSON object {spec.request_shape}, got {_kind(item)}")
    missing = [f for f in spec.request_fields if f not in item]
    if missing:
        raise ValueError(
            f"{where} is missing field {', '.join(repr(m) for m in missing)}: "
            f"this deployment serves {task}, whose requests are {spec.request_shape}"
        )
    record = {}
    for name in spec.request_fields:
        value = item[name]
        if name == "messages":
            record[name] = _messages(value, where)
            continue
        if not isinstance(value, str) or not value.strip():
            raise ValueError(
                f"{where} field {name!r} must be a non-empty string, got {_kind(value)}"
            )
        record[name] = value
    return record


def record_tokens(tokenizer: Any, task: str, records: Sequence[dict[str, Any]]) -> list[int]:
    """Tokens the model reads for each of `records` (their request fields, special tokens left
    out), counted by one batched tokenizer call."""
    texts, owners = [], []
    for i, record in enumerate(records):
        for text in _texts(task, record):
            texts.append(text)
            owners.append(i)
    counts = [0] * len(records)
    if texts:
        encoded = tokenizer(texts, add_special_tokens=False)["input_ids"]
        for owner, ids in zip(owners, encoded, strict=True):
            counts[owner] += len(ids)
    return counts


def most_tokens(task: str, record: dict[str, Any]) -> int:
    """An upper bound of `record_tokens` without a tokenizer: a token covers at least one byte of
    UTF-8 (WordPiece, byte-level BPE, SentencePiece with byte fallback), plus one per text for a
    SentencePiece word-start marker. A record under a limit by this bound needs no counting."""
    return sum(len(text.encode()) + 1 for text in _texts(task, record))


def _texts(task: str, record: dict[str, Any]) -> list[str]:
    texts = []
    for name in task_spec(task).request_fields:
        value = record[name]
        texts += [m["content"] for m in value] if isinstance(value, list) else [value]
    return texts


def record_size(task: str, record: dict[str, Any]) -> int:
    """Characters the model reads for `record`: what the batcher groups similar requests by."""
    return task_spec(task).request_size(record)


def _messages(value: Any, where: str) -> list[dict[str, str]]:
    if not isinstance(value, list) or not value:
        raise ValueError(f"{where} field 'messages' must be a non-empty list, got {_kind(value)}")
    messages = []
    for i, m in enumerate(value):
        ok = isinstance(m, dict) and m.get("role") in ROLES and isinstance(m.get("content"), str)
        if not ok:
            raise ValueError(
                f"{where} field 'messages[{i}]' must be {{'role': one of {ROLES}, "
                f"'content': str}}, got {_kind(m)}"
            )
        messages.append({"role": m["role"], "content": m["content"]})
    return messages


def _kind(value: Any) -> str:
    if isinstance(value, str):
        return "an empty string" if not value.strip() else "a string"
    if isinstance(value, dict):
        return f"an object with keys {sorted(value)[:5]}"
    return {list: "a list", bool: "a boolean", type(None): "null"}.get(
        type(value), type(value).__name__
    )


def mlflow_request(payload: Any) -> dict[str, Any]:
    """An endpoint request (one request object, or `{"inputs": [...]}`) as Azure ML's no-code
    MLflow deployments take it: `{"input_data": {"columns", "index", "data"}}` (pandas' split
    orientation, one row a request)."""
    requests = payload["inputs"] if isinstance(payload, dict) and "inputs" in payload else [payload]
    columns = list(dict.fromkeys(k for request in requests for k in request))
    rows = [[request.get(column) for column in columns] for request in requests]
    return {"input_data": {"columns": columns, "index": list(range(len(rows))), "data": rows}}


def mlflow_response(payload: Any, answered: Any) -> Any:
    """What the endpoint answers `payload` with, from an MLflow deployment's answer to it (the
    predictions, bare or under `predictions`): the response object, or `{"outputs": [...]}`."""
    predictions = answered["predictions"] if isinstance(answered, dict) else answered
    if isinstance(payload, dict) and "inputs" in payload:
        return {"outputs": predictions}
    return predictions[0]
