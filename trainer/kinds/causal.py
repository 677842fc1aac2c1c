"""Chat (supervised fine-tuning of a decoder on conversations; the `causal` kind).

A prompt is the conversation up to the reply, rendered by the tokenizer's chat template with the
generation prompt and cut from the left (the end of a conversation is what the reply answers),
within the same `max_length` for training and prediction. The loss is on the assistant's replies
only: every reply of the conversation that survives the cut, not just the last, as multi-turn
supervised fine-tuning does (TRL's `assistant_only_loss`). A conversation of four replies teaches
four replies for the price of one forward pass: on Schema-Guided Dialogue (docs/benchmarks.md),
after the same 150 steps, ROUGE-L of the last reply 16.5 against 14.3 with the last reply's loss
alone (echoing the user: 14.4).
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Sequence
from typing import Any

from transformers import DataCollatorForSeq2Seq

from trainer.kinds import DEFAULT_BATCH_SIZE, Lengths
from trainer.kinds.generation import IGNORE, generate, left_padded, truncate_prompt

GENERATIVE = True
EXPORTER = "generative"  # the graphs of a decoding step (serving/onnx_generation.py)


def prepare_tokenizer(tokenizer: Any) -> Any:
    """The tokenizer with a chat template (its own, or `chat_template`)."""
    return with_chat_template(tokenizer)


def chat_template(tokenizer: Any) -> str:
    """A chat template for a tokenizer that has none (MiniLM's, GPT-2's): `role: content` lines
    after the start token, each assistant turn closed by the end token, and `assistant:` as the
    generation prompt, so a prompt never ends with the end token (for BERT that is [SEP])."""
    start = tokenizer.bos_token or tokenizer.cls_token or ""
    end = tokenizer.eos_token or tokenizer.sep_token
    if end is None:
        raise ValueError("the tokenizer has no end-of-sequence token to close a reply with")
    # Text is written through {{ }} only: transformers renders templates with trim_blocks, which
    # would drop a newline that follows a {% %} tag.
    return (
        "{% for m in messages %}{% if loop.first %}{{ '" + start + "' }}{% endif %}"
        "{{ m['role'] + ': ' + m['content'] }}"
        "{% if m['role'] == 'assistant' %}{{ ' " + end + "' }}{% endif %}{{ '\\n' }}{% endfor %}"
        "{% if add_generation_prompt %}{{ 'assistant:' }}{% endif %}"
    )


def with_chat_template(tokenizer: Any) -> Any:
    """The tokenizer, given `chat_template` when it has none (saved with it after training)."""
    if not getattr(tokenizer, "chat_template", None):
        tokenizer.chat_template = chat_template(tokenizer)
    return tokenizer


def chat_prompt(tokenizer: Any, messages: Sequence[dict[str, Any]]) -> list[int]:
    """Token ids of a conversation up to the reply to come: the chat template's rendering with
    the generation prompt (a prompt the model continues with the assistant's reply)."""
    text = tokenizer.apply_chat_template(list(messages), tokenize=False, add_generation_prompt=True)
    return tokenizer(text, add_special_tokens=False)["input_ids"]


def chat_segments(
    tokenizer: Any, messages: Sequence[dict[str, Any]]
) -> list[tuple[list[int], list[int]]]:
    """The conversation's token ids as (text before a reply, the reply) pairs, one per assistant
    message; the last message must be the assistant's. Each reply's text is what the chat
    template adds to the conversation up to it with the generation prompt. Where the template
    renders earlier turns otherwise once a later one follows (some drop past replies'
    reasoning), those replies are read as the later prompt renders them, unlearnt: what training
    reads is always what prediction's prompt holds."""
    if not messages or messages[-1]["role"] != "assistant":
        raise ValueError("a chat record's last message must be the assistant's reply")
    ids = functools.partial(tokenizer, add_special_tokens=False)
    pairs: list[tuple[list[int], list[int]]] = []
    done = ""  # the rendering so far, up to the end of the last reply split off
    for i, message in enumerate(messages):
        if message["role"] != "assistant":
            continue
        prompt = tokenizer.apply_chat_template(
            list(messages[:i]), tokenize=False, add_generation_prompt=True
        )
        whole = tokenizer.apply_chat_template(list(messages[: i + 1]), tokenize=False)
        if not whole.startswith(prompt):
            if i == len(messages) - 1:
                raise ValueError(
                    "the tokenizer's chat template renders a conversation differently from its "
                    "prompt with add_generation_prompt: cannot tell the reply's tokens from the "
                    "prompt's"
                )
            continue
        if not prompt.startswith(done):  # earlier replies now rendered otherwise: prompt only
            pairs, done = [], ""
        pairs.append(
            (ids(prompt[len(done) :])["input_ids"], ids(whole[len(prompt) :])["input_ids"])
        )
        done = whole
    return pairs


def features(
    tokenizer: Any, records: Sequence[dict[str, Any]], args: Any, model_config: Any = None
) -> dict[str, list[list[int]]]:
    return chat_features(
        tokenizer, records, args.max_length, args.max_target_length, args.earlier_replies
    )


def chat_features(
    tokenizer: Any,
    records: Sequence[dict[str, Any]],
    max_length: int,
    max_reply: int,
    earlier_replies: float = 1.0,
) -> dict[str, list[list[int]]]:
    """Input ids and labels of chat records: the loss is on the assistant's replies only (every
    other token's label is IGNORE), the last reply cut to `max_reply` tokens (what prediction
    generates at most; earlier ones stay whole, as a prompt holds them), the conversation to
    `max_length` from the left."""
    data: dict[str, list[list[int]]] = {"input_ids": [], "attention_mask": [], "labels": []}
    for record in records:
        ids: list[int] = []
        labels: list[int] = []
        pairs = chat_segments(tokenizer, record["messages"])
        for n, (before, reply) in enumerate(pairs, 1):
            last = n == len(pairs)
            reply = reply[:max_reply] if last else reply
            learnt = last or _picked(record["id"], n, earlier_replies)
            ids += before + reply
            labels += [IGNORE] * len(before) + (reply if learnt else [IGNORE] * len(reply))
        kept = truncate_prompt(tokenizer, ids, max_length)
        labels = labels[len(labels) - len(kept) :]
        if len(kept) < len(ids):
            labels[0] = IGNORE  # a first token is never predicted (it may be the start token)
        data["input_ids"].append(kept)
        data["attention_mask"].append([1] * len(kept))
        data["labels"].append(labels)
    return data


def _picked(record_id: Any, n: int, share: float) -> bool:
    """Whether a conversation's `n`th reply is among the `share` of earlier replies learnt: by a
    hash of the record's id and `n`, so the same records give the same features."""
    digest = hashlib.sha256(f"{record_id}\0{n}".encode()).digest()
    return int.from_bytes(digest[:8], "big") < share * 2**64


def collator(tokenizer: Any, model: Any) -> Any:
    """Pads the labels (the replies' tokens; the rest is ignored) with IGNORE."""
    return DataCollatorForSeq2Seq(tokenizer, label_pad_token_id=IGNORE)


def chat_batch(tokenizer: Any, records: Sequence[dict[str, Any]], budget: int) -> dict[str, Any]:
    """Prompts of chat records (every message but the reference reply), each cut from the left
    to `budget` tokens, padded on the left so every row's next token is generated after its own
    last prompt token."""
    prompts = [
        truncate_prompt(tokenizer, chat_prompt(tokenizer, r["messages"][:-1]), budget)
        for r in records
    ]
    return left_padded(tokenizer, prompts)


def predict(
    model: Any, tokenizer: Any, records: Sequence[dict[str, Any]], lengths: Lengths, batch_size: int
) -> list[str]:
    """The reply to each conversation but its last message (the reference reply)."""
    budget = lengths.max_length - lengths.max_new_tokens
    return generate(
        model,
        tokenizer,
        records,
        lambda chunk: chat_batch(tokenizer, chunk, budget),
        max_new_tokens=lengths.max_new_tokens,
        batch_size=batch_size,
        echoes_prompt=True,
    )


def respond(
    model: Any, tokenizer: Any, records: Sequence[dict[str, Any]], key: str, lengths: Lengths
) -> list[dict[str, Any]]:
    """The reply to each request's conversation: an empty assistant turn stands for the reply
    to come (`predict` drops the last message, the reference reply when evaluating)."""
    prompts = [
        {"messages": [*r["messages"], {"role": "assistant", "content": ""}]} for r in records
    ]
    replies = predict(model, tokenizer, prompts, lengths, DEFAULT_BATCH_SIZE)
    return [{key: r} for r in replies]
