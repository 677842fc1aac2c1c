"""Model registry: versions, aliases (`champion`, `challenger`) and lineage.

The local registry is MLflow's Model Registry on the store's tracking database
(platforms/tracking.py: `{store}/mlflow/mlflow.db` unless `tracking.uri` says otherwise), so
`mlflow ui`, `MlflowClient` and `models:/NAME@champion` see what tunegate registers. A version's
files are uploaded to the registered model's artifact location (`.../registered/<id>/`) with its
record, `version.json` (metrics, typed lineage, the sha256 of every file, signed with the approval
key); the version's tags carry the scalar lineage fields, the metrics and the record's sha256,
and its description says where it came from. A version becomes visible once its record is
written; one whose registration died half way (its writer process gone) is deleted by the next
registration. Two runs registering at once get two versions (MLflow numbers them); two runs
registering the same training job keep one (the lower number: the other deletes its own).
Aliases are MLflow's own; tunegate keeps its own history of them in MLflow too, as version tags:
`alias.<name>.at` (when tunegate last gave the version the alias) and `alias.<name>.until` (when
tunegate moved it on). That history is what a rollback reads, and what an alias deleted or moved
outside tunegate (the MLflow UI, `MlflowClient`) is compared with (`recorded_alias`,
platforms/model_version.py's `alias_moved`).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import socket
import time
import uuid
from contextlib import suppress
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from platforms import version_files
from platforms.artifact_location import local_path, read_remote, scratch_of, staging_folder, upload
from platforms.lineage import Lineage
from platforms.locks import process_alive
from platforms.model_version import (
    ALIASES,
    NEEDS_RETRAIN,
    VERSION_FILE,
    AliasRecord,
    ModelFilesChanged,
    ModelVersion,
)


class MlflowRegistry:
    """`ModelRegistry` on MLflow's Model Registry at `uri` (see the module docstring)."""

    def __init__(
        self,
        uri: str,
        signing_key: bytes | None = None,
        download_root: Path | None = None,
        artifact_root: Path | None = None,
    ) -> None:
        """`signing_key` (the approval key, outside the store): version records are signed with
        it at registration and checked with it whenever a version's files are used.
        `download_root`: where files of versions kept elsewhere (an MLflow server's artifact
        store) are downloaded to. `artifact_root`: where a local store keeps its MLflow files
        (None: the tracking server's own artifact store)."""
        from platforms import tracking

        self.uri = uri
        self.client = tracking.client(uri)
        self.signing_key = signing_key
        self.download_root = download_root
        self.artifact_root = artifact_root

    @classmethod
    def local(cls, store: Path, signing_key: bytes | None = None) -> MlflowRegistry:
        """The registry of a local store: its own MLflow database (created when missing)."""
        from platforms import tracking

        store = Path(store)
        uri = tracking.ensure_local_database(store)
        return cls(
            uri, signing_key, store / "mlflow" / "cache", tracking.local_artifact_root(store)
        )

    def register(
        self,
        name: str,
        source: Path | str,
        metrics: dict[str, float],
        lineage: Lineage,
        card: str | None = None,
    ) -> ModelVersion:
        """Upload `source` as the next version of `name`; a failed registration leaves no
        version. A training job is registered once: when `lineage.training_job` names a job
        some version already came from, that version is returned. `card` (the model card)
        replaces the model folder's README.md before the files are hashed."""
        from mlflow.entities.model_registry import ModelVersion as MlflowVersion

        existing = self._same_job(name, lineage)
        if existing:
            return existing[0]
        self._ensure_model(name)
        self._remove_dead(name)
        location = f"{self._model_location(name)}/registered/{uuid.uuid4().hex}"
        tags = {**lineage.tags(), **{f"{_METRIC}{k}": repr(float(v)) for k, v in metrics.items()}}
        tags[_WRITER] = f"{socket.gethostname()}:{os.getpid()}"
        created: MlflowVersion | None = None
        try:
            created = self.client.create_model_version(
                name,
                source=location,
                run_id=self._run_id(lineage.tracking_run_id),
                tags=tags,
                description=_description(lineage, metrics, card),
            )
            with staging_folder(location) as staged:
                subdir = version_files.stage(Path(source), staged)
                if card is not None:
                    version_files.write_card(staged / subdir if subdir else staged, card)
                root = str(local_path(location) or location)
                record = ModelVersion(
                    name=name,
                    version=int(created.version),
                    path=f"{root}/{subdir}" if subdir else root,
                    created_at=_created_at(created.creation_timestamp),
                    metrics=metrics,
                    lineage=lineage,
                    files=version_files.file_hashes(staged),
                    model_subdir=subdir,
                )
                if self.signing_key is not None:
                    record = record.signed(self.signing_key)
                text = record.model_dump_json(indent=2)
                (staged / VERSION_FILE).write_text(text)
                upload(staged, location)
            self.client.set_model_version_tag(name, created.version, _RECORD, _sha256(text))
            self.client.delete_model_version_tag(name, created.version, _WRITER)
        except BaseException:
            if created is not None:
                self._delete(name, created.version, location)
            raise
        first = self._first_of_job(name, lineage, record.version)
        if first is not None:  # another run registered the same job meanwhile: keep the first
            self._delete(name, created.version, location)
            return first
        return record

    def _first_of_job(
        self, name: str, lineage: Lineage, mine: int, wait_s: float = 600.0
    ) -> ModelVersion | None:
        """A version of the same training job numbered below `mine`, once it is registered;
        None when there is none. One still being registered by a live process is waited for
        (it will keep its number and this one goes); one whose writer died does not count."""
        if lineage.training_job is None:
            return None
        deadline = time.monotonic() + wait_s
        while True:
            pending = False
            for found in sorted(self._mlflow_versions(name), key=lambda v: int(v.version)):
                tags = found.tags or {}
                if int(found.version) >= mine or tags.get("training_job") != lineage.training_job:
                    continue
                if _RECORD in tags:
                    return self._record(found)
                pending = pending or _writer_alive(tags.get(_WRITER, ""))
            if not pending or time.monotonic() > deadline:
                return None
            time.sleep(0.2)

    def get(self, name: str, version: int) -> ModelVersion:
        from mlflow.exceptions import MlflowException

        try:
            found = self.client.get_model_version(name, str(version))
        except MlflowException:
            raise KeyError(f"no model {name} version {version} in {self.uri}") from None
        record = self._record(found)
        if record is None:
            raise KeyError(f"no model {name} version {version} in {self.uri} (not registered)")
        return record

    def versions(self, name: str) -> list[ModelVersion]:
        found = [self._record(v) for v in self._mlflow_versions(name)]
        return sorted((v for v in found if v is not None), key=lambda v: v.version)

    def names(self) -> list[str]:
        return sorted(m.name for m in self._search_models())

    def aliases(self, name: str) -> dict[str, int]:
        from mlflow.exceptions import MlflowException

        try:
            model = self.client.get_registered_model(name)
        except MlflowException:
            return {}
        return {a: int(v) for a, v in (model.aliases or {}).items()}

    def alias(self, name: str, alias: str) -> ModelVersion | None:
        version = self.aliases(name).get(alias)
        return None if version is None else self.get(name, version)

    def set_alias(self, name: str, alias: str, version: int) -> None:
        """Point `alias` at `version`, and record it on the versions: `alias.<alias>.at` on the
        new holder, `alias.<alias>.until` on the one it leaves (the recorded and MLflow's own)."""
        if alias not in ALIASES:
            raise ValueError(f"alias must be one of {ALIASES}, got {alias!r}")
        self.get(name, version)  # KeyError when there is no such version
        when = datetime.now(UTC).isoformat(timespec="microseconds")
        recorded = self.recorded_alias(name, alias)
        leaving = {self.aliases(name).get(alias), recorded and recorded.version} - {None, version}
        for old in sorted(v for v in leaving if v is not None):
            self.client.set_model_version_tag(name, str(old), _alias_until(alias), when)
        self.client.set_model_version_tag(name, str(version), _alias_at(alias), when)
        with suppress(Exception):  # held before: no longer "until"
            self.client.delete_model_version_tag(name, str(version), _alias_until(alias))
        self.client.set_registered_model_alias(name, alias, str(version))

    def tags(self, name: str, version: int) -> dict[str, str]:
        from mlflow.exceptions import MlflowException

        try:
            return dict(self.client.get_model_version(name, str(version)).tags or {})
        except MlflowException:
            raise KeyError(f"no model {name} version {version} in {self.uri}") from None

    def mark_needs_retrain(self, name: str, version: int, why: str) -> None:
        """The `needs-retrain` tag, and the same words first in the version's description (what
        the MLflow UI shows on its page)."""
        found = self.client.get_model_version(name, str(version))
        self.client.set_model_version_tag(name, str(version), NEEDS_RETRAIN, why)
        notice = f"NEEDS RETRAIN: {why}."
        description = found.description or ""
        if not description.startswith(notice):
            self.client.update_model_version(
                name, str(version), description=f"{notice} {description}".strip()
            )

    def recorded_alias(self, name: str, alias: str) -> AliasRecord | None:
        """The version tunegate last pointed `alias` at (the latest `alias.<alias>.at`), whether
        or not MLflow's alias still says so."""
        held = self._held(name, alias)
        return AliasRecord(version=held[-1][1], since=held[-1][0]) if held else None

    def previous(self, name: str, alias: str) -> ModelVersion | None:
        """The version that held `alias` before the one tunegate last gave it to (what a
        rollback returns to), read from the versions' tags: an alias deleted or moved elsewhere
        does not lose it."""
        held = self._held(name, alias)
        return self.get(name, held[-2][1]) if len(held) > 1 else None

    def _held(self, name: str, alias: str) -> list[tuple[str, int]]:
        """(when it got `alias`, version) of every version that held it, oldest first."""
        tag = _alias_at(alias)
        return sorted(
            (v.tags[tag], int(v.version))
            for v in self._mlflow_versions(name)
            if tag in (v.tags or {})
        )

    def download(self, version: ModelVersion) -> Path:
        """The version's folder here, once its files are checked against the registered record
        (a version kept on an MLflow server is downloaded once)."""
        root = local_path(version.root)
        if root is None:
            root = self._fetched(version)
        here = root / version.model_subdir if version.model_subdir else root
        self.verify(version.model_copy(update={"path": str(here)}))
        return here

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
        """What differs between the version's folder and its registered record
        (version_files.problems, with this registry's signing key)."""
        return version_files.problems(version, self.signing_key)

    # MLflow's side

    def _record(self, found: Any) -> ModelVersion | None:
        """The tunegate record of an MLflow version; None while it is being registered. A record
        whose file differs from the sha256 the registry holds is read as it was registered
        where the file is gone, and reported by `verify` where it was edited."""
        digest = (found.tags or {}).get(_RECORD)
        if digest is None:
            return None
        location = str(found.source)
        local = local_path(location)
        text = None
        if local is not None and (local / VERSION_FILE).exists():
            text = (local / VERSION_FILE).read_text()
        elif local is None:
            text = read_remote(location, VERSION_FILE)
        if text is None:
            raise ModelFilesChanged(
                f"{found.name}:{found.version}: {VERSION_FILE} is missing from {location}; "
                "restore its files or register the model again"
            )
        record = ModelVersion.model_validate_json(text)
        if _sha256(text) != digest:
            raise ModelFilesChanged(
                f"{found.name}:{found.version} at {location} is not what was registered: "
                f"{VERSION_FILE} was edited; restore it, or delete that version (the MLflow UI, "
                "or MlflowClient.delete_model_version)"
            )
        root = location if local is None else str(local)
        subdir = record.model_subdir
        return record.model_copy(update={"path": f"{root}/{subdir}" if subdir else root})

    def _mlflow_versions(self, name: str) -> list[Any]:
        return list(self.client.search_model_versions(f"name = '{_quoted(name)}'"))

    def _search_models(self) -> list[Any]:
        models, token = [], None
        while True:
            page = self.client.search_registered_models(max_results=1000, page_token=token)
            models += list(page)
            token = page.token
            if not token:
                return models

    def _same_job(self, name: str, lineage: Lineage) -> list[ModelVersion]:
        if lineage.training_job is None:
            return []
        found = [
            self._record(v)
            for v in self._mlflow_versions(name)
            if (v.tags or {}).get("training_job") == lineage.training_job
        ]
        return sorted((v for v in found if v is not None), key=lambda v: v.version)

    def _ensure_model(self, name: str) -> None:
        from mlflow.exceptions import MlflowException

        try:
            self.client.get_registered_model(name)
        except MlflowException:
            try:
                self.client.create_registered_model(name, description=f"tunegate model {name}")
            except MlflowException:  # created meanwhile by another run
                self.client.get_registered_model(name)

    def _model_location(self, name: str) -> str:
        """Where the versions of `name` keep their files: its experiment's artifact location
        (on a local store `{store}/mlflow/artifacts/{name}`)."""
        from platforms import tracking

        experiment = tracking.experiment_id(self.client, name, self.artifact_root)
        return str(self.client.get_experiment(experiment).artifact_location).rstrip("/")

    def _run_id(self, run_id: str | None) -> str | None:
        """`run_id` when that run is in this tracking store (a version links to its run)."""
        from mlflow.exceptions import MlflowException

        if not run_id:
            return None
        try:
            self.client.get_run(run_id)
        except MlflowException:
            return None
        return run_id

    def _remove_dead(self, name: str) -> None:
        """Delete versions whose registration died half way: not yet visible, written by a
        process of this machine that is gone."""
        for found in self._mlflow_versions(name):
            tags = found.tags or {}
            host = tags.get(_WRITER, "").rpartition(":")[0]
            if _RECORD in tags or host != socket.gethostname():
                continue
            if not _writer_alive(tags.get(_WRITER, "")):
                self._delete(name, found.version, str(found.source))

    def _delete(self, name: str, version: str | int, location: str) -> None:
        with suppress(Exception):  # best effort: the version stays invisible without a record
            self.client.delete_model_version(name, str(version))
        local = local_path(location)
        if local is not None:
            shutil.rmtree(local, ignore_errors=True)
            shutil.rmtree(scratch_of(local), ignore_errors=True)

    def _fetched(self, version: ModelVersion) -> Path:
        import mlflow.artifacts

        if self.download_root is None:
            raise ValueError(f"{version.path} is not on this machine and no download folder is set")
        target = self.download_root / version.name / str(version.version)
        if not (target / VERSION_FILE).exists():
            scratch = target.with_name(f".tmp-{uuid.uuid4().hex[:8]}")
            mlflow.artifacts.download_artifacts(
                artifact_uri=version.root, dst_path=str(scratch), tracking_uri=self.uri
            )
            shutil.rmtree(target, ignore_errors=True)
            os.rename(scratch, target)
        return target


_RECORD = "tunegate.record_sha256"
_WRITER = "tunegate.registering"
_METRIC = "metric."


def _writer_alive(writer: str) -> bool:
    """Whether the `host:pid` registering a version may still be at it (another machine's
    writer is taken to be)."""
    host, _, pid = writer.rpartition(":")
    if host != socket.gethostname():
        return bool(writer)
    return pid.isdigit() and process_alive(int(pid))


def _alias_at(alias: str) -> str:
    return f"alias.{alias}.at"


def _alias_until(alias: str) -> str:
    return f"alias.{alias}.until"


def _quoted(value: str) -> str:
    return value.replace("'", "\\'")


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _created_at(millis: int | None) -> str:
    when = datetime.fromtimestamp((millis or 0) / 1000, UTC) if millis else datetime.now(UTC)
    return when.isoformat(timespec="seconds")


_DESCRIPTION_LIMIT = 5000  # what MLflow's database column holds


def _description(lineage: Lineage, metrics: dict[str, float], card: str | None = None) -> str:
    """What a person reads on the version's page: where it came from, then its model card
    (MLflow renders it as markdown; a card longer than the page takes is cut, the whole one is
    the version's README.md)."""
    line = _origin(lineage, metrics)
    if not card:
        return line
    if card.startswith("---\n") and "\n---\n" in card[4:]:  # the Hub's front matter: not prose
        card = card[4:].split("\n---\n", 1)[1]
    text = f"{line}\n\n{card.strip()}"
    if len(text) <= _DESCRIPTION_LIMIT:
        return text
    cut = "\n\n_(cut: the whole card is the version's README.md)_"
    return text[: _DESCRIPTION_LIMIT - len(cut)] + cut


def _origin(lineage: Lineage, metrics: dict[str, float]) -> str:
    """Where a version came from, in one line."""
    parts = []
    if lineage.training_job:
        parts.append(f"Trained by job `{lineage.training_job}`")
    if lineage.datasets.get("split"):
        parts.append(f"on split `{lineage.datasets['split'][:12]}`")
    if lineage.approval is not None:
        parts.append(f"approved by {lineage.approval.reviewer} ({lineage.approval.mode})")
    if metrics:
        parts.append("metrics: " + ", ".join(f"{k} {v:.2f}" for k, v in sorted(metrics.items())))
    if lineage.tracking_run_id:
        parts.append(f"run `{lineage.tracking_run_id}`")
    return "; ".join(parts) + ("." if parts else "")
