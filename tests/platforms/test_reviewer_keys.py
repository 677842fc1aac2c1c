"""Reviewers prove who they are with keys they already have: SSH signatures that OpenSSH itself
writes and checks (`ssh-keygen -Y`), a reviewers file whose mistakes name their line, and Entra
ID tokens checked against a tenant's key set (a test key set here: nothing is fetched)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa

from platforms.entra import TokenRefused, verify_token
from platforms.reviewers import EntraTenant, read_reviewers
from platforms.ssh_signatures import (
    NAMESPACE,
    BadSignature,
    KeyRefused,
    agent_keys,
    fingerprint,
    load_private_key,
    sign_with_agent,
    sign_with_key,
    verify,
)

SSH_KEYGEN = "/usr/bin/ssh-keygen"
TENANT = "72f988bf-86f1-41af-91ab-2d7cd011db47"
AUDIENCE = "api://tunegate"


def make_key(folder: Path, name: str, kind: str = "ed25519", passphrase: str = "") -> Path:
    """A key pair made by ssh-keygen: `folder/name` and `folder/name.pub` (comment: name)."""
    path = folder / name
    extra = ["-b", "256"] if kind == "ecdsa" else []
    subprocess.run(
        [SSH_KEYGEN, "-q", "-t", kind, *extra, "-N", passphrase, "-C", name, "-f", str(path)],
        check=True,
    )
    return path


def keygen_fingerprint(key: Path) -> str:
    out = subprocess.run([SSH_KEYGEN, "-lf", f"{key}.pub"], capture_output=True, text=True)
    return out.stdout.split()[1]


def reviewers_line(email: str, name: str, key: Path) -> str:
    kind, blob, *_ = Path(f"{key}.pub").read_text().split()
    return f'{email} "{name}" {kind} {blob}\n'


@pytest.mark.parametrize("kind", ["ed25519", "ecdsa"])
def test_signatures_are_openssh_signatures_both_ways(tmp_path: Path, kind: str) -> None:
    key = make_key(tmp_path, "dana@example.com", kind)
    message = b'{"decision":"approved"}'
    ours = sign_with_key(load_private_key(key), message)
    assert fingerprint(verify(ours, message)) == keygen_fingerprint(key)

    allowed = tmp_path / "allowed_signers"  # the reviewers file's lines are allowed_signers lines
    allowed.write_text(reviewers_line("dana@example.com", "Dana", key).replace('"Dana" ', ""))
    (tmp_path / "sig").write_text(ours)
    checked = subprocess.run(
        [SSH_KEYGEN, "-Y", "verify", "-f", str(allowed), "-I", "dana@example.com",
         "-n", NAMESPACE, "-s", str(tmp_path / "sig")],
        input=message, capture_output=True,
    )  # fmt: skip
    assert checked.returncode == 0, checked.stderr
    theirs = subprocess.run(
        [SSH_KEYGEN, "-Y", "sign", "-f", str(key), "-n", NAMESPACE],
        input=message, capture_output=True, check=True,
    ).stdout.decode()  # fmt: skip
    assert fingerprint(verify(theirs, message)) == keygen_fingerprint(key)
    with pytest.raises(BadSignature, match="changed after signing"):
        verify(ours, message.replace(b"approved", b"rejected"))
    other = subprocess.run(
        [SSH_KEYGEN, "-Y", "sign", "-f", str(key), "-n", "git"],
        input=message, capture_output=True, check=True,
    ).stdout.decode()  # fmt: skip
    with pytest.raises(BadSignature, match="namespace 'git'"):
        verify(other, message)  # a git commit signature is no approval


def test_an_encrypted_key_takes_its_passphrase_and_rsa_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = make_key(tmp_path, "enc", passphrase="correct horse")
    monkeypatch.delenv("TUNEGATE_KEY_PASSPHRASE", raising=False)
    with pytest.raises(KeyRefused, match="encrypted: set TUNEGATE_KEY_PASSPHRASE"):
        load_private_key(key)
    assert load_private_key(key, lambda: "correct horse") is not None  # the prompt
    monkeypatch.setenv("TUNEGATE_KEY_PASSPHRASE", "wrong")
    with pytest.raises(KeyRefused, match="not a usable OpenSSH private key"):
        load_private_key(key)
    monkeypatch.setenv("TUNEGATE_KEY_PASSPHRASE", "correct horse")
    assert fingerprint(load_private_key(key).public_key()) == keygen_fingerprint(key)
    rsa_key = make_key(tmp_path, "old", "rsa")
    with pytest.raises(KeyRefused, match="RSA key; tunegate takes ssh-ed25519 or ecdsa"):
        load_private_key(rsa_key)


@contextmanager
def running_ssh_agent(folder: Path) -> Iterator[str]:
    """A real ssh-agent on a socket in `folder`; yields the socket's path."""
    socket_path = str(folder / "agent.sock")
    agent = subprocess.Popen([shutil.which("ssh-agent") or "ssh-agent", "-D", "-a", socket_path])
    try:
        for _ in range(100):
            if os.path.exists(socket_path):
                break
            time.sleep(0.05)
        yield socket_path
    finally:
        agent.terminate()
        agent.wait(10)


@pytest.fixture
def ssh_agent(tmp_path: Path) -> Iterator[str]:
    with running_ssh_agent(tmp_path) as socket_path:
        yield socket_path


def test_ssh_agent_signs_without_handing_out_the_key(tmp_path: Path, ssh_agent: str) -> None:
    key = make_key(tmp_path, "sam@example.com", "ecdsa")
    env = {**os.environ, "SSH_AUTH_SOCK": ssh_agent}
    subprocess.run(["ssh-add", "-q", str(key)], env=env, check=True)
    [(public, comment)] = agent_keys(ssh_agent)
    assert comment == "sam@example.com" and fingerprint(public) == keygen_fingerprint(key)
    signature = sign_with_agent(public, b"payload", ssh_agent)
    assert fingerprint(verify(signature, b"payload")) == keygen_fingerprint(key)
    unloaded = load_private_key(make_key(tmp_path, "other")).public_key()
    with pytest.raises(KeyRefused, match="is the key loaded"):
        sign_with_agent(unloaded, b"payload", ssh_agent)


def test_the_reviewers_file_lists_keys_and_names_the_line_of_a_mistake(tmp_path: Path) -> None:
    dana, sam = make_key(tmp_path, "dana"), make_key(tmp_path, "sam", "ecdsa")
    keys = tmp_path / "entra-keys.json"
    keys.write_text('{"keys": []}')
    path = tmp_path / "reviewers"
    path.write_text(
        "# e-mail  name  key\n"
        + reviewers_line("dana@example.com", "Dana Silva", dana)
        + reviewers_line("sam@example.com", "Sam Okafor", sam).rstrip() + " sam@laptop\n"
        + "uma@contoso.com Uma Rao entra 6f0e1c2d\n\n[entra]\n"
        + f"tenant = {TENANT}\naudience = {AUDIENCE}\njwks_file = entra-keys.json\n"
    )  # fmt: skip
    reviewers = read_reviewers(path)
    by_key = reviewers.by_fingerprint(keygen_fingerprint(dana))
    assert by_key is not None and (by_key.email, by_key.name) == ("dana@example.com", "Dana Silva")
    sam_found = reviewers.by_fingerprint(keygen_fingerprint(sam))
    assert sam_found is not None and sam_found.name == "Sam Okafor"
    assert reviewers.entra == EntraTenant(TENANT, AUDIENCE, None, str(keys))
    assert reviewers.by_entra("6f0e1c2d", []).email == "uma@contoso.com"
    assert reviewers.by_entra("someone-else", ["uma@contoso.com"]) is None  # the oid is listed

    rsa_line = "eve@example.com Eve ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQ\n"
    cases = {
        rsa_line: "line 2: unknown key type ssh-rsa; tunegate takes ssh-ed25519 or ecdsa",
        "eve@example.com Eve\n": "line 2: no key after eve@example.com",
        "eve Eve ssh-ed25519 AAAA\n": "line 2: 'eve' is not an e-mail",
        "eve@example.com Eve ssh-ed25519 AAAAnotakey\n": "line 2: the ssh-ed25519 key does not",
        "eve@example.com Eve entra\n": "eve@example.com proves who they are with entra, but",
        "[azure]\n": "line 2: unknown section [azure]",
        "[entra]\ntenant = t\n": "line 2 [entra]: give audience",
        reviewers_line("eve@example.com", "Eve", dana): "is listed for both dana@example.com",
    }
    for line, message in cases.items():
        path.write_text(reviewers_line("dana@example.com", "Dana", dana) + line)
        with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
            read_reviewers(path)


def entra_keys(tmp_path: Path) -> tuple[rsa.RSAPrivateKey, EntraTenant]:
    """A test tenant: an RSA key and its key set (JWKS) in a file."""
    private = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(private.public_key()))
    (tmp_path / "jwks.json").write_text(json.dumps({"keys": [{**jwk, "kid": "test-key"}]}))
    return private, EntraTenant(TENANT, AUDIENCE, None, str(tmp_path / "jwks.json"))


def entra_token(private: rsa.RSAPrivateKey, **claims: object) -> str:
    """A token as Entra ID issues one to uma@contoso.com for tunegate; `claims` change it."""
    now = int(time.time())
    body = {
        "iss": f"https://login.microsoftonline.com/{TENANT}/v2.0",
        "aud": AUDIENCE,
        "tid": TENANT,
        "oid": "6f0e1c2d",
        "upn": "uma@contoso.com",
        "iat": now,
        "exp": now + 3600,
        **claims,
    }
    body = {k: v for k, v in body.items() if v is not None}  # None: the claim left out
    return jwt.encode(body, private, algorithm="RS256", headers={"kid": "test-key"})


def test_an_entra_token_is_checked_against_the_tenants_keys(tmp_path: Path) -> None:
    private, tenant = entra_keys(tmp_path)
    claims = verify_token(entra_token(private), tenant)
    assert (claims.object_id, claims.username, claims.tenant) == (
        "6f0e1c2d",
        "uma@contoso.com",
        TENANT,
    )
    refused = {
        "not for api://tunegate": entra_token(private, aud="api://another-app"),
        "has expired": entra_token(private, iat=0, exp=int(time.time()) - 3600),
        "not issued by": entra_token(private, iss="https://login.microsoftonline.com/x/v2.0"),
        "oid": entra_token(private, oid=None),  # no object id: nobody to record
    }
    for message, token in refused.items():
        with pytest.raises(TokenRefused, match=message):
            verify_token(token, tenant)
    forged = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    with pytest.raises(TokenRefused, match="does not verify"):
        verify_token(entra_token(forged), tenant)  # signed by a key not of the tenant
