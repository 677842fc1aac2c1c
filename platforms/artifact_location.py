"""Where a registered version's files live: a local folder (the store's `file:` artifact
location, published by a rename) or any MLflow artifact repository (uploaded)."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def local_path(location: str) -> Path | None:
    """The folder of a `file:` location or a plain path; None for any other scheme."""
    if location.startswith("file://"):
        from urllib.parse import unquote, urlparse

        return Path(unquote(urlparse(location).path))
    if "://" in location or location.startswith(("models:", "runs:")):
        return None
    return Path(location)


@contextmanager
def staging_folder(location: str) -> Iterator[Path]:
    """An empty folder to put a version's files together in: beside its final folder for a
    local location (published by a rename), else a temporary one (uploaded)."""
    local = local_path(location)
    if local is None:
        with tempfile.TemporaryDirectory(prefix="tunegate-version-") as scratch:
            yield Path(scratch) / "files"
        return
    scratch = scratch_of(local)
    scratch.parent.mkdir(parents=True, exist_ok=True)
    try:
        yield scratch
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def scratch_of(local: Path) -> Path:
    return local.with_name(f".tmp-{local.name}")


def upload(staged: Path, location: str) -> None:
    """Publish the staged files at `location`: a rename here, or MLflow's artifact repository
    for an MLflow server's store."""
    local = local_path(location)
    if local is not None:
        os.rename(staged, local)
        return
    from mlflow.store.artifact.artifact_repository_registry import get_artifact_repository

    get_artifact_repository(location).log_artifacts(str(staged))


def read_remote(location: str, name: str) -> str | None:
    from mlflow.store.artifact.artifact_repository_registry import get_artifact_repository

    with tempfile.TemporaryDirectory() as scratch:
        try:
            path = get_artifact_repository(location).download_artifacts(name, scratch)
        except Exception:  # noqa: BLE001 - any store's "not there"
            return None
        return Path(path).read_text()
