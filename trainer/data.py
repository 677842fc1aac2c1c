"""Reading a split dataset and turning records into model features, per task."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
from datasets import Dataset

from trainer.qa import train_features
from trainer.taskspec import task_spec


def read_split(data_dir: str | Path, split: str, limit: int = 0) -> list[dict[str, Any]]:
    """Records of one split (train / validation / test) of a split dataset directory."""
    folder = Path(data_dir) / split
    if not folder.exists():
        return []
    records: list[dict[str, Any]] = []
    for part in sorted(folder.glob("*.parquet")):
        records.extend(pq.read_table(part).to_pylist())
    return records[:limit] if limit else records


def chat_text(record: dict[str, Any], tokenizer: Any) -> str:
    """One training text from a chat record: the tokenizer's chat template when it has one."""
    messages = record["messages"]
    if getattr(tokenizer, "chat_template", None):
        return tokenizer.apply_chat_template(messages, tokenize=False)
    return "\n".join(f"{m['role']}: {m['content']}" for m in messages)


def features(task: str, tokenizer: Any, records: list[dict[str, Any]], args: Any) -> Dataset:
    """A tokenised dataset without padding (the collator pads each batch to its own longest)."""
    if not records:
        return Dataset.from_dict({})
    kind = task_spec(task).kind
    if kind == "span":
        data = train_features(tokenizer, records, args.max_length, args.doc_stride)
    elif kind == "seq2seq":
        data = dict(
            tokenizer([r["document"] for r in records], truncation=True, max_length=args.max_length)
        )
        data["labels"] = tokenizer(
            text_target=[r["summary"] for r in records],
            truncation=True,
            max_length=args.max_target_length,
        )["input_ids"]
    else:
        data = dict(
            tokenizer(
                [chat_text(r, tokenizer) for r in records],
                truncation=True,
                max_length=args.max_length,
            )
        )
    dataset = Dataset.from_dict(data)
    return dataset.add_column("length", [len(ids) for ids in data["input_ids"]])
