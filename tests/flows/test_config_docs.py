"""docs/config.md is generated from the config models: it must match what they say today."""

from __future__ import annotations

from pathlib import Path

from flows.config import PipelineConfig
from flows.config_docs import REGENERATE, _rows, config_reference
from tasks.records import TaskType

PAGE = Path(__file__).resolve().parents[2] / "docs" / "config.md"


def test_the_committed_page_is_the_generated_one() -> None:
    assert PAGE.read_text(encoding="utf-8") == config_reference(), (
        f"docs/config.md is stale: the config models changed; regenerate it with `{REGENERATE}`"
    )


def test_every_field_has_a_row_and_a_description() -> None:
    page = config_reference()
    rows = list(_rows("", list(PipelineConfig.model_fields.items())))
    assert len(rows) > 100  # nested sections are walked, not listed as one row each
    undescribed = [path for path, field in rows if not (field.description or "").strip()]
    assert undescribed == [], f"add Field(description=...) to {undescribed}"
    missing = [path for path, _ in rows if f"| `{path}` |" not in page]
    assert missing == []


def test_every_task_is_named() -> None:
    page = config_reference()
    assert all(f"`{task.value}`" in page for task in TaskType)
