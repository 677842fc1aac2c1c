"""Content hashes: the one SHA-256 of text and JSON, keys made of hashes, and the
order-independent hash of a dataset's rows.

A dataset's key (where it lives) and content hash (what it holds) are built from these, so two
runs with the same inputs and config find each other's work whatever machine or worker order.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from typing import Any

_HASH_MOD = 2**256


def sha256_text(text: str) -> str:
    """Hex SHA-256 of a string: the one hash used for keys, records and configs."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def stable_json(value: Any) -> str:
    """JSON with sorted keys and no whitespace, so equal values always hash equally."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def combine_hashes(parts: Iterable[str]) -> str:
    """One key from several hashes, order-sensitive (inputs, then config)."""
    return sha256_text("\n".join(parts))


class MultisetHash:
    """An order-independent hash of a set of rows: the sum of their SHA-256 values mod 2**256.

    Partitions hash their own rows and the sums add up, so the content hash of a dataset does not
    depend on how it was partitioned or in which order workers finished.
    """

    def __init__(self, value: int = 0) -> None:
        self.value = value % _HASH_MOD

    def add(self, row_hash: str) -> None:
        self.value = (self.value + int(row_hash, 16)) % _HASH_MOD

    def merge(self, other: MultisetHash) -> None:
        self.value = (self.value + other.value) % _HASH_MOD

    def hexdigest(self) -> str:
        return f"{self.value:064x}"
