"""Sentence embeddings of requests by the packaged MiniLM encoder, for the embedding drift
signal (tasks/drift.py)."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any

EMBEDDING_TOKENS = 128  # requests are cut to this many tokens before they are embedded
EMBEDDING_DIMS = 384  # the packaged MiniLM's hidden size


@cache
def _encoder() -> tuple[Any, Any]:
    from transformers import AutoModel, AutoTokenizer

    from trainer.modeling import resolve_model
    from trainer.taskspec import PACKAGED_ENCODER

    path = resolve_model(PACKAGED_ENCODER)
    model = AutoModel.from_pretrained(path, local_files_only=True)
    model.eval()
    return AutoTokenizer.from_pretrained(path, local_files_only=True), model


def embed(texts: Sequence[str], batch_size: int = 64) -> Any:
    """Mean-pooled, unit-length sentence embeddings of `texts` by the packaged MiniLM encoder
    (all-MiniLM-L6-v2, a sentence encoder), each cut to EMBEDDING_TOKENS tokens."""
    import numpy as np
    import torch

    tokenizer, model = _encoder()
    out = []
    with torch.inference_mode():
        for start in range(0, len(texts), batch_size):
            batch = tokenizer(
                list(texts[start : start + batch_size]),
                padding=True,
                truncation=True,
                max_length=EMBEDDING_TOKENS,
                return_tensors="pt",
            )
            hidden = model(**batch).last_hidden_state
            mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1)
            out.append(torch.nn.functional.normalize(pooled, dim=-1).numpy())
    return np.concatenate(out) if out else np.zeros((0, EMBEDDING_DIMS), dtype=np.float32)
