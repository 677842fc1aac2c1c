"""SSH signatures of approval decisions, in OpenSSH's own format (`ssh-keygen -Y sign`, SSHSIG).

A reviewer signs a decision with the SSH key they already have (Ed25519 or ECDSA P-256), from
its file or through ssh-agent; the signature is the armored `-----BEGIN SSH SIGNATURE-----`
block `ssh-keygen -Y sign -n tunegate-approval` would write, so an auditor can check a record
with OpenSSH alone (`ssh-keygen -Y verify`, the reviewers file as its allowed signers). The
cryptography is the `cryptography` library's; this module only frames it as PROTOCOL.sshsig
says. Returns and raises: `sign_*` give the armored text, `verify` gives the public key that
signed (raising `BadSignature` saying why not), `fingerprint` gives `SHA256:...` as
`ssh-keygen -l` prints it.
"""

from __future__ import annotations

import base64
import hashlib
import os
import socket
import struct
from collections.abc import Callable
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519
from cryptography.hazmat.primitives.asymmetric.utils import (
    decode_dss_signature,
    encode_dss_signature,
)

NAMESPACE = "tunegate-approval"
KEY_TYPES = ("ssh-ed25519", "ecdsa-sha2-nistp256")
PASSPHRASE_ENV = "TUNEGATE_KEY_PASSPHRASE"
_MAGIC = b"SSHSIG"
_HASH = "sha512"
_BEGIN, _END = "-----BEGIN SSH SIGNATURE-----", "-----END SSH SIGNATURE-----"
_AGENT_LIST_REQUEST, _AGENT_LIST_RESPONSE = 11, 12
_AGENT_SIGN_REQUEST, _AGENT_SIGN_RESPONSE = 13, 14

PublicKey = ed25519.Ed25519PublicKey | ec.EllipticCurvePublicKey
PrivateKey = ed25519.Ed25519PrivateKey | ec.EllipticCurvePrivateKey


class BadSignature(ValueError):
    """A signature that does not verify; the message says why."""


class KeyRefused(ValueError):
    """A key file that cannot sign a decision; the message says what to do."""


def load_private_key(path: Path, ask_passphrase: Callable[[], str] | None = None) -> PrivateKey:
    """The reviewer's private key at `path` (OpenSSH format). An encrypted key's passphrase comes
    from TUNEGATE_KEY_PASSPHRASE, else from `ask_passphrase` (a prompt)."""
    try:
        data = path.expanduser().read_bytes()
    except OSError as exc:
        raise KeyRefused(f"cannot read the key file {path}: {exc.strerror}") from None
    passphrase = os.environ.get(PASSPHRASE_ENV)
    try:
        key = _load(data, passphrase)
    except TypeError:  # a passphrase for a plain key, or none for an encrypted one
        if passphrase:
            key = _load(data, None)
        elif ask_passphrase is None:
            raise KeyRefused(
                f"{path} is encrypted: set {PASSPHRASE_ENV} or run in a terminal to be asked"
            ) from None
        else:
            key = _load(data, ask_passphrase())
    if not isinstance(key, PrivateKey):
        raise KeyRefused(f"{path}: {_unsupported(key)}")
    if isinstance(key, ec.EllipticCurvePrivateKey) and not isinstance(key.curve, ec.SECP256R1):
        raise KeyRefused(f"{path}: ECDSA on {key.curve.name}; use ssh-ed25519 or nistp256")
    return key


def _load(data: bytes, passphrase: str | None) -> object:
    try:
        return serialization.load_ssh_private_key(data, passphrase.encode() if passphrase else None)
    except ValueError as exc:
        raise KeyRefused(f"not a usable OpenSSH private key ({exc})") from None


def _unsupported(key: object) -> str:
    kind = type(key).__name__.removeprefix("_").replace("PrivateKey", "").replace("PublicKey", "")
    return f"a {kind} key; tunegate takes {' or '.join(KEY_TYPES)} keys (ssh-keygen -t ed25519)"


def public_blob(key: PublicKey) -> bytes:
    """The key in SSH wire format (what `ssh-ed25519 AAAA...` base64-encodes)."""
    text = key.public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH)
    return base64.b64decode(text.split()[1])


def public_line(key: PublicKey) -> str:
    """`ssh-ed25519 AAAA...`, as in an authorized_keys or reviewers file."""
    return key.public_bytes(
        serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH
    ).decode()


def load_public_key(line: str) -> PublicKey:
    """The public key of `ssh-ed25519 AAAA...` (a comment after it is allowed); a ValueError for
    any other key type or a damaged key."""
    parts = line.split()
    if len(parts) < 2 or parts[0] not in KEY_TYPES:
        raise ValueError(
            f"key type {parts[0] if parts else '(none)'!r}: use {' or '.join(KEY_TYPES)}"
        )
    try:
        key = serialization.load_ssh_public_key(f"{parts[0]} {parts[1]}".encode())
    except (ValueError, TypeError) as exc:
        raise ValueError(f"the {parts[0]} key does not decode ({exc})") from None
    if not isinstance(key, PublicKey):  # pragma: no cover - the key type was checked above
        raise ValueError(_unsupported(key))
    return key


def fingerprint(key: PublicKey) -> str:
    """`SHA256:...`, as `ssh-keygen -l` prints it."""
    digest = serialization.ssh_key_fingerprint(key, hashes.SHA256())
    return "SHA256:" + base64.b64encode(digest).decode().rstrip("=")


def sign_with_key(key: PrivateKey, message: bytes) -> str:
    """The armored SSH signature of `message` by a private key."""
    data = _signed_data(message)
    if isinstance(key, ed25519.Ed25519PrivateKey):
        raw = key.sign(data)
    else:
        r, s = decode_dss_signature(key.sign(data, ec.ECDSA(hashes.SHA256())))
        raw = _string(_mpint(r)) + _string(_mpint(s))
    algorithm = _key_type(key.public_key())
    return _armor(public_blob(key.public_key()), _string(algorithm.encode()) + _string(raw))


def agent_keys(socket_path: str) -> list[tuple[PublicKey, str]]:
    """The Ed25519 / ECDSA P-256 keys the ssh-agent at `socket_path` holds, with comments."""
    reply = _agent(socket_path, bytes([_AGENT_LIST_REQUEST]))
    if not reply or reply[0] != _AGENT_LIST_RESPONSE:
        raise KeyRefused("ssh-agent did not list its keys")
    (count,) = struct.unpack(">I", reply[1:5])
    keys, at = [], 5
    for _ in range(count):
        blob, at = _read_string(reply, at)
        comment, at = _read_string(reply, at)
        key_type, _ = _read_string(blob, 0)
        try:
            key = load_public_key(f"{key_type.decode()} {base64.b64encode(blob).decode()}")
        except ValueError:  # an RSA or security-key identity: not one tunegate takes
            continue
        keys.append((key, comment.decode(errors="replace")))
    return keys


def sign_with_agent(public: PublicKey, message: bytes, socket_path: str) -> str:
    """The armored SSH signature of `message` by the ssh-agent at `socket_path` holding the
    private half of `public` (the agent never hands the private key out)."""
    blob = public_blob(public)
    request = bytes([_AGENT_SIGN_REQUEST]) + _string(blob) + _string(_signed_data(message))
    reply = _agent(socket_path, request + struct.pack(">I", 0))
    if not reply or reply[0] != _AGENT_SIGN_RESPONSE:
        raise KeyRefused(
            f"ssh-agent did not sign with {fingerprint(public)}: is the key loaded (ssh-add -l)?"
        )
    signature, _ = _read_string(reply, 1)
    return _armor(blob, signature)


def verify(armored: str, message: bytes) -> PublicKey:
    """The public key whose signature of `message` `armored` is; `BadSignature` if it is none."""
    blob = _dearmor(armored)
    if blob[:6] != _MAGIC:
        raise BadSignature("not an SSH signature (no SSHSIG preamble)")
    try:
        (version,) = struct.unpack(">I", blob[6:10])
        key_blob, at = _read_string(blob, 10)
        namespace, at = _read_string(blob, at)
        _, at = _read_string(blob, at)  # reserved
        hash_name, at = _read_string(blob, at)
        signature, at = _read_string(blob, at)
        algorithm, sig_at = _read_string(signature, 0)
        raw, _ = _read_string(signature, sig_at)
    except (struct.error, IndexError):
        raise BadSignature("the SSH signature is truncated") from None
    if version != 1 or namespace != NAMESPACE.encode() or hash_name.decode() not in _HASHES:
        raise BadSignature(f"not a {NAMESPACE} signature (namespace {namespace.decode()!r})")
    key_type, _ = _read_string(key_blob, 0)
    line = f"{key_type.decode()} {base64.b64encode(key_blob).decode()}"
    try:
        public = load_public_key(line)
    except ValueError as exc:
        raise BadSignature(str(exc)) from None
    if algorithm.decode() != key_type.decode():
        raise BadSignature(f"a {algorithm.decode()} signature by a {key_type.decode()} key")
    data = _signed_data(message, hash_name.decode())
    try:
        if isinstance(public, ed25519.Ed25519PublicKey):
            public.verify(raw, data)
        else:
            r, at = _read_string(raw, 0)
            s, _ = _read_string(raw, at)
            der = encode_dss_signature(int.from_bytes(r, "big"), int.from_bytes(s, "big"))
            public.verify(der, data, ec.ECDSA(hashes.SHA256()))
    except (InvalidSignature, IndexError, struct.error):
        raise BadSignature(
            f"the signature by {fingerprint(public)} does not match what it claims to sign "
            "(the decision was changed after signing)"
        ) from None
    return public


_HASHES = {"sha512": hashlib.sha512, "sha256": hashlib.sha256}


def _signed_data(message: bytes, hash_name: str = _HASH) -> bytes:
    digest = _HASHES[hash_name](message).digest()
    return (
        _MAGIC
        + _string(NAMESPACE.encode())
        + _string(b"")
        + _string(hash_name.encode())
        + _string(digest)
    )


def _key_type(key: PublicKey) -> str:
    return public_line(key).split()[0]


def _armor(key_blob: bytes, signature: bytes) -> str:
    blob = (
        _MAGIC
        + struct.pack(">I", 1)
        + _string(key_blob)
        + _string(NAMESPACE.encode())
        + _string(b"")
        + _string(_HASH.encode())
        + _string(signature)
    )
    text = base64.b64encode(blob).decode()
    lines = [text[i : i + 70] for i in range(0, len(text), 70)]
    return "\n".join([_BEGIN, *lines, _END]) + "\n"


def _dearmor(armored: str) -> bytes:
    text = armored.strip()
    if not (text.startswith(_BEGIN) and text.endswith(_END)):
        raise BadSignature("not an armored SSH signature (-----BEGIN SSH SIGNATURE-----)")
    try:
        return base64.b64decode("".join(text[len(_BEGIN) : -len(_END)].split()), validate=True)
    except ValueError:
        raise BadSignature("the SSH signature is not valid base64") from None


def _string(value: bytes) -> bytes:
    return struct.pack(">I", len(value)) + value


def _mpint(value: int) -> bytes:
    raw = value.to_bytes((value.bit_length() + 7) // 8, "big") if value else b""
    return b"\x00" + raw if raw and raw[0] & 0x80 else raw


def _read_string(data: bytes, at: int) -> tuple[bytes, int]:
    (length,) = struct.unpack(">I", data[at : at + 4])
    end = at + 4 + length
    if end > len(data):
        raise IndexError("truncated")
    return data[at + 4 : end], end


def _agent(socket_path: str, request: bytes) -> bytes:
    """One request to the ssh-agent, its reply's body."""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as agent:
            agent.connect(socket_path)
            agent.sendall(_string(request))
            return _read_exactly(agent, struct.unpack(">I", _read_exactly(agent, 4))[0])
    except OSError as exc:
        raise KeyRefused(f"cannot reach ssh-agent at {socket_path}: {exc.strerror}") from None


def _read_exactly(sock: socket.socket, n: int) -> bytes:
    chunks = b""
    while len(chunks) < n:
        chunk = sock.recv(n - len(chunks))
        if not chunk:
            raise KeyRefused("ssh-agent closed the connection before answering")
        chunks += chunk
    return chunks
