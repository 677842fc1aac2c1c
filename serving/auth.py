"""The endpoint key: generated once, kept in a file only its owner can read, compared in constant time.

The key itself is never logged or put in an error message; messages name the key file instead.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import stat
from pathlib import Path


def load_or_create_key(key_file: Path) -> str:
    """The key in `key_file`, creating the file (mode 0600) with a new random key when missing."""
    key_file.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(key_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return _read_key(key_file)
    with os.fdopen(fd, "w") as f:
        f.write(secrets.token_urlsafe(32) + "\n")
    return _read_key(key_file)


def admin_key_file(key_file: Path) -> Path:
    """Where the admin key of the endpoint whose scoring key is `key_file` lives (beside it)."""
    return key_file.with_name(f"admin-{key_file.name}")


def write_key(key_file: Path, key: str) -> Path:
    """Keep a key someone else issued (an Azure ML endpoint's) in a file only its owner reads."""
    key_file.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(key_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(key + "\n")
    os.chmod(key_file, 0o600)  # an existing file keeps its old mode through O_CREAT
    return key_file


def read_key(key_file: Path) -> str:
    """The key of a running endpoint, for clients."""
    if not key_file.is_file():
        raise ValueError(
            f"no key file at {key_file}: pass the --key-file the endpoint was started with"
        )
    return _read_key(key_file)


def owner_only(key_file: Path) -> None:
    """Refuse a key file that others can read or write: whoever reads a key can use it."""
    mode = stat.S_IMODE(key_file.stat().st_mode)
    if mode & 0o077:
        raise ValueError(
            f"key file {key_file} is readable or writable by others (mode {mode:04o}): run "
            f"chmod 600 {key_file} (and check who could have read it)"
        )


def _read_key(key_file: Path) -> str:
    owner_only(key_file)
    key = key_file.read_text().strip()
    if len(key) < 16:
        raise ValueError(f"key file {key_file} holds no usable key: delete it to generate one")
    return key


def bearer_matches(authorization: str | None, key: str) -> bool:
    """Whether an Authorization header carries `Bearer <key>`, compared in constant time."""
    if not authorization:
        return False
    scheme, _, token = authorization.partition(" ")
    return scheme.lower() == "bearer" and secrets.compare_digest(
        token.strip().encode(), key.encode()
    )


IDENTITY_PATH = "/health/identity"


def identity_proof(key: str, nonce: str) -> str:
    """What only an endpoint holding `key` can answer to a client's random `nonce`: a client
    checks it before it sends the key, so a key never goes to whatever else answers on a port
    its endpoint once had."""
    message = b"tunegate endpoint identity:" + nonce.encode()
    return hmac.new(key.encode(), message, hashlib.sha256).hexdigest()
