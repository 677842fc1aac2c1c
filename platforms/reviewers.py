"""The reviewers file: who may decide about data, and how each proves it (`approval.reviewers_file`).

In the spirit of git's `allowed_signers`, one line per reviewer key: e-mail, name, public key.
A person with two keys has two lines. A reviewer who proves who they are with Microsoft Entra ID
has `entra` (and optionally their object id) instead of a key, and the file then has an
`[entra]` section naming the tenant:

    # e-mail           name            key (ssh-ed25519 or ecdsa-sha2-nistp256), comment
    dana@example.com   "Dana Silva"    ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAA... dana@laptop
    sam@example.com    Sam Okafor      ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAA...
    uma@contoso.com    Uma Rao         entra 6f0e1c2d-...

    [entra]
    tenant = 72f988bf-86f1-41af-91ab-2d7cd011db47
    audience = api://tunegate
    jwks_file = entra-keys.json      # or jwks_uri = https://login.microsoftonline.com/<tenant>/discovery/v2.0/keys

`read_reviewers` returns `Reviewers`, or raises a ValueError naming the line and what is wrong
with it; the config turns that into an exit 2 naming `approval.reviewers_file`.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path

from platforms.ssh_signatures import KEY_TYPES, PublicKey, fingerprint, load_public_key

ENTRA = "entra"
_ENTRA_FIELDS = ("tenant", "audience", "jwks_uri", "jwks_file")


@dataclass(frozen=True)
class Reviewer:
    """One listed way for one person to prove who they are: an SSH key, or Entra ID."""

    email: str
    name: str
    key: PublicKey | None = None  # None: Entra ID
    object_id: str | None = None  # Entra ID: the person's `oid`, when listed

    @property
    def fingerprint(self) -> str | None:
        return fingerprint(self.key) if self.key is not None else None


@dataclass(frozen=True)
class EntraTenant:
    """The Entra ID tenant whose tokens prove an `entra` reviewer: issued by the tenant, for
    tunegate's app (the audience), signed by a key of the tenant's key set."""

    tenant: str
    audience: str
    jwks_uri: str | None = None
    jwks_file: str | None = None

    @property
    def issuer(self) -> str:
        return f"https://login.microsoftonline.com/{self.tenant}/v2.0"


@dataclass(frozen=True)
class Reviewers:
    """Everyone the reviewers file lists, and the Entra tenant when it names one."""

    path: str
    people: tuple[Reviewer, ...]
    entra: EntraTenant | None = None

    def by_fingerprint(self, key_fingerprint: str) -> Reviewer | None:
        return next((r for r in self.people if r.fingerprint == key_fingerprint), None)

    def by_entra(self, object_id: str, names: list[str]) -> Reviewer | None:
        """The `entra` reviewer with this object id, else the one whose e-mail is one of
        `names` (the token's `upn` / `preferred_username`) and who lists no object id."""
        wanted = {n.lower() for n in names if n}
        for person in self.people:
            if person.key is not None:
                continue
            if person.object_id == object_id or (
                person.object_id is None and person.email.lower() in wanted
            ):
                return person
        return None


def read_reviewers(path: str | Path) -> Reviewers:
    """The reviewers file at `path` (`~` expanded), checked line by line."""
    file = Path(path).expanduser()
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as exc:
        raise ValueError(f"cannot read {file}: {exc.strerror}") from None
    people: list[Reviewer] = []
    entra: dict[str, str] = {}
    in_entra = False
    entra_line = 0
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip() if not raw.lstrip().startswith("#") else ""
        if not line:
            continue
        where = f"{file} line {number}"
        if line.startswith("["):
            if line != f"[{ENTRA}]":
                raise ValueError(f"{where}: unknown section {line}; the one section is [{ENTRA}]")
            in_entra, entra_line = True, number
            continue
        if in_entra:
            field, sep, value = (p.strip() for p in line.partition("="))
            if not sep or field not in _ENTRA_FIELDS or not value:
                raise ValueError(
                    f"{where}: {line!r} is not `name = value` with a name of {_ENTRA_FIELDS}"
                )
            entra[field] = value
            continue
        people.append(_reviewer(line, where))
    tenant = _tenant(entra, file, entra_line) if in_entra else None
    _check_people(people, tenant is not None, file)
    return Reviewers(str(file), tuple(people), tenant)


def _reviewer(line: str, where: str) -> Reviewer:
    try:
        tokens = shlex.split(line)
    except ValueError as exc:
        raise ValueError(f"{where}: {exc} (an unclosed quote?)") from None
    email = tokens[0]
    if "@" not in email:
        raise ValueError(f"{where}: {email!r} is not an e-mail; a line starts with the e-mail")
    at = next((i for i, t in enumerate(tokens[1:], 1) if _looks_like_key_type(t)), None)
    if at is None:
        raise ValueError(
            f"{where}: no key after {email}; give `e-mail name ssh-ed25519 AAAA...` "
            f"(or `e-mail name {ENTRA}`)"
        )
    name = " ".join(tokens[1:at]) or email
    kind = tokens[at]
    if kind == ENTRA:
        return Reviewer(email, name, object_id=tokens[at + 1] if len(tokens) > at + 1 else None)
    if kind not in KEY_TYPES:
        raise ValueError(
            f"{where}: unknown key type {kind}; tunegate takes {' or '.join(KEY_TYPES)} keys "
            f"(ssh-keygen -t ed25519) or {ENTRA}"
        )
    if len(tokens) <= at + 1:
        raise ValueError(f"{where}: the {kind} key of {email} is missing")
    try:
        key = load_public_key(f"{kind} {tokens[at + 1]}")
    except ValueError as exc:
        raise ValueError(f"{where}: {exc}") from None
    return Reviewer(email, name, key=key)


def _looks_like_key_type(token: str) -> bool:
    return token == ENTRA or token.startswith(("ssh-", "ecdsa-", "sk-", "rsa-"))


def _tenant(fields: dict[str, str], file: Path, line: int) -> EntraTenant:
    where = f"{file} line {line} [{ENTRA}]"
    missing = [f for f in ("tenant", "audience") if f not in fields]
    if missing:
        raise ValueError(f"{where}: give {' and '.join(missing)}")
    if ("jwks_uri" in fields) == ("jwks_file" in fields):
        raise ValueError(
            f"{where}: give one of jwks_uri (the tenant's keys, fetched when a token is "
            "checked) or jwks_file (a copy of them)"
        )
    keys_file = fields.get("jwks_file")
    if keys_file is not None:
        resolved = (file.parent / Path(keys_file).expanduser()).resolve()
        if not resolved.is_file():
            raise ValueError(f"{where}: jwks_file {resolved} does not exist")
        keys_file = str(resolved)
    return EntraTenant(fields["tenant"], fields["audience"], fields.get("jwks_uri"), keys_file)


def _check_people(people: list[Reviewer], has_tenant: bool, file: Path) -> None:
    if not people:
        raise ValueError(f"{file} lists no reviewer")
    owners: dict[str, str] = {}
    for person in people:
        if person.key is None and not has_tenant:
            raise ValueError(
                f"{file}: {person.email} proves who they are with {ENTRA}, but the file has no "
                f"[{ENTRA}] section naming the tenant"
            )
        if person.fingerprint is not None:
            other = owners.setdefault(person.fingerprint, person.email)
            if other != person.email:
                raise ValueError(
                    f"{file}: the key {person.fingerprint} is listed for both {other} and "
                    f"{person.email}; one key proves one person"
                )
