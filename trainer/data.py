"""Reading a split dataset and turning records into model features, per task.

The generative tasks' inputs are built here for training and prediction alike, so both see the
same text: a summarization document with the model's task prefix (t5's `summarize: `), a chat
prompt rendered by the tokenizer's chat template with the generation prompt and truncated from
the left (the end of a conversation is what the reply answers), within the same `max_length`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import fsspec
import pyarrow.parquet as pq
from datasets import Dataset

from trainer.qa import train_features
from trainer.taskspec import task_spec

IGNORE = -100  # label of a token the loss skips (the prompt of a chat example, padding)


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


def task_prefix(model_config: Any) -> str:
    """The input prefix a model was pretrained with for summarization (t5: `summarize: `)."""
    params = getattr(model_config, "task_specific_params", None) or {}
    return str((params.get("summarization") or {}).get("prefix", ""))


def documents(records: Sequence[dict[str, Any]], prefix: str = "") -> list[str]:
    return [prefix + r["document"] for r in records]


def chat_prompt(tokenizer: Any, messages: Sequence[dict[str, Any]]) -> list[int]:
    """Token ids of a conversation up to the reply to come: the chat template's rendering with
    the generation prompt (a prompt the model continues with the assistant's reply)."""
    text = tokenizer.apply_chat_template(list(messages), tokenize=False, add_generation_prompt=True)
    return tokenizer(text, add_special_tokens=False)["input_ids"]


def chat_example(tokenizer: Any, messages: Sequence[dict[str, Any]]) -> tuple[list[int], list[int]]:
    """(prompt ids, reply ids) of a conversation whose last message is the assistant's reply; the
    reply ends with what the template closes an assistant turn with (the end token)."""
    prompt = tokenizer.apply_chat_template(
        list(messages[:-1]), tokenize=False, add_generation_prompt=True
    )
    whole = tokenizer.apply_chat_template(list(messages), tokenize=False)
    if not whole.startswith(prompt):
        raise ValueError(
            "the tokenizer's chat template renders a conversation differently from its prompt "
            "with add_generation_prompt: cannot tell the reply's tokens from the prompt's"
        )
    prompt_ids = tokenizer(prompt, add_special_tokens=False)["input_ids"]
    reply_ids = tokenizer(whole[len(prompt) :], add_special_tokens=False)["input_ids"]
    return prompt_ids, reply_ids


def truncate_prompt(tokenizer: Any, ids: list[int], budget: int) -> list[int]:
    """At most `budget` ids of a prompt, cut from the left so the end of the conversation stays;
    a leading start token (<|begin_of_text|>, [CLS]) is kept in front."""
    if len(ids) <= budget:
        return ids
    starts = {tokenizer.bos_token_id, tokenizer.cls_token_id} - {None}
    if ids and ids[0] in starts and budget > 1:
        return [ids[0], *ids[len(ids) - budget + 1 :]]
    return ids[len(ids) - budget :]


def chat_features(
    tokenizer: Any, records: Sequence[dict[str, Any]], max_length: int, max_reply: int
) -> dict[str, list[list[int]]]:
    """Input ids and labels of chat records: the loss is on the reply's tokens only (the prompt's
    labels are IGNORE), the reply cut to `max_reply` tokens, the prompt to the rest of
    `max_length` from the left."""
    data: dict[str, list[list[int]]] = {"input_ids": [], "attention_mask": [], "labels": []}
    for record in records:
        prompt, reply = chat_example(tokenizer, record["messages"])
        reply = reply[:max_reply]
        prompt = truncate_prompt(tokenizer, prompt, max_length - len(reply))
        data["input_ids"].append(prompt + reply)
        data["attention_mask"].append([1] * (len(prompt) + len(reply)))
        data["labels"].append([IGNORE] * len(prompt) + reply)
    return data


def summary_features(
    tokenizer: Any, records: Sequence[dict[str, Any]], args: Any, prefix: str
) -> dict[str, list[list[int]]]:
    """Encoder inputs (document, cut on the right) and summary labels; a leading start token the
    decoder is started with ([CLS] for the packaged encoder-decoder) is not a label."""
    data = dict(tokenizer(documents(records, prefix), truncation=True, max_length=args.max_length))
    labels = tokenizer(
        text_target=[r["summary"] for r in records],
        truncation=True,
        max_length=args.max_target_length,
    )["input_ids"]
    start = tokenizer.cls_token_id
    data["labels"] = [
        ids[1:] if start is not None and ids[:1] == [start] else ids for ids in labels
    ]
    return data


def features(
    task: str, tokenizer: Any, records: list[dict[str, Any]], args: Any, model_config: Any = None
) -> Dataset:
    """A tokenised dataset without padding (the collator pads each batch to its own longest)."""
    if not records:
        return Dataset.from_dict({})
    kind = task_spec(task).kind
    if kind == "span":
        data = train_features(tokenizer, records, args.max_length, args.doc_stride)
    elif kind == "seq2seq":
        data = summary_features(tokenizer, records, args, task_prefix(model_config))
    else:
        data = chat_features(tokenizer, records, args.max_length, args.max_target_length)
    dataset = Dataset.from_dict(data)
    return dataset.add_column("length", [len(ids) for ids in data["input_ids"]])
