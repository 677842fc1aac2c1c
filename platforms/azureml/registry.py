"""The Azure ML model registry: model assets with lineage, aliases kept as tags.

A version's metrics and full lineage are properties (immutable, like the lineage itself); its
scalar lineage fields are also tags, so the studio can filter on them. An alias is the tag
`alias.<name>` = `true` on the version it points at; every version that ever held it keeps
`alias.<name>.at` (when it last got it), which is the history a rollback reads.
"""

from __future__ import annotations

import contextlib
import json
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from azure.core.exceptions import ResourceNotFoundError

from platforms.azureml import entities
from platforms.azureml.client import retrying
from platforms.azureml.config import ModelType
from platforms.lineage import Lineage
from platforms.model_version import ALIASES, NEEDS_RETRAIN, AliasRecord, ModelVersion
from platforms.version_files import with_card

_LINEAGE = "tunegate.lineage"
_METRIC = "metric."


def _alias_tag(alias: str) -> str:
    return f"alias.{alias}"


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")


class AzureMLRegistry:
    """`ModelRegistry` over `ml_client.models`; `ModelVersion.path` is `azureml:<name>:<version>`.

    `model_type` mlflow_model registers each version as an MLflow model: the model folder turned
    into an MLflow pyfunc folder here (`serving.mlflow_model`), uploaded, type `mlflow_model`;
    custom_model registers the folder (or the training job's output) as it is."""

    def __init__(
        self, ml_client: Any, download_root: Path, model_type: ModelType = "custom_model"
    ) -> None:
        self.client = ml_client
        self.download_root = download_root
        self.model_type = model_type

    def register(
        self,
        name: str,
        source: Path | str,
        metrics: dict[str, float],
        lineage: Lineage,
        card: str | None = None,
    ) -> ModelVersion:
        """The next version of `name` from a job output (`azureml://jobs/...`) or a local folder;
        the existing version when `lineage.training_job` was registered before. `card` (the
        model card) is the uploaded folder's README.md; a job's output is registered as the
        job wrote it (PEFT's template stays)."""
        versions = self.versions(name)
        for existing in versions:
            if lineage.same_job(existing.lineage):
                return existing
        version = max((v.version for v in versions), default=0) + 1
        tags = lineage.tags()
        properties = {_LINEAGE: json.dumps(lineage.model_dump(mode="json"), sort_keys=True)}
        properties.update({_METRIC + k: repr(float(v)) for k, v in metrics.items()})
        with contextlib.ExitStack() as scratch:
            if card is not None and isinstance(source, Path):
                source = scratch.enter_context(with_card(source, card))
            if self.model_type == "mlflow_model":
                source = self._mlflow_folder(source, scratch)
            model = entities.model_asset(name, str(source), tags, properties, self.model_type)
            model.version = str(version)
            created = retrying(
                lambda: self.client.models.create_or_update(model), f"register {name}:{version}"
            )
        return self._version(created)

    def _mlflow_folder(self, source: Path | str, scratch: contextlib.ExitStack) -> Path:
        """The MLflow model of the local model folder `source`, in a temporary folder that lives
        as long as `scratch` (until it is uploaded)."""
        if not isinstance(source, Path):
            raise ValueError(
                f"azureml.model_type mlflow_model builds the MLflow model from local files, "
                f"got {source}: register the downloaded model folder"
            )
        from serving.mlflow_model import write_mlflow_model  # mlflow: only when it is chosen

        self.download_root.mkdir(parents=True, exist_ok=True)
        folder = Path(scratch.enter_context(tempfile.TemporaryDirectory(dir=self.download_root)))
        write_mlflow_model(source, folder / "mlflow-model")
        return folder / "mlflow-model"

    def get(self, name: str, version: int) -> ModelVersion:
        try:
            found = retrying(
                lambda: self.client.models.get(name, version=str(version)), f"get {name}:{version}"
            )
        except ResourceNotFoundError:
            raise KeyError(f"no model {name} version {version} in the workspace") from None
        return self._version(found)

    def versions(self, name: str) -> list[ModelVersion]:
        return sorted((self._version(m) for m in self._assets(name)), key=lambda v: v.version)

    def names(self) -> list[str]:
        return sorted(m.name for m in retrying(lambda: list(self.client.models.list()), "models"))

    def aliases(self, name: str) -> dict[str, int]:
        assets = self._assets(name)
        return {
            alias: int(held.version)
            for alias in ALIASES
            if (held := _holder(assets, alias)) is not None
        }

    def alias(self, name: str, alias: str) -> ModelVersion | None:
        held = _holder(self._assets(name), alias)
        return None if held is None else self._version(held)

    def set_alias(self, name: str, alias: str, version: int) -> None:
        """Move `alias` to `version`: tag the new holder first, then untag the old ones."""
        if alias not in ALIASES:
            raise ValueError(f"alias must be one of {ALIASES}, got {alias!r}")
        assets = {int(m.version): m for m in self._assets(name)}
        if version not in assets:
            raise KeyError(f"no model {name} version {version}")
        tag = _alias_tag(alias)
        target = assets[version]
        target.tags = {**(target.tags or {}), tag: "true", f"{tag}.at": _now()}
        self._update(target)
        for number, model in assets.items():
            if number != version and (model.tags or {}).get(tag) == "true":
                model.tags = {**model.tags, tag: "false"}
                self._update(model)

    def tags(self, name: str, version: int) -> dict[str, str]:
        assets = {int(m.version): m for m in self._assets(name)}
        if version not in assets:
            raise KeyError(f"no model {name} version {version}")
        return dict(assets[version].tags or {})

    def mark_needs_retrain(self, name: str, version: int, why: str) -> None:
        assets = {int(m.version): m for m in self._assets(name)}
        if version not in assets:
            raise KeyError(f"no model {name} version {version}")
        target = assets[version]
        target.tags = {**(target.tags or {}), NEEDS_RETRAIN: why}
        self._update(target)

    def recorded_alias(self, name: str, alias: str) -> AliasRecord | None:
        """The version tunegate last gave `alias` (the latest `alias.<alias>.at` tag)."""
        tag = f"{_alias_tag(alias)}.at"
        held = [
            (m.tags[tag], int(m.version)) for m in self._assets(name) if (m.tags or {}).get(tag)
        ]
        return AliasRecord(version=max(held)[1], since=max(held)[0]) if held else None

    def previous(self, name: str, alias: str) -> ModelVersion | None:
        """The version that held `alias` most recently before its current holder."""
        assets = self._assets(name)
        current = _holder(assets, alias)
        tag = f"{_alias_tag(alias)}.at"
        earlier = [m for m in assets if (m.tags or {}).get(tag) and m is not current]
        if not earlier:
            return None
        return self._version(max(earlier, key=lambda m: m.tags[tag]))

    def download(self, version: ModelVersion) -> Path:
        """The version's files on this machine (downloaded once), e.g. to score a champion."""
        target = self.download_root / version.name / str(version.version)
        marker = target / ".downloaded"
        if not marker.exists():
            retrying(
                lambda: self.client.models.download(
                    version.name, version=str(version.version), download_path=str(target)
                ),
                f"download {version.name}:{version.version}",
            )
            marker.touch()
        return _model_folder(target)

    def verify(self, version: ModelVersion) -> None:
        """Nothing to check here: an Azure ML model asset's files cannot change once it is
        registered (a new upload is a new version)."""

    def _assets(self, name: str) -> list[Any]:
        try:
            return retrying(lambda: list(self.client.models.list(name=name)), f"list {name}")
        except ResourceNotFoundError:
            return []

    def _update(self, model: Any) -> None:
        retrying(
            lambda: self.client.models.create_or_update(model), f"tag {model.name}:{model.version}"
        )

    @staticmethod
    def _version(model: Any) -> ModelVersion:
        properties = model.properties or {}
        created = getattr(getattr(model, "creation_context", None), "created_at", None)
        return ModelVersion(
            name=model.name,
            version=int(model.version),
            path=f"azureml:{model.name}:{model.version}",
            created_at=str(created or ""),
            metrics={
                k.removeprefix(_METRIC): float(v)
                for k, v in properties.items()
                if k.startswith(_METRIC)
            },
            lineage=json.loads(properties.get(_LINEAGE, "{}")),
        )


def _holder(assets: list[Any], alias: str) -> Any | None:
    """The asset tagged as holding `alias` (the latest to get it, should two say so)."""
    tag = _alias_tag(alias)
    holders = [m for m in assets if (m.tags or {}).get(tag) == "true"]
    return max(holders, key=lambda m: m.tags.get(f"{tag}.at", ""), default=None)


def _model_folder(target: Path) -> Path:
    """The folder holding the model files: downloads nest them one or two levels down."""
    from trainer.modeling import MODEL_INFO  # transformers: only when a model is downloaded

    found = sorted(target.rglob(MODEL_INFO), key=lambda p: len(p.parts))
    return found[0].parent if found else target
