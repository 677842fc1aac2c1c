"""Tiny models and datasets built here, for the trainer's tests and the training backend's.

A plain helper module (not a test module), so that tests/platforms/test_training_backend.py can use it too.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from transformers import (
    BertConfig,
    BertModel,
    GPT2Config,
    GPT2LMHeadModel,
    T5Config,
    T5ForConditionalGeneration,
)

from tasks.records import TaskType
from trainer.args import PACKAGED_MODEL
from trainer.modeling import load_tokenizer
from trainer.taskspec import task_spec


def qa_record(i: int) -> dict:
    """Extractive-QA record `q{i}`: how many days a delivery took, the answer in its context."""
    context = f"Order {i} left the warehouse in Porto and arrived after {i % 5 + 2} days."
    answer = f"{i % 5 + 2} days"
    return {
        "id": f"q{i}",
        "question": "How long did the delivery take?",
        "context": context,
        "answers": {"text": [answer], "answer_start": [context.index(answer)]},
    }


def summarization_record(i: int) -> dict:
    """Summarization record `s{i}`: a one-line ticket and its summary."""
    return {
        "id": f"s{i}",
        "document": f"Ticket {i}: the VPN dropped every hour for {i % 3 + 1} days.",
        "summary": f"VPN dropped for {i % 3 + 1} days.",
    }


def chat_record(i: int) -> dict:
    """Chat record `c{i}`: one user turn, one assistant turn."""
    return {
        "id": f"c{i}",
        "messages": [
            {"role": "user", "content": f"Reset token {i}?"},
            {"role": "assistant", "content": "Done, it is reset."},
        ],
    }


def text_record(i: int) -> dict:
    """Text-generation record `t{i}`: a short logbook passage."""
    return {
        "id": f"t{i}",
        "text": f"The day at station {i} began with a low grey sky. The wind was light.",
    }


def write_dataset(tmp: Path, task: TaskType, make: Callable[[int], dict], n: int = 24) -> Path:
    """A split dataset in `tmp/data` as the split stage writes one: `n` train records and 6
    validation records made by `make`, one parquet file each. Returns `tmp/data`."""
    for split, rows in {"train": range(n), "validation": range(n, n + 6)}.items():
        (tmp / "data" / split).mkdir(parents=True, exist_ok=True)
        table = pa.Table.from_pylist([make(i) for i in rows], schema=task_spec(task).record_schema)
        pq.write_table(table, tmp / "data" / split / "part-00000.parquet")
    return tmp / "data"


def tiny_model(tmp: Path, kind: str) -> Path:
    """A randomly initialised 2-layer `bert`, `t5` or (any other kind) GPT-2 with the packaged
    model's tokenizer, saved in `tmp/kind`. Returns that directory."""
    tokenizer = load_tokenizer(PACKAGED_MODEL)
    size = {"vocab_size": tokenizer.vocab_size}
    if kind == "bert":
        model = BertModel(
            BertConfig(
                **size,
                hidden_size=32,
                num_hidden_layers=2,
                num_attention_heads=2,
                intermediate_size=64,
            )
        )
    elif kind == "t5":
        model = T5ForConditionalGeneration(
            T5Config(
                **size,
                d_model=32,
                d_ff=64,
                d_kv=16,
                num_layers=2,
                num_heads=2,
                decoder_start_token_id=0,
            )
        )
    else:
        model = GPT2LMHeadModel(GPT2Config(**size, n_embd=32, n_layer=2, n_head=2, n_positions=256))
    out = tmp / kind
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out


def chat_model(folder: Path, base: str, writes: str | None = None) -> Path:
    """A tiny GPT-2 saved as a trained chat model of `base` (4 new tokens a reply): random, or
    with `writes`, one that answers every prompt with `writes` (a token of its own) over and over
    (its last layer norm gives every position the same output, that token's embedding): a model
    that writes, say, an e-mail address no input held. Returns `folder`."""
    import torch

    from trainer.kinds.causal import with_chat_template
    from trainer.modeling import write_model_info

    tokenizer = with_chat_template(load_tokenizer(PACKAGED_MODEL))
    if writes:
        tokenizer.add_tokens([writes])
    config = GPT2Config(
        vocab_size=len(tokenizer),
        n_embd=16,
        n_layer=1,
        n_head=2,
        n_positions=128,
        bos_token_id=tokenizer.cls_token_id,
        eos_token_id=tokenizer.sep_token_id,
    )
    model = GPT2LMHeadModel(config)
    if writes:
        target = tokenizer.convert_tokens_to_ids(writes)
        with torch.no_grad():
            model.transformer.wte.weight[target] = 1.0
            model.transformer.ln_f.weight.zero_()
            model.transformer.ln_f.bias.copy_(model.transformer.wte.weight[target])
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    write_model_info(folder, "causal-lm", base, False, max_length=64, max_new_tokens=4)
    return folder
