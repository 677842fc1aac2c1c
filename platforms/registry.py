"""Model registry: versions, aliases (`champion`, `challenger`) and lineage.

The local registry keeps every version's files under `{root}/models/{name}/{version}/` and one JSON
index, `{root}/models/index.json`. Every change happens under an exclusive file lock and replaces
the index atomically (temporary file + rename), so two concurrent registrations get two versions
and a crash at any point leaves the previous index intact.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, Field

ALIASES = ("champion", "challenger")


class ModelVersion(BaseModel):
    """One registered model version and where it came from."""

    model_config = ConfigDict(frozen=True)
    name: str
    version: int
    path: str
    created_at: str
    metrics: dict[str, float] = Field(default_factory=dict)
    lineage: dict[str, Any] = Field(default_factory=dict)


class ModelRegistry(Protocol):
    # register: a training job (lineage["training_job"]) is registered once; again, the
    # version it became is returned.
    def register(
        self, name: str, source: Path | str, metrics: dict[str, float], lineage: dict[str, Any]
    ) -> ModelVersion: ...
    def get(self, name: str, version: int) -> ModelVersion: ...
    def versions(self, name: str) -> list[ModelVersion]: ...
    def alias(self, name: str, alias: str) -> ModelVersion | None: ...
    def set_alias(self, name: str, alias: str, version: int) -> None: ...
    def previous(self, name: str, alias: str) -> ModelVersion | None: ...


class LocalRegistry:
    def __init__(self, root: Path) -> None:
        self.root = root / "models"
        self.index_path = self.root / "index.json"

    def register(
        self, name: str, source: Path, metrics: dict[str, float], lineage: dict[str, Any]
    ) -> ModelVersion:
        """Copy `source` in as the next version of `name`.

        A training job is registered once: when `lineage["training_job"]` names a job some
        version already came from, that version is returned (checked under the lock, so two runs
        finishing the same job at once register it once).
        """
        with self._locked() as index:
            entry = index.setdefault(name, {"versions": {}, "aliases": {}})
            job = lineage.get("training_job")
            for existing in entry["versions"].values():
                if job is not None and existing.get("lineage", {}).get("training_job") == job:
                    return ModelVersion.model_validate(existing)
            version = max(map(int, entry["versions"]), default=0) + 1
            target = self.root / name / str(version)
            scratch = self.root / name / f".tmp-{uuid.uuid4().hex[:8]}"
            shutil.copytree(source, scratch)
            if target.exists():  # left by a crash before the index was written: not a version
                shutil.rmtree(target)
            os.replace(scratch, target)
            record = ModelVersion(
                name=name,
                version=version,
                path=str(target),
                created_at=datetime.now(UTC).isoformat(timespec="seconds"),
                metrics=metrics,
                lineage=lineage,
            )
            entry["versions"][str(version)] = record.model_dump(mode="json")
            self._write(index)
        return record

    def get(self, name: str, version: int) -> ModelVersion:
        entry = self._read().get(name)
        if entry is None or str(version) not in entry["versions"]:
            raise KeyError(f"no model {name} version {version} in {self.index_path}")
        return ModelVersion.model_validate(entry["versions"][str(version)])

    def versions(self, name: str) -> list[ModelVersion]:
        entry = self._read().get(name, {"versions": {}})
        return [
            ModelVersion.model_validate(v)
            for _, v in sorted(entry["versions"].items(), key=lambda kv: int(kv[0]))
        ]

    def names(self) -> list[str]:
        return sorted(self._read())

    def aliases(self, name: str) -> dict[str, int]:
        return dict(self._read().get(name, {}).get("aliases", {}))

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
            entry["aliases"][alias] = version
            entry.setdefault("history", []).append(
                {
                    "alias": alias,
                    "version": version,
                    "at": datetime.now(UTC).isoformat(timespec="seconds"),
                }
            )
            self._write(index)

    def previous(self, name: str, alias: str) -> ModelVersion | None:
        """The version `alias` pointed at before its current one (what a rollback returns to)."""
        entry = self._read().get(name, {})
        current = entry.get("aliases", {}).get(alias)
        earlier = [h["version"] for h in entry.get("history", []) if h["alias"] == alias]
        for version in reversed(earlier):
            if version != current:
                return self.get(name, version)
        return None

    @contextmanager
    def _locked(self) -> Iterator[dict[str, Any]]:
        self.root.mkdir(parents=True, exist_ok=True)
        with (self.root / ".lock").open("w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                yield self._read()
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def _read(self) -> dict[str, Any]:
        if not self.index_path.exists():
            return {}
        return json.loads(self.index_path.read_text())

    def _write(self, index: dict[str, Any]) -> None:
        tmp = self.index_path.with_name(f"index.json.tmp-{uuid.uuid4().hex[:8]}")
        with tmp.open("w") as f:
            json.dump(index, f, indent=2)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.index_path)
