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
    def set_alias(self, name: str, alias: str, version: int) -> None: ...
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
