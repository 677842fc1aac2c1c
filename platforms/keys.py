"""Secret keys: 32 random bytes written once, hex encoded, readable by their owner only.

- `secret_key`: kept in a store but outside every dataset (`<store>/keys/<name>`), for what only
  has to stay out of the data (the surrogate salt);
- `private_key`: kept outside the store (a file in the user's config folder), for what must not be
  forgeable by whoever can write the store (approval signatures).
An environment variable, when set, takes precedence over either, so a team can hold a key in a
vault and share it across machines.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import tempfile
from pathlib import Path

from platforms.store import Store
from serving.auth import owner_only

KEY_BYTES = 32


def secret_key(store: Store, name: str, env: str | None = None) -> bytes:
    """The key `name`: from `env` when set, else the store's (created on first use)."""
    if env and (value := os.environ.get(env)):
        return _checked(env, value)
    uri = store.path("keys", name)
    if not store.exists(uri):
        _create(store, uri, secrets.token_hex(KEY_BYTES))
    return _from_hex(store.read_text(uri), uri)


def private_key(path: str | os.PathLike[str], env: str | None = None) -> bytes:
    """The key at `path` (`~` expanded; created 0600 on first use), or from `env` when set."""
    if env and (value := os.environ.get(env)):
        return _checked(env, value)
    file = os.path.expanduser(os.fspath(path))
    if not os.path.exists(file):
        _create_local(file, secrets.token_hex(KEY_BYTES))
    owner_only(Path(file))
    with open(file, encoding="utf-8") as f:
        return _from_hex(f.read(), file)


def _from_hex(text: str, where: str) -> bytes:
    try:
        key = bytes.fromhex(text.strip())
    except ValueError:
        key = b""
    if len(key) < 16:
        raise ValueError(
            f"{where} holds no usable key (it was edited or truncated): restore it, or delete it "
            "to make a new one (what the old key signed or keyed then no longer matches)"
        )
    return key


def _checked(env: str, value: str) -> bytes:
    if len(value) < 16:
        raise ValueError(f"{env} holds a key of {len(value)} characters; use at least 16")
    return value.encode()


def key_id(key: bytes) -> str:
    """A short public name for a key (which key, never the key): HMAC of a constant."""
    return hmac.new(key, b"tunegate key id", hashlib.sha256).hexdigest()[:16]


def _create(store: Store, uri: str, text: str) -> None:
    """Write the key unless another process already did (then theirs is kept)."""
    if not store.is_local:  # two first runs racing on one blob store: the last write wins
        store.write_text_atomic(uri, text)
        return
    _create_local(uri, text)


def _create_local(path: str, text: str) -> None:
    parent = os.path.dirname(path)
    os.makedirs(parent, mode=0o700, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=parent, prefix=".tmp-")  # mode 0600
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.link(tmp, path)  # atomic and create-only: readers never see a partial key
    except FileExistsError:
        pass
    finally:
        os.unlink(tmp)
