"""How `tunegate approve|reject` proves who decides: the decision signed with the reviewer's SSH
key (a key file, `--key`, or ssh-agent, `--agent`), or their Entra ID token (`--token`), sent
with the answer as its `proof` (platforms/reviewer_proofs.py checks it in the run).

`sign_decision` returns the proof and the reviewer it names: `--reviewer`, else the key's
comment when it is an e-mail (`ssh-keygen -C dana@example.com`), else the token's `upn`.
"""

from __future__ import annotations

import getpass
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from platforms.approvals import decision_payload
from platforms.entra import TokenRefused, unverified_username
from platforms.reviewer_proofs import Proof
from platforms.ssh_signatures import (
    KeyRefused,
    PrivateKey,
    PublicKey,
    agent_keys,
    fingerprint,
    load_private_key,
    load_public_key,
    sign_with_agent,
    sign_with_key,
)


class SigningFailed(ValueError):
    """The decision could not be signed; the message says what to do."""


@dataclass(frozen=True)
class Signer:
    """What signs: a key file, ssh-agent (with the public key it is asked to use), or a token."""

    key: Path | None = None
    agent: bool = False
    token: str | None = None

    @property
    def signs(self) -> bool:
        return self.key is not None or self.agent or bool(self.token)


@dataclass(frozen=True)
class Signed:
    proof: Proof
    reviewer: str
    by: str  # what proved it, for the message: `SHA256:...` or `Entra ID token`


def sign_decision(
    signer: Signer,
    *,
    flow_run_id: str | None,
    dataset_hash: str,
    decision: str,
    reviewer: str | None,
    comment: str,
    exclude_ids: list[str],
) -> Signed:
    """The proof of this decision by `signer`; SigningFailed saying why not."""
    decided_at = datetime.now(UTC).isoformat(timespec="microseconds")
    if signer.token:
        try:
            named = reviewer or unverified_username(signer.token)
        except TokenRefused as exc:
            raise SigningFailed(f"--token: {exc}") from None
        proof = Proof(
            method="entra",
            decided_at=decided_at,
            dataset_hash=dataset_hash,
            flow_run_id=flow_run_id,
            token=signer.token,
        )
        return Signed(proof, _named(named, "the token names no upn"), "Entra ID token")
    private = None
    try:
        if signer.agent:
            public, comment_of_key = _agent_key(signer.key)
        else:
            assert signer.key is not None
            private = load_private_key(signer.key, _prompt(signer.key))
            public, comment_of_key = private.public_key(), _comment_of(signer.key, private)
        named = _named(reviewer or comment_of_key, f"the key's comment is {comment_of_key!r}")
        payload = decision_payload(
            dataset_hash=dataset_hash,
            decision="approved" if decision == "approve" else "rejected",
            exclude_ids=exclude_ids,
            comment=comment,
            decided_at=decided_at,
            flow_run_id=flow_run_id,
            reviewer=named,
        )
        if private is None:
            signature = sign_with_agent(public, payload, _agent_socket())
        else:
            signature = sign_with_key(private, payload)
    except KeyRefused as exc:
        raise SigningFailed(str(exc)) from None
    proof = Proof(
        method="ssh",
        decided_at=decided_at,
        dataset_hash=dataset_hash,
        flow_run_id=flow_run_id,
        signature=signature,
    )
    return Signed(proof, named, fingerprint(public))


def _named(reviewer: str, why_not: str) -> str:
    if "@" not in reviewer:
        raise SigningFailed(
            f"give --reviewer YOUR-EMAIL, as the reviewers file lists you ({why_not})"
        )
    return reviewer


def _comment_of(key: Path, private: PrivateKey) -> str:
    """The comment of the key's `.pub` beside it (when it is that key's), else ""."""
    pub = _pub_file(key)
    if pub is None:
        return ""
    public, comment = _read_pub(pub)
    return comment if fingerprint(public) == fingerprint(private.public_key()) else ""


def _agent_socket() -> str:
    socket_path = os.environ.get("SSH_AUTH_SOCK")
    if not socket_path:
        raise SigningFailed("--agent: SSH_AUTH_SOCK is not set (no ssh-agent)")
    return socket_path


def _agent_key(named: Path | None) -> tuple[PublicKey, str]:
    """The agent's one key, or the one whose `.pub` file `named` is, with its comment."""
    held = agent_keys(_agent_socket())
    if named is not None:
        pub = _pub_file(named)
        if pub is None:
            raise SigningFailed(f"--agent --key {named}: give the public key file (.pub)")
        wanted, comment = _read_pub(pub)
        if not any(fingerprint(k) == fingerprint(wanted) for k, _ in held):
            raise SigningFailed(f"ssh-agent does not hold {fingerprint(wanted)}: ssh-add it")
        return wanted, comment
    if len(held) != 1:
        listed = ", ".join(fingerprint(k) for k, _ in held) or "none"
        raise SigningFailed(
            f"ssh-agent holds {len(held)} ssh-ed25519 / ecdsa-sha2-nistp256 keys ({listed}): "
            "name one with --key ~/.ssh/id_ed25519.pub"
        )
    return held[0]


def _pub_file(key: Path) -> Path | None:
    key = key.expanduser()
    if key.suffix == ".pub":
        return key
    beside = key.with_name(key.name + ".pub")
    return beside if beside.is_file() else None


def _read_pub(path: Path) -> tuple[PublicKey, str]:
    try:
        line = path.read_text(encoding="utf-8").strip()
        key = load_public_key(line)
    except (OSError, ValueError) as exc:
        raise SigningFailed(f"{path}: {exc}") from None
    parts = line.split(maxsplit=2)
    return key, parts[2] if len(parts) > 2 else ""


def _prompt(key: Path) -> Callable[[], str] | None:
    """A passphrase prompt for an encrypted key, or None without a terminal to ask in."""
    if not sys.stdin.isatty():
        return None
    return lambda: getpass.getpass(f"passphrase for {key}: ")
