"""A registered model version's record, and the registry contract every platform keeps.

`ModelVersion` is what a registry returns: where the version's files are, its metrics, typed
lineage, the sha256 of every file and a signature with the approval key. `ModelRegistry` is
what the stages call, whichever platform keeps the versions (platforms/registry.py for MLflow,
platforms/azureml/registry.py for Azure ML).
"""

from __future__ import annotations

import hashlib
import hmac
import json
from pathlib import Path
from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field

from platforms.lineage import Lineage

ALIASES = ("champion", "challenger")
NEEDS_RETRAIN = "needs-retrain"  # a version's tag: data it was trained on was erased (why)
VERSION_FILE = "version.json"


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
    model_subdir: str = Field(
        "",
        description="Where the model folder sits inside the version's files (`artifacts/model`:"
        " the version is an MLflow model, serving/mlflow_model.py); `path` ends with it, `files`"
        " hash the whole version.",
    )

    @property
    def root(self) -> str:
        """The folder (or URI) of all the version's files: `path` without `model_subdir`."""
        if self.model_subdir and self.path.endswith("/" + self.model_subdir):
            return self.path[: -len(self.model_subdir) - 1]
        return self.path

    def signed_content(self) -> bytes:
        content = self.model_dump(mode="json", exclude={"path", "signature"})
        return json.dumps(content, sort_keys=True, separators=(",", ":")).encode("utf-8")

    def signed(self, key: bytes) -> ModelVersion:
        digest = hmac.new(key, self.signed_content(), hashlib.sha256).hexdigest()
        return self.model_copy(update={"signature": digest})

    def signed_by(self, key: bytes) -> bool:
        """Whether the record's signature holds with `key`: over the record as this release
        writes it, or as the release that added reviewer identities (2026-11-29, e92468b to
        5c1a1ca) wrote it, with its approval's empty identity as `"identity": null` (the same
        record: that release's approval records drop the key, this one's records never had it)."""
        contents = [self.signed_content()]
        dumped = self.model_dump(mode="json", exclude={"path", "signature"})
        approval = dumped.get("lineage", {}).get("approval")
        if isinstance(approval, dict) and "identity" not in approval:
            approval["identity"] = None
            contents.append(json.dumps(dumped, sort_keys=True, separators=(",", ":")).encode())
        return any(
            hmac.compare_digest(hmac.new(key, c, hashlib.sha256).hexdigest(), self.signature)
            for c in contents
        )


class AliasRecord(BaseModel):
    """Where tunegate last pointed an alias, kept in the registry itself (a tag on the version:
    when it got the alias), so a change made elsewhere is seen against it."""

    model_config = ConfigDict(frozen=True)
    version: int
    since: str  # ISO time tunegate pointed the alias at it


def alias_moved(
    name: str, alias: str, actual: int | None, recorded: AliasRecord | None
) -> str | None:
    """What changed `name@alias` outside tunegate (the MLflow UI or client), and what to do;
    None when the alias is where tunegate left it (or neither ever set it)."""
    if actual == (recorded.version if recorded else None):
        return None
    elsewhere = "outside tunegate (the MLflow UI or client)"
    if recorded is None:
        return (
            f"{name}@{alias} is version {actual}, set {elsewhere}: tunegate never set it; "
            f"`tunegate models promote {name} {actual} --alias {alias}` adopts it"
        )
    ours = f"tunegate made version {recorded.version} {alias} at {recorded.since}"
    fix = f"`tunegate models promote {name} {recorded.version} --alias {alias}` restores it"
    if actual is None:
        return f"{name}@{alias} was removed {elsewhere}; {ours}: {fix}"
    return (
        f"{name}@{alias} is version {actual}, moved {elsewhere}; {ours}: {fix}, "
        f"`tunegate models promote {name} {actual} --alias {alias}` keeps the move"
    )


def serving_differs(name: str, champion: int | None, serving: str | None) -> str | None:
    """What is off when `name`'s endpoint serves `serving` (a `name:version` label, at 100%)
    and `name@champion` is another version, or none; None when they agree or nothing serves."""
    if serving is None or serving == f"{name}:{champion}":
        return None
    held = f"version {champion}" if champion is not None else "no version"
    return f"{name}@champion is {held}, but its endpoint serves {serving}"


def alias_notice(registry: ModelRegistry, name: str, alias: str = "champion") -> str | None:
    """`alias_moved` for `name@alias` as the registry holds it now."""
    return alias_moved(
        name, alias, registry.aliases(name).get(alias), registry.recorded_alias(name, alias)
    )


class ModelRegistry(Protocol):
    # register: a training job (lineage.training_job) is registered once; again, the
    # version it became is returned. `card`: the model card, written as the model folder's
    # README.md (CARD_FILE) among the version's files.
    def register(
        self,
        name: str,
        source: Path | str,
        metrics: dict[str, float],
        lineage: Lineage,
        card: str | None = None,
    ) -> ModelVersion: ...
    def get(self, name: str, version: int) -> ModelVersion: ...
    def versions(self, name: str) -> list[ModelVersion]: ...
    def names(self) -> list[str]: ...
    def alias(self, name: str, alias: str) -> ModelVersion | None: ...
    def aliases(self, name: str) -> dict[str, int]: ...
    # set_alias: the alias moves, and the registry records the move (AliasRecord) beside it
    def set_alias(self, name: str, alias: str, version: int) -> None: ...
    # recorded_alias: where tunegate last pointed the alias, whatever happened to it since
    def recorded_alias(self, name: str, alias: str) -> AliasRecord | None: ...
    # previous: the version that held the alias before the recorded one (a rollback's target)
    def previous(self, name: str, alias: str) -> ModelVersion | None: ...
    # tags: the version's registry tags (what was set after registration: needs-retrain ...)
    def tags(self, name: str, version: int) -> dict[str, str]: ...
    # mark_needs_retrain: tag the version `needs-retrain` with why (data it was trained on was
    # erased); its files and signed record stay as registered
    def mark_needs_retrain(self, name: str, version: int, why: str) -> None: ...
    # download: the version's files on this machine (a local registry's folder, checked)
    def download(self, version: ModelVersion) -> Path: ...
    # verify: raise ModelFilesChanged when the version's files are not what was registered
    def verify(self, version: ModelVersion) -> None: ...
