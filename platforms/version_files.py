"""A registered version's files on disk: what goes into them (an MLflow model, the model card),
their hashes, and the check against the version's record.

At registration every file of a version is hashed into its record (`ModelVersion.files`); each
time the version is used its folder is hashed again and compared (`problems`), so a file edited,
added or removed after the approval is found before the model serves.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from platforms.model_version import VERSION_FILE, ModelVersion

CARD_FILE = "README.md"  # the model card, in the version's model folder (tasks/model_card.py)


def problems(version: ModelVersion, key: bytes | None) -> list[str]:
    """What differs between the version's folder and its registered record: an edited
    `version.json`, a record whose signature fails (when `key`, the approval key, is given), a
    file missing, changed or added."""
    folder = Path(version.root)
    found = []
    if key is not None and not version.signed_by(key):
        found.append("its record's signature does not hold (edited, or another key)")
    record_file = folder / VERSION_FILE
    if not record_file.exists():
        found.append(f"{VERSION_FILE} is missing")
    else:
        kept = ModelVersion.model_validate_json(record_file.read_text())
        if kept.model_dump(exclude={"path"}) != version.model_dump(exclude={"path"}):
            found.append(f"{VERSION_FILE} was edited")
    actual = file_hashes(folder) if folder.is_dir() else {}
    for name, digest in sorted(version.files.items()):
        if name not in actual:
            found.append(f"{name} is missing")
        elif actual[name] != digest:
            found.append(f"{name} changed after registration (sha256 differs)")
    found += [
        f"{name} was added after registration" for name in sorted(set(actual) - set(version.files))
    ]
    return found


def stage(source: Path, staged: Path) -> str:
    """The version's files in `staged`: a trained tunegate model as an MLflow model (its folder
    inside, whose path is returned), any other folder as it is ("")."""
    from trainer.modeling import MODEL_INFO

    info = source / MODEL_INFO
    if not info.exists() or "task" not in json.loads(info.read_text() or "{}"):
        shutil.copytree(source, staged, dirs_exist_ok=True)  # not a model tunegate trained
        return ""
    from serving.mlflow_model import model_files, write_mlflow_model

    write_mlflow_model(source, staged)
    return model_files(staged).relative_to(staged).as_posix()


def write_card(model_folder: Path, card: str) -> None:
    """The model card as `model_folder`'s README.md (a new file: never one a hard link shares)."""
    path = model_folder / CARD_FILE
    path.unlink(missing_ok=True)
    path.write_text(card)


@contextmanager
def with_card(source: Path, card: str) -> Iterator[Path]:
    """A copy of the model folder `source` with the card as its README.md, for as long as the
    block runs: hard links where the file system allows (no model is copied), else copies."""
    with tempfile.TemporaryDirectory(prefix="tunegate-card-") as scratch:
        copy = Path(scratch) / source.name
        try:
            shutil.copytree(source, copy, copy_function=os.link)
        except OSError:  # another file system
            shutil.rmtree(copy, ignore_errors=True)
            shutil.copytree(source, copy)
        write_card(copy, card)
        yield copy


def file_hashes(folder: Path) -> dict[str, str]:
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
