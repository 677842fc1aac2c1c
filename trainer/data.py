"""Reading a split dataset and turning records into model features by their task's kind.

How a kind's records become inputs and labels is its kind module's (trainer/kinds/), which its
prediction code shares, so training and prediction see the same text.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import fsspec
import pyarrow.parquet as pq
from datasets import Dataset

from trainer.taskspec import task_spec


def read_split(
    data_dir: str | Path,
    split: str,
    limit: int = 0,
    storage_options: Mapping[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """Records of one split (train / validation / test) of a split dataset directory: a local
    folder or any fsspec URL (an `az://` store, with its `storage_options`)."""
    fs, root = fsspec.core.url_to_fs(str(data_dir), **dict(storage_options or {}))
    folder = f"{root.rstrip('/')}/{split}"
    if not fs.isdir(folder):
        return []
    records: list[dict[str, Any]] = []
    for part in sorted(fs.glob(f"{folder}/*.parquet")):
        with fs.open(part, "rb") as handle:
            records.extend(pq.read_table(handle).to_pylist())
        if limit and len(records) >= limit:
            break
    return records[:limit] if limit else records


def features(
    task: str, tokenizer: Any, records: list[dict[str, Any]], args: Any, model_config: Any = None
) -> Dataset:
    """A tokenised dataset without padding (the collator pads each batch to its own longest)."""
    if not records:
        return Dataset.from_dict({})
    data = task_spec(task).code.features(tokenizer, records, args, model_config)
    dataset = Dataset.from_dict(data)
    return dataset.add_column("length", [len(ids) for ids in data["input_ids"]])
