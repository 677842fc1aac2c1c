"""One TaskSpec per task type, and every part of tunegate reads the task from it."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest

from serving.payloads import parse_payload, record_size
from tasks.records import ColumnMap, TaskType, validate_record
from trainer.args import parse_args
from trainer.taskspec import TASK_SPECS, task_spec

RECORDS: dict[str, dict[str, Any]] = {
    "extractive-qa": {
        "id": "q1",
        "question": "Where is the office?",
        "context": "The office is in Porto.",
        "answers": {"text": ["Porto"], "answer_start": [17]},
    },
    "summarization": {"id": "s1", "document": "A long ticket text.", "summary": "Short."},
    "chat": {
        "id": "c1",
        "messages": [
            {"role": "user", "content": "My login fails."},
            {"role": "assistant", "content": "Reset your password."},
        ],
    },
    "text-generation": {"id": "t1", "text": "The morning brought a low grey sky and rain."},
}


def test_every_task_type_has_exactly_one_spec() -> None:
    assert {t.value for t in TaskType} == set(TASK_SPECS) == set(RECORDS)
    for t in TaskType:
        spec = task_spec(t)
        assert spec.name == t.value
        assert task_spec(spec.trainer_task) is spec  # either name finds it
    with pytest.raises(ValueError, match="unknown task 'translation'"):
        task_spec("translation")


@pytest.mark.parametrize("name", sorted(TASK_SPECS))
def test_a_canonical_record_goes_through_every_part_by_its_spec(name: str) -> None:
    spec, record = TASK_SPECS[name], RECORDS[name]
    # ingest: the canonical record validates to itself and fits the dataset schema
    assert validate_record(TaskType(name), ColumnMap(), record) == record
    assert pa.Table.from_pylist([record], schema=spec.record_schema).num_rows == 1
    # screen: every text is read
    texts = [text for _, text in spec.text_fields(record)]
    assert all(isinstance(t, str) and t for t in texts) and len(texts) >= len(spec.fields) - 1
    # split: the default group key is one the config accepts
    assert spec.default_group_key in spec.group_keys <= set(spec.fields)
    # serving: the request a user sends for the record is what the deployment accepts
    request = spec.request_of(record)
    parsed, is_batch = parse_payload(spec.trainer_task, request)
    assert parsed == [request] and not is_batch
    assert record_size(spec.trainer_task, request) > 0
    # trainer: its task name is accepted and its model class exists in transformers
    assert parse_args(["--task", spec.trainer_task, "--data-dir", "d"]).task == spec.trainer_task
    import transformers

    assert hasattr(transformers, spec.model_class)


def test_a_request_missing_a_field_names_the_shape_from_the_spec() -> None:
    with pytest.raises(ValueError, match=r"missing field 'document'.*\{\"document\": str\}"):
        parse_payload("summarization", {"text": "x"})


def test_the_config_accepts_only_group_keys_of_the_task() -> None:
    from flows.config import ConfigError, load_config

    assert load_config(None, ["task=chat", "split.group_key=id"]).split.group_key == "id"
    with pytest.raises(ConfigError, match=r"split.group_key 'context'.*use one of \['id'\]"):
        load_config(None, ["task=chat", "split.group_key=context"])
