"""The inputs of an ingest: every file and `datasets` folder the configured inputs name, the
format each is read in, and each one's identity for the cache key (its content hash locally, its
ETag on Blob)."""

from __future__ import annotations

import hashlib
import os
import stat
from typing import Any

import fsspec

from platforms.blob import AzureStorageConfig, storage_options
from platforms.hashing import combine_hashes, sha256_text, stable_json
from tasks.datasets_folders import group_listing
from tasks.datasheets import is_sidecar
from tasks.readers import detect_format, reads_plain_text
from tasks.records import TaskType


def expand_inputs(
    inputs: list[str],
    azure: AzureStorageConfig,
    task: TaskType | str | None = None,
    *,
    allow_empty: bool = False,
) -> list[str]:
    """Every input the inputs name, sorted; a ValueError names an input that matches nothing
    (with `allow_empty`, such an input adds nothing: a scheduled run's empty inbox).

    An input is a file or a `datasets` folder: a folder met in a directory, or matched by a glob
    together with its marker file, is one input, never its Arrow and JSON files one by one. A
    `.txt` file met in a directory is an input of a `task` whose records are raw text only (for
    another, a note beside the data)."""
    plain_text = task is not None and reads_plain_text(task)
    if not inputs:
        raise ValueError("ingest.inputs is empty: give at least one file, directory or glob")
    files: list[str] = []
    for spec in inputs:
        fs, path = fsspec.core.url_to_fs(spec, **storage_options(spec, azure))
        protocol = spec.split("://", 1)[0] + "://" if "://" in spec else ""
        if any(ch in path for ch in "*?["):
            matches = fs.glob(path, detail=True)
            found = _inputs_among(
                fs,
                named=[m for m, info in matches.items() if info["type"] != "directory"],
                directories=[m for m, info in matches.items() if info["type"] == "directory"],
                plain_text=plain_text,
            )
        elif fs.isdir(path):
            found = _inputs_among(fs, named=[], directories=[path], plain_text=plain_text)
        elif fs.exists(path):
            found = [path]
            _regular_file(spec, path, protocol)
        else:
            found = []
        if not found and not allow_empty:
            raise ValueError(f"ingest.inputs: nothing matches {spec!r}")
        files.extend(protocol + p if protocol else p for p in found)
    return sorted(dict.fromkeys(files))


def _regular_file(spec: str, path: str, protocol: str) -> None:
    """A local input must be a regular file (or a folder): a device (`/dev/zero`), a FIFO or a
    socket would be read forever or block until someone writes."""
    if protocol in ("", "file://") and not stat.S_ISREG(os.stat(path).st_mode):
        raise ValueError(
            f"ingest.inputs: {spec!r} is not a regular file (a device, FIFO or socket); "
            "give a file or a folder"
        )


def _inputs_among(fs: Any, named: list[str], directories: list[str], plain_text: bool) -> list[str]:
    """The named files and the files with a known extension anywhere under the directories,
    except that a datasets folder among them (the one a marker file sits in) is one input."""
    listed = {p for d in directories for p in fs.find(d)}
    # a datasheet beside the data (tasks/datasheets.py) is never an input of its own
    folders, files = group_listing(sorted(p for p in {*named, *listed} if not is_sidecar(p)))
    kept = [p for p in files if p not in listed or _known_extension(p, plain_text)]
    return sorted([*folders, *kept])


def input_format(uri: str, configured: str, options: dict[str, Any]) -> str:
    """The format an input is read in: the configured one; for `auto` its extension's, and a
    directory `expand_inputs` kept is a datasets folder (`hf`)."""
    if configured != "auto":
        return configured
    try:
        return detect_format(uri)
    except ValueError:
        fs, path = fsspec.core.url_to_fs(uri, **options)
        if fs.isdir(path):
            return "hf"
        raise


def _known_extension(path: str, plain_text: bool) -> bool:
    try:
        found = detect_format(path)
    except ValueError:
        return False
    return plain_text or found != "text"


def fingerprint(uri: str, azure: AzureStorageConfig) -> str:
    """An input's identity for the cache key: its content hash locally, its ETag on Blob; a
    datasets folder's is made of those of every file in it."""
    options = storage_options(uri, azure)
    fs, path = fsspec.core.url_to_fs(uri, **options)
    info = fs.info(path)
    if info["type"] != "directory":
        return _file_fingerprint(fs, uri, path, info, remote=bool(options))
    files = fs.find(path, detail=True)
    return combine_hashes(
        f"{p[len(path) :]}={_file_fingerprint(fs, p, p, files[p], remote=bool(options))}"
        for p in sorted(files)
    )


def _file_fingerprint(fs: Any, uri: str, path: str, info: dict[str, Any], remote: bool) -> str:
    if remote:
        return sha256_text(stable_json([uri, info.get("etag"), info.get("size")]))
    digest = hashlib.sha256()
    with fs.open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()
