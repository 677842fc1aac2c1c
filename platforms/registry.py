"""Model registry: versions, aliases (`champion`, `challenger`) and lineage.

The local registry keeps every version's files under `{root}/models/{name}/{version}/`, each with
its own `version.json` (the version's record: metrics, lineage), every alias move appended to
`{root}/models/{name}/aliases.jsonl`, and one JSON index, `{root}/models/index.json`, that is only
a cache of those: when it is lost it is rebuilt from them (versions, aliases and their history all
survive), a corrupt one is an error naming the file, and `tunegate models repair` rebuilds it.
Every change happens under an exclusive file lock and replaces the index atomically (temporary
file + rename), so two concurrent registrations get two versions and a crash at any point leaves
the previous index intact. A version folder is never overwritten: a new version's number is above
every folder there, indexed or not.
"""

from __future__ import annotations

import fcntl
import hashlib
import hmac
import json
import os
import shutil
import uuid
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, Field

from platforms.lineage import Lineage

ALIASES = ("champion", "challenger")
VERSION_FILE = "version.json"
ALIAS_LOG = "aliases.jsonl"


class RegistryCorrupt(ValueError):
    """The index cannot be read: the message names the file and the command that rebuilds it."""


class ModelFilesChanged(ValueError):
    """A version's files differ from what was registered: the message names the file."""


class ModelVersion(BaseModel):
    """One registered model version and where it came from."""

    model_config = ConfigDict(frozen=True)
    name: str
    version: int
    path: str
    created_at: str
    metrics: dict[str, float] = Field(default_factory=dict)
    lineage: Lineage = Field(default_factory=Lineage)
    files: dict[str, str] = Field(
        default_factory=dict,
        description="sha256 of every file of the version, by path relative to its folder, "
        "taken at registration (empty for versions registered before tunegate recorded them).",
    )
    signature: str = Field(
        "", description="HMAC-SHA256 of the record (but its path) with the approval key."
    )

    def signed_content(self) -> bytes:
        content = self.model_dump(mode="json", exclude={"path", "signature"})
        return json.dumps(content, sort_keys=True, separators=(",", ":")).encode("utf-8")

    def signed(self, key: bytes) -> ModelVersion:
        digest = hmac.new(key, self.signed_content(), hashlib.sha256).hexdigest()
        return self.model_copy(update={"signature": digest})


class ModelRegistry(Protocol):
    # register: a training job (lineage.training_job) is registered once; again, the
    # version it became is returned.
    def register(
        self, name: str, source: Path | str, metrics: dict[str, float], lineage: Lineage
    ) -> ModelVersion: ...
    def get(self, name: str, version: int) -> ModelVersion: ...
    def versions(self, name: str) -> list[ModelVersion]: ...
    def alias(self, name: str, alias: str) -> ModelVersion | None: ...
    def set_alias(self, name: str, alias: str, version: int) -> None: ...
    def previous(self, name: str, alias: str) -> ModelVersion | None: ...
    # download: the version's files on this machine (a local registry's folder, checked)
    def download(self, version: ModelVersion) -> Path: ...
    # verify: raise ModelFilesChanged when the version's files are not what was registered
    def verify(self, version: ModelVersion) -> None: ...


class LocalRegistry:
    def __init__(self, root: Path, signing_key: bytes | None = None) -> None:
        """`signing_key` (the approval key, outside the store): version records are signed with
        it at registration and checked with it whenever a version's files are used."""
        self.root = root / "models"
        self.index_path = self.root / "index.json"
        self.signing_key = signing_key

    def register(
        self, name: str, source: Path | str, metrics: dict[str, float], lineage: Lineage
    ) -> ModelVersion:
        """Copy `source` in as the next version of `name`.

        A training job is registered once: when `lineage.training_job` names a job some
        version already came from, that version is returned (checked under the lock, so two runs
        finishing the same job at once register it once).
        """
        with self._locked() as index:
            self._remove_scratch(name)
            known = index.get(name, {}).get("versions", {})
            if set(map(str, self._folders(name))) - set(known):  # a stale index: rebuilt first
                index.update(self._rebuilt(dict(index)))
                self._write(index)
            entry = index.setdefault(name, {"versions": {}, "aliases": {}})
            for existing in map(ModelVersion.model_validate, entry["versions"].values()):
                if lineage.same_job(existing.lineage):
                    return existing
            version = max([*map(int, entry["versions"]), *self._folders(name)], default=0) + 1
            target = self.root / name / str(version)
            scratch = self.root / name / f".tmp-{uuid.uuid4().hex[:8]}"
            shutil.copytree(source, scratch)
            record = ModelVersion(
                name=name,
                version=version,
                path=str(target),
                created_at=datetime.now(UTC).isoformat(timespec="seconds"),
                metrics=metrics,
                lineage=lineage,
                files=_file_hashes(scratch),
            )
            if self.signing_key is not None:
                record = record.signed(self.signing_key)
            (scratch / VERSION_FILE).write_text(record.model_dump_json(indent=2))
            os.rename(scratch, target)  # never over an existing folder (the number is above all)
            entry["versions"][str(version)] = record.model_dump(mode="json")
            self._write(index)
        return record

    def get(self, name: str, version: int) -> ModelVersion:
        entry = self._current().get(name)
        if entry is None or str(version) not in entry["versions"]:
            raise KeyError(f"no model {name} version {version} in {self.index_path}")
        return ModelVersion.model_validate(entry["versions"][str(version)])

    def versions(self, name: str) -> list[ModelVersion]:
        entry = self._current().get(name, {"versions": {}})
        return [
            ModelVersion.model_validate(v)
            for _, v in sorted(entry["versions"].items(), key=lambda kv: int(kv[0]))
        ]

    def names(self) -> list[str]:
        return sorted(self._current())

    def aliases(self, name: str) -> dict[str, int]:
        return dict(self._current().get(name, {}).get("aliases", {}))

    def alias(self, name: str, alias: str) -> ModelVersion | None:
        version = self.aliases(name).get(alias)
        return None if version is None else self.get(name, version)

    def set_alias(self, name: str, alias: str, version: int) -> None:
        if alias not in ALIASES:
            raise ValueError(f"alias must be one of {ALIASES}, got {alias!r}")
        with self._locked() as index:
            entry = index.get(name)
            if entry is None or str(version) not in entry["versions"]:
                raise KeyError(f"no model {name} version {version}")
            move = {
                "alias": alias,
                "version": version,
                "at": datetime.now(UTC).isoformat(timespec="seconds"),
            }
            with (self.root / name / ALIAS_LOG).open("a") as log:  # the record; the index caches
                log.write(json.dumps(move) + "\n")
                log.flush()
                os.fsync(log.fileno())
            entry["aliases"][alias] = version
            entry.setdefault("history", []).append(move)
            self._write(index)

    def previous(self, name: str, alias: str) -> ModelVersion | None:
        """The version `alias` pointed at before its current one (what a rollback returns to)."""
        entry = self._current().get(name, {})
        current = entry.get("aliases", {}).get(alias)
        earlier = [h["version"] for h in entry.get("history", []) if h["alias"] == alias]
        for version in reversed(earlier):
            if version != current:
                return self.get(name, version)
        return None

    def download(self, version: ModelVersion) -> Path:
        """The version's folder here, once its files are checked against the registered record."""
        self.verify(version)
        return Path(version.path)

    def verify(self, version: ModelVersion) -> None:
        """Raise ModelFilesChanged naming the first file (or record) that differs."""
        problems = self.problems(version)
        if problems:
            more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
            raise ModelFilesChanged(
                f"{version.name}:{version.version} at {version.path} is not what was registered: "
                f"{problems[0]}{more}; restore its files or register the model again"
            )

    def problems(self, version: ModelVersion) -> list[str]:
        """What differs between the version's folder and its registered record: an edited
        `version.json`, a record whose signature fails, a file missing, changed or added."""
        folder = Path(version.path)
        found = []
        key = self.signing_key
        if key is not None and version.files and not _signed_by(version, key):
            found.append("its record's signature does not hold (edited, or another key)")
        record_file = folder / VERSION_FILE
        if version.files and record_file.exists():
            kept = ModelVersion.model_validate_json(record_file.read_text())
            if kept.model_dump(exclude={"path"}) != version.model_dump(exclude={"path"}):
                found.append(f"{VERSION_FILE} was edited")
        if not version.files:
            return found  # registered before tunegate hashed a version's files
        actual = _file_hashes(folder) if folder.is_dir() else {}
        for name, digest in sorted(version.files.items()):
            if name not in actual:
                found.append(f"{name} is missing")
            elif actual[name] != digest:
                found.append(f"{name} changed after registration (sha256 differs)")
        found += [
            f"{name} was added after registration"
            for name in sorted(set(actual) - set(version.files))
        ]
        return found

    @contextmanager
    def _locked(self, rebuild: bool = False) -> Iterator[dict[str, Any]]:
        self.root.mkdir(parents=True, exist_ok=True)
        with (self.root / ".lock").open("w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                yield self._read(rebuild)
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def repair(self) -> dict[str, Any]:
        """Rebuild the index from the version folders and alias logs, and write it. Versions known
        only to a readable old index (registered before version folders carried their record)
        get their `version.json` first. Returns the new index."""
        with self._locked(rebuild=True) as index:
            self._write(index)
            return index

    def _current(self) -> dict[str, Any]:
        """The index to read: a lost one is rebuilt and written once (not rebuilt per read)."""
        if not self.index_path.exists() and self.root.is_dir():
            return self.repair()
        return self._read()

    def _remove_scratch(self, name: str) -> None:
        """Delete what registrations killed mid-copy left (`.tmp-*`): under the lock, no
        registration is copying, so every one there is dead."""
        folder = self.root / name
        for scratch in folder.glob(".tmp-*") if folder.is_dir() else []:
            shutil.rmtree(scratch, ignore_errors=True)

    def _folders(self, name: str) -> list[int]:
        folder = self.root / name
        if not folder.is_dir():
            return []
        return [int(p.name) for p in folder.iterdir() if p.name.isdigit() and p.is_dir()]

    def _rebuilt(self, old: dict[str, Any]) -> dict[str, Any]:
        index: dict[str, Any] = {}
        names = {p.name for p in self.root.iterdir() if p.is_dir() and not p.name.startswith(".")}
        for name in sorted(names | set(old)):
            known = old.get(name, {}).get("versions", {})
            versions = {}
            for number in sorted(self._folders(name)):
                record_file = self.root / name / str(number) / VERSION_FILE
                if not record_file.exists() and str(number) in known:
                    record_file.write_text(json.dumps(known[str(number)], indent=2))
                if record_file.exists():
                    versions[str(number)] = json.loads(record_file.read_text())
            moves = self._alias_log(name) or old.get(name, {}).get("history", [])
            aliases = {m["alias"]: m["version"] for m in moves if str(m["version"]) in versions}
            if versions:
                index[name] = {"versions": versions, "aliases": aliases, "history": moves}
        return index

    def _alias_log(self, name: str) -> list[dict[str, Any]]:
        log = self.root / name / ALIAS_LOG
        if not log.exists():
            return []
        moves = []
        for line in log.read_text().splitlines():
            with suppress(ValueError):  # a line torn by a crash mid-append
                moves.append(json.loads(line))
        return moves

    def _read(self, rebuild: bool = False) -> dict[str, Any]:
        old: dict[str, Any] = {}
        if self.index_path.exists():
            try:
                old = json.loads(self.index_path.read_text())
                if not isinstance(old, dict):
                    raise ValueError("not a JSON object")
            except ValueError as exc:
                if not rebuild:
                    raise RegistryCorrupt(
                        f"the model registry index {self.index_path} is corrupt ({exc}); "
                        "`tunegate models repair` rebuilds it from the version folders"
                    ) from None
                old = {}
            if not rebuild:
                return old
        if not self.root.is_dir():
            return {}
        return self._rebuilt(old)  # lost (or being repaired): every version keeps its record

    def _write(self, index: dict[str, Any]) -> None:
        tmp = self.index_path.with_name(f"index.json.tmp-{uuid.uuid4().hex[:8]}")
        with tmp.open("w") as f:
            json.dump(index, f, indent=2)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.index_path)


def _signed_by(version: ModelVersion, key: bytes) -> bool:
    return hmac.compare_digest(version.signed(key).signature, version.signature)


def _file_hashes(folder: Path) -> dict[str, str]:
    """sha256 of every file under `folder` but the version record, by relative path."""
    hashes = {}
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        name = path.relative_to(folder).as_posix()
        if name != VERSION_FILE:
            digest = hashlib.sha256()
            with path.open("rb") as f:
                while chunk := f.read(1 << 20):
                    digest.update(chunk)
            hashes[name] = digest.hexdigest()
    return hashes
