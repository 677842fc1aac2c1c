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


class ModelVersion(BaseModel):
    """One registered model version and where it came from."""

    model_config = ConfigDict(frozen=True)
    name: str
    version: int
    path: str
    created_at: str
    metrics: dict[str, float] = Field(default_factory=dict)
    lineage: Lineage = Field(default_factory=Lineage)


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
    # download: the version's files on this machine (a local registry's folder as it is)
    def download(self, version: ModelVersion) -> Path: ...


class LocalRegistry:
    def __init__(self, root: Path) -> None:
        self.root = root / "models"
        self.index_path = self.root / "index.json"

    def register(
        self, name: str, source: Path | str, metrics: dict[str, float], lineage: Lineage
    ) -> ModelVersion:
        """Copy `source` in as the next version of `name`.

        A training job is registered once: when `lineage.training_job` names a job some
        version already came from, that version is returned (checked under the lock, so two runs
        finishing the same job at once register it once).
        """
        with self._locked() as index:
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
            )
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
        """The version's files: its folder here, as it is."""
        return Path(version.path)

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
