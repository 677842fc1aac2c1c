"""Secret keys kept in a store but outside every dataset: `<store>/keys/<name>`.

A key is 32 random bytes written once, hex encoded, readable by its owner only (mode 0600 on a
local store; on Blob storage, by whoever can read the container). An environment variable, when
set, takes precedence, so a team can hold the key in a vault and share it across stores.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import tempfile

from platforms.store import Store

KEY_BYTES = 32


def secret_key(store: Store, name: str, env: str | None = None) -> bytes:
    """The key `name`: from `env` when set, else the store's (created on first use)."""
    if env and (value := os.environ.get(env)):
        if len(value) < 16:
            raise ValueError(f"{env} holds a key of {len(value)} characters; use at least 16")
        return value.encode()
    uri = store.path("keys", name)
    if not store.exists(uri):
        _create(store, uri, secrets.token_hex(KEY_BYTES))
    return bytes.fromhex(store.read_text(uri).strip())


def key_id(key: bytes) -> str:
    """A short public name for a key (which key, never the key): HMAC of a constant."""
    return hmac.new(key, b"tunegate key id", hashlib.sha256).hexdigest()[:16]


def _create(store: Store, uri: str, text: str) -> None:
    """Write the key unless another process already did (then theirs is kept)."""
    if not store.is_local:  # two first runs racing on one blob store: the last write wins
        store.write_text_atomic(uri, text)
        return
    parent = os.path.dirname(uri)
    os.makedirs(parent, mode=0o700, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=parent, prefix=".tmp-")  # mode 0600
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.link(tmp, uri)  # atomic and create-only: readers never see a partial key
    except FileExistsError:
        pass
    finally:
        os.unlink(tmp)
