"""Sentence embeddings of requests by the packaged MiniLM encoder, for the embedding drift
signal (tasks/drift.py)."""

from __future__ import annotations

from collections import OrderedDict
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


_CACHE_LIMIT = 20_000  # texts whose embedding a process keeps (~30 MB)
_cache: OrderedDict[str, Any] = OrderedDict()


def embed(texts: Sequence[str], batch_size: int = 64) -> Any:
    """Mean-pooled, unit-length sentence embeddings of `texts` by the packaged MiniLM encoder
    (all-MiniLM-L6-v2, a sentence encoder), each cut to EMBEDDING_TOKENS tokens. A text is
    embedded once per process: a reference set measured against window after window (the
    monitor, the drift signal's chance estimate) costs its encoder passes once; the newest
    `_CACHE_LIMIT` texts are kept."""
    import numpy as np

    missing = [t for t in dict.fromkeys(texts) if t not in _cache]
    for start in range(0, len(missing), batch_size):
        batch = missing[start : start + batch_size]
        for text, vector in zip(batch, _encode(batch), strict=True):
            _cache[text] = vector
    for text in texts:
        _cache.move_to_end(text)
    out = np.stack([_cache[t] for t in texts]) if texts else None
    while len(_cache) > _CACHE_LIMIT:
        _cache.popitem(last=False)
    return out if out is not None else np.zeros((0, EMBEDDING_DIMS), dtype=np.float32)


def _encode(texts: list[str]) -> Any:
    """One batch through the encoder: unit-length mean-pooled vectors, float32."""
    import torch

    tokenizer, model = _encoder()
    with torch.inference_mode():
        batch = tokenizer(
            texts,
            padding=True,
            truncation=True,
            max_length=EMBEDDING_TOKENS,
            return_tensors="pt",
        )
        hidden = model(**batch).last_hidden_state
        mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
        pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1)
        return torch.nn.functional.normalize(pooled, dim=-1).numpy()
