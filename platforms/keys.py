"""Secret keys: 32 random bytes written once, hex encoded, readable by their owner only.

- `secret_key`: kept in a store but outside every dataset (`<store>/keys/<name>`), for what only
  has to stay out of the data (the surrogate salt);
- `private_key`: kept outside the store (a file in the user's config folder), for what must not be
  forgeable by whoever can write the store (approval signatures) or read by whoever can read it
  (`RawCipher`, derived from it, encrypts the raw records kept at rest).
An environment variable, when set, takes precedence over either, so a team can hold a key in a
vault and share it across machines.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from serving.auth import owner_only

KEY_BYTES = 32
ENCRYPTED = b"TGRAW1\n"  # how an encrypted file starts (a Parquet file starts with PAR1)
_ID_CHARS = 16  # key_id's length
_NONCE = 12


class KeyStore(Protocol):
    """What `secret_key` needs of a store (platforms/store.py's `Store`)."""

    is_local: bool

    def path(self, *parts: str) -> str: ...
    def exists(self, uri: str) -> bool: ...
    def read_text(self, uri: str) -> str: ...
    def write_text_atomic(self, uri: str, text: str) -> None: ...


def secret_key(store: KeyStore, name: str, env: str | None = None) -> bytes:
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


def _create(store: KeyStore, uri: str, text: str) -> None:
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


class KeyMismatch(ValueError):
    """An encrypted file that cannot be read: no key, another key, or edited bytes."""


@dataclass(frozen=True)
class RawCipher:
    """Encrypts whole files (AES-256-GCM, a random nonce per file) with a key derived from the
    store's signing key (HKDF, so the signing key itself never encrypts and never travels to a
    worker). A file it wrote starts with `ENCRYPTED` and the signing key's `key_id`, so a reader
    without the key (or with another) is told which key the file needs."""

    key: bytes = field(repr=False)
    key_id: str  # the signing key's public name (`key_id`)

    @classmethod
    def of(cls, signing_key: bytes) -> RawCipher:
        derived = HKDF(
            algorithm=hashes.SHA256(), length=32, salt=None, info=b"tunegate raw records"
        ).derive(signing_key)
        return cls(derived, key_id(signing_key))

    def encrypt(self, data: bytes) -> bytes:
        header = ENCRYPTED + self.key_id.encode("ascii")
        nonce = secrets.token_bytes(_NONCE)
        return header + nonce + AESGCM(self.key).encrypt(nonce, data, header)

    def decrypt(self, data: bytes, where: str) -> bytes:
        """The plain bytes of an encrypted file read from `where`."""
        needed = encrypted_with(data)
        if needed != self.key_id:
            raise KeyMismatch(needs_key(where, needed, f"this store's key is {self.key_id}"))
        start = len(ENCRYPTED) + _ID_CHARS
        nonce, body = data[start : start + _NONCE], data[start + _NONCE :]
        try:
            return AESGCM(self.key).decrypt(nonce, body, data[:start])
        except InvalidTag:
            raise KeyMismatch(
                f"{where} does not decrypt with key {self.key_id} (its bytes were changed)"
            ) from None


def is_encrypted(data: bytes) -> bool:
    return data.startswith(ENCRYPTED)


def encrypted_with(data: bytes) -> str:
    """The `key_id` of the signing key an encrypted file needs."""
    return data[len(ENCRYPTED) : len(ENCRYPTED) + _ID_CHARS].decode("ascii", "replace")


def needs_key(where: str, needed: str, why: str) -> str:
    """The error of an encrypted file read without its key: which key, and where it is set."""
    return (
        f"{where} holds raw records encrypted with the store's signing key {needed} (its key "
        f"id), and {why}: set that key as tunegate's approval key (approval.key_env, "
        "approval.key_block or approval.key_file, default ~/.config/tunegate/approval.key) "
        "and run again"
    )
