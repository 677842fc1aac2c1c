"""Sentence embeddings for the embedding drift signal (tasks/embedding.py): a text goes through the
encoder once per process, however many windows it is measured in."""

from __future__ import annotations

from collections import OrderedDict

import numpy as np
import pytest

from tasks import embedding


def test_a_text_is_encoded_once_and_its_vector_is_the_same_in_every_call(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    encoded: list[list[str]] = []
    real = embedding._encode
    monkeypatch.setattr(embedding, "_encode", lambda batch: encoded.append(batch) or real(batch))
    monkeypatch.setattr(embedding, "_cache", OrderedDict())
    monkeypatch.setattr(embedding, "_CACHE_LIMIT", 3)

    first = embedding.embed(
        ["How do I reset my VPN token?", "Where is my order?", "How do I reset my VPN token?"]
    )
    second = embedding.embed(["Where is my order?", "Can I change the delivery address?"])

    assert encoded == [
        ["How do I reset my VPN token?", "Where is my order?"],
        ["Can I change the delivery address?"],
    ]
    assert first.shape == (3, embedding.EMBEDDING_DIMS) and second.shape == (
        2,
        embedding.EMBEDDING_DIMS,
    )
    assert np.array_equal(first[0], first[2]) and np.array_equal(first[1], second[0])
    assert np.allclose(np.linalg.norm(second, axis=1), 1.0, atol=1e-5)
    assert embedding.embed([]).shape == (0, embedding.EMBEDDING_DIMS)

    embedding.embed(["A fourth question?"])  # past the limit: the least recently used goes
    assert list(embedding._cache) == [
        "Where is my order?",
        "Can I change the delivery address?",
        "A fourth question?",
    ]
