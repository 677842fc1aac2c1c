"""What the generative kinds share: prompts cut from the left and padded on the left, and greedy
generation in batches."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch

from trainer.kinds import on_model_device

IGNORE = -100  # label of a token the loss skips (a chat example's prompt, padding)


def truncate_prompt(tokenizer: Any, ids: list[int], budget: int) -> list[int]:
    """At most `budget` ids of a prompt, cut from the left so the end of the conversation stays;
    a leading start token (<|begin_of_text|>, [CLS]) is kept in front."""
    if len(ids) <= budget:
        return ids
    starts = {tokenizer.bos_token_id, tokenizer.cls_token_id} - {None}
    if ids and ids[0] in starts and budget > 1:
        return [ids[0], *ids[len(ids) - budget + 1 :]]
    return ids[len(ids) - budget :]


def left_padded(tokenizer: Any, prompts: list[list[int]]) -> dict[str, torch.Tensor]:
    """Prompts padded on the left, so every row's next token is generated after its own last
    prompt token (the tokenizer's own padding side is left as it was)."""
    side = tokenizer.padding_side
    tokenizer.padding_side = "left"
    try:
        return tokenizer.pad({"input_ids": prompts}, return_tensors="pt")
    finally:
        tokenizer.padding_side = side


def generate(
    model: Any,
    tokenizer: Any,
    records: Sequence[dict[str, Any]],
    inputs: Callable[[Sequence[dict[str, Any]]], dict[str, torch.Tensor]],
    *,
    max_new_tokens: int,
    batch_size: int,
    echoes_prompt: bool,
) -> list[str]:
    """The greedy answer to each record, stripped: `inputs` makes a batch's model inputs; a
    model that `echoes_prompt` (a decoder) returns its prompt before the answer, cut off here."""
    outputs: list[str] = []
    for i in range(0, len(records), batch_size):
        batch = on_model_device(inputs(records[i : i + batch_size]), model)
        generated = model.generate(**batch, max_new_tokens=max_new_tokens, do_sample=False)
        if echoes_prompt:
            generated = generated[:, batch["input_ids"].shape[1] :]
        outputs += tokenizer.batch_decode(generated.cpu(), skip_special_tokens=True)
    return [o.strip() for o in outputs]
