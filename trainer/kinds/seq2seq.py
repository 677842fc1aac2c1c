"""Summarization with an encoder-decoder (the `seq2seq` kind).

The encoder reads the document with the model's task prefix (t5's `summarize: `), cut on the
right to `max_length`, for training and prediction alike; the decoder learns and generates the
summary.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from transformers import DataCollatorForSeq2Seq

from trainer.kinds import DEFAULT_BATCH_SIZE, Lengths
from trainer.kinds.generation import generate

GENERATIVE = True
EXPORTER = "generative"  # the graphs of a decoding step (serving/onnx_generation.py)


def task_prefix(model_config: Any) -> str:
    """The input prefix a model was pretrained with for summarization (t5: `summarize: `)."""
    params = getattr(model_config, "task_specific_params", None) or {}
    return str((params.get("summarization") or {}).get("prefix", ""))


def documents(records: Sequence[dict[str, Any]], prefix: str = "") -> list[str]:
    return [prefix + r["document"] for r in records]


def prepare_tokenizer(tokenizer: Any) -> Any:
    return tokenizer


def features(
    tokenizer: Any, records: Sequence[dict[str, Any]], args: Any, model_config: Any = None
) -> dict[str, list[list[int]]]:
    return summary_features(tokenizer, records, args, task_prefix(model_config))


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


def collator(tokenizer: Any, model: Any) -> Any:
    return DataCollatorForSeq2Seq(tokenizer, model=model)


def predict(
    model: Any, tokenizer: Any, records: Sequence[dict[str, Any]], lengths: Lengths, batch_size: int
) -> list[str]:
    prefix = task_prefix(model.config)
    return generate(
        model,
        tokenizer,
        records,
        lambda chunk: tokenizer(
            documents(chunk, prefix),
            truncation=True,
            max_length=lengths.max_length,
            padding=True,
            return_tensors="pt",
        ),
        max_new_tokens=lengths.max_new_tokens,
        batch_size=batch_size,
        echoes_prompt=False,
    )


def respond(
    model: Any, tokenizer: Any, records: Sequence[dict[str, Any]], key: str, lengths: Lengths
) -> list[dict[str, Any]]:
    return [{key: s} for s in predict(model, tokenizer, records, lengths, DEFAULT_BATCH_SIZE)]
