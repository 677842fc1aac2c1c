"""Language modelling on raw text (the `text` kind): a decoder learns to continue documents.

Training reads each document as its tokens between the tokenizer's start and end tokens, cut
into windows of `max_length` tokens, the loss on every token. A prediction of a document
(evaluation) is what the model makes of it: its negative log-likelihood of every next token of
the document's first window, how many of those it ranked first (perplexity and token accuracy,
trainer/metrics/perplexity) and its greedy completion of the document's prompt
(`trainer.kinds.prompts.text_prompt`), which the endpoint answers a `{"prompt"}` request with.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from trainer.kinds import DEFAULT_BATCH_SIZE, Lengths, on_model_device
from trainer.kinds.causal import collator
from trainer.kinds.generation import IGNORE, generate, left_padded, truncate_prompt
from trainer.kinds.prompts import text_prompt
from trainer.metric_specs import lm_prediction

GENERATIVE = True
# Served in torch: evaluation scores a model by its token probabilities, which the exported
# decoding step of serving/onnx_generation.py does not give, so no exported runtime could be
# scored against the torch one.
EXPORTER = "none"

__all__ = ["collator"]  # the causal kind's: labels padded with IGNORE


def prepare_tokenizer(tokenizer: Any) -> Any:
    return tokenizer


def _ends(tokenizer: Any) -> tuple[list[int], list[int]]:
    """The ids a document starts and ends with: the tokenizer's start ([CLS], <s>) and end
    ([SEP], </s>) tokens, where it has them."""
    start = next(
        (t for t in (tokenizer.bos_token_id, tokenizer.cls_token_id) if t is not None), None
    )
    end = next((t for t in (tokenizer.eos_token_id, tokenizer.sep_token_id) if t is not None), None)
    return ([start] if start is not None else []), ([end] if end is not None else [])


def document_ids(tokenizer: Any, text: str) -> list[int]:
    """A document's token ids between its start and end tokens."""
    start, end = _ends(tokenizer)
    return [*start, *tokenizer(text, add_special_tokens=False)["input_ids"], *end]


def features(
    tokenizer: Any, records: Sequence[dict[str, Any]], args: Any, model_config: Any = None
) -> dict[str, list[list[int]]]:
    """Every document cut into windows of `max_length` tokens; a window's labels are its ids
    (the model shifts them: each token is learnt from the ones before it)."""
    data: dict[str, list[list[int]]] = {"input_ids": [], "attention_mask": [], "labels": []}
    for record in records:
        ids = document_ids(tokenizer, record["text"])
        for at in range(0, len(ids), args.max_length):
            window = ids[at : at + args.max_length]
            if len(window) < 2:  # nothing to learn: no token follows another
                continue
            data["input_ids"].append(window)
            data["attention_mask"].append([1] * len(window))
            data["labels"].append(list(window))
    return data


def completions(
    model: Any, tokenizer: Any, prompts: Sequence[str], lengths: Lengths, batch_size: int
) -> list[str]:
    """The greedy continuation of each prompt: its tokens after the start token, cut from the
    left to leave room for `max_new_tokens`, padded on the left."""
    start, _ = _ends(tokenizer)
    budget = lengths.max_length - lengths.max_new_tokens

    def batch(chunk: Sequence[dict[str, Any]]) -> dict[str, Any]:
        ids = [
            truncate_prompt(
                tokenizer,
                [*start, *tokenizer(r["prompt"], add_special_tokens=False)["input_ids"]],
                budget,
            )
            for r in chunk
        ]
        return left_padded(tokenizer, ids)

    return generate(
        model,
        tokenizer,
        [{"prompt": p} for p in prompts],
        batch,
        max_new_tokens=lengths.max_new_tokens,
        batch_size=batch_size,
        echoes_prompt=True,
    )


def token_counts(
    model: Any, tokenizer: Any, texts: Sequence[str], max_length: int, batch_size: int
) -> list[tuple[float, int, int]]:
    """(summed negative log-likelihood, tokens scored, tokens ranked first) of each document's
    first `max_length` tokens: every token after the first is scored given those before it."""
    counts: list[tuple[float, int, int]] = []
    for i in range(0, len(texts), batch_size):
        rows = [document_ids(tokenizer, t)[:max_length] for t in texts[i : i + batch_size]]
        batch = tokenizer.pad({"input_ids": rows}, return_tensors="pt")  # padded on the right
        batch = on_model_device(batch, model)
        logits = model(**batch).logits[:, :-1].float()
        targets = batch["input_ids"][:, 1:].masked_fill(batch["attention_mask"][:, 1:] == 0, IGNORE)
        nll = torch.nn.functional.cross_entropy(
            logits.transpose(1, 2), targets, ignore_index=IGNORE, reduction="none"
        ).double()
        scored = targets != IGNORE
        right = (logits.argmax(-1) == targets) & scored
        for row in range(len(rows)):
            counts.append((float(nll[row].sum()), int(scored[row].sum()), int(right[row].sum())))
    return counts


def predict(
    model: Any, tokenizer: Any, records: Sequence[dict[str, Any]], lengths: Lengths, batch_size: int
) -> list[str]:
    """Each document's prediction (`trainer.metric_specs.lm_prediction`): its token counts
    and the completion of its prompt."""
    texts = [r["text"] for r in records]
    counts = token_counts(model, tokenizer, texts, lengths.max_length, batch_size)
    completed = completions(model, tokenizer, [text_prompt(t) for t in texts], lengths, batch_size)
    return [
        lm_prediction(c, nll, n, right)
        for c, (nll, n, right) in zip(completed, counts, strict=True)
    ]


def respond(
    model: Any, tokenizer: Any, records: Sequence[dict[str, Any]], key: str, lengths: Lengths
) -> list[dict[str, Any]]:
    """The completion of each request's prompt."""
    prompts = [r["prompt"] for r in records]
    return [{key: c} for c in completions(model, tokenizer, prompts, lengths, DEFAULT_BATCH_SIZE)]
