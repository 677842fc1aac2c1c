"""The store: content-addressed datasets and JSON records on a local directory or Azure Blob.

A dataset is a directory `{store}/datasets/{stage}/{key}` holding one or more Parquet tables
(`accepted/part-00000.parquet`, ...), optional JSON side files (`report.json`) and a
`manifest.json` written last. A dataset exists once its manifest exists, so a stage that fails
half way never leaves something a later run would mistake for finished work. On a local store the
whole directory is built under a temporary name and renamed into place, which is atomic.
"""

from __future__ import annotations

import glob
import hashlib
import io
import json
import logging
import os
import shutil
import socket
import time
import uuid
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import fsspec
import pyarrow as pa
import pyarrow.parquet as pq

from platforms.keys import KeyMismatch, RawCipher, encrypted_with, is_encrypted, needs_key
from platforms.locks import process_alive, write_text_atomic
from platforms.manifest import (
    UNSIGNED,
    DatasetCorrupt,
    DatasetRef,
    Manifest,
    TableInfo,
    TableRemoved,
    ref_of,
)

log = logging.getLogger(__name__)
MANIFEST = "manifest.json"
OWNER = ".writer.json"  # in a local scratch folder: the host and pid writing it


def private_files() -> None:
    """From now on this process (and what it starts) creates files 0600 and folders 0700.

    A local store holds raw records, quarantined values, credentials found in them and training
    logs: none of it is for other users of the machine. Set by every process that opens a local
    store (the CLI, Dask workers, the trainer and endpoint processes they start inherit it).
    """
    current = os.umask(0o077)
    os.umask(current | 0o077)


class Store:
    """A root URI (local directory or `az://container/prefix`) and the filesystem behind it."""

    def __init__(
        self,
        uri: str,
        storage_options: Mapping[str, Any] | None = None,
        signing_key: bytes | None = None,
    ) -> None:
        """`signing_key` (the approval key, kept outside the store): manifests written are
        signed with it, and manifests read are checked against it."""
        # Local stores are absolute so workers with another working directory find them.
        self.uri = uri.rstrip("/") if "://" in uri else os.path.abspath(uri)
        self.storage_options = dict(storage_options or {})
        self.signing_key = signing_key
        self.fs, self._root = fsspec.core.url_to_fs(self.uri, **self.storage_options)
        self.is_local = (
            self.fs.protocol in ("file", ("file", "local")) or "file" in self.fs.protocol
        )
        if self.is_local:
            private_files()

    @property
    def raw_cipher(self) -> RawCipher | None:
        """What encrypts raw records at rest: derived from the signing key (None without one)."""
        return RawCipher.of(self.signing_key) if self.signing_key is not None else None

    def path(self, *parts: str) -> str:
        """A URI under the store root."""
        return "/".join([self.uri, *parts])

    def dataset_uri(self, stage: str, key: str) -> str:
        return self.path("datasets", stage, key)

    def find_dataset(self, stage: str, key: str) -> DatasetRef | None:
        """The finished dataset at this key, verified against its manifest, or None when there is
        none (or only a partial one); a DatasetCorrupt names a file that changed."""
        uri = self.dataset_uri(stage, key)
        if not self.exists(f"{uri}/{MANIFEST}"):
            return None
        manifest = self.read_manifest(uri)
        self.verify(manifest)
        return ref_of(manifest, reused=True)

    def dataset_at(self, uri: str) -> DatasetRef:
        """The finished dataset at a URI (for the per-stage commands), verified, or a clear error."""
        uri = uri.rstrip("/")
        if not self.exists(f"{uri}/{MANIFEST}"):
            raise FileNotFoundError(f"{uri} is not a finished dataset: it has no {MANIFEST}")
        manifest = self.read_manifest(uri)
        self.verify(manifest)
        return ref_of(manifest, reused=True)

    def problems(self, manifest: Manifest) -> list[str]:
        """Each file of the dataset that is missing or differs from the hash its manifest keeps;
        with a signing key, first a manifest whose signature does not hold, or that names
        another dataset than the folder it is in."""
        found = []
        if self.signing_key is not None:
            if (problem := manifest.signature_problem(self.signing_key)) is not None:
                found.append(problem)
            if manifest.uri.rsplit("/", 1)[-1] != manifest.key:
                found.append(f"its manifest is dataset {manifest.key[:16]}'s, copied here")
        for name, digest in sorted(manifest.files.items()):
            path = _strip(self.fs, f"{manifest.uri}/{name}")
            try:
                actual = self.file_sha256(path)
            except FileNotFoundError:
                found.append(f"{name} is missing")
                continue
            if actual != digest:
                found.append(f"{name} changed after it was written (sha256 differs)")
        return found

    def verify(self, manifest: Manifest) -> None:
        """Raise DatasetCorrupt naming the dataset and its first changed file, if any."""
        problems = self.problems(manifest)
        if problems:
            more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
            raise DatasetCorrupt(
                f"dataset {manifest.uri} does not match its manifest: {problems[0]}{more}; "
                "restore the file or delete the dataset folder so the stage runs again "
                "(tunegate store verify checks the whole store)"
            )

    def sign(self, manifest: Manifest) -> bool:
        """Sign an unsigned manifest whose files all match it (a store written before manifests
        were signed, vouched for by whoever runs this); False when anything else is wrong."""
        if self.signing_key is None or self.problems(manifest) != [UNSIGNED]:
            return False
        signed = manifest.signed(self.signing_key).model_copy(
            update={"uri": self.relative(manifest.uri)}
        )
        self.write_text_atomic(
            f"{manifest.uri}/{MANIFEST}", signed.model_dump_json(indent=2, by_alias=True)
        )
        return True

    def file_sha256(self, path: str) -> str:
        digest = hashlib.sha256()
        with self.fs.open(path, "rb") as f:
            while chunk := f.read(1 << 20):
                digest.update(chunk)
        return digest.hexdigest()

    def manifests(self) -> list[Manifest]:
        """Every finished dataset's manifest in the store, by stage then key."""
        found = self.fs.glob(_strip(self.fs, self.path("datasets", "*", "*", MANIFEST)))
        return [self.read_manifest(self._uri(p.rsplit("/", 1)[0])) for p in sorted(found)]

    def dataset_with_hash(self, stage: str, content_hash: str) -> DatasetRef | None:
        """The finished dataset of `stage` whose content hash is `content_hash` (what a model's
        lineage records; or was, before an erasure rewrote it), verified, or None when the
        store holds none."""
        found = self.fs.glob(_strip(self.fs, self.path("datasets", stage, "*", MANIFEST)))
        for path in sorted(found):
            manifest = self.read_manifest(self._uri(path.rsplit("/", 1)[0]))
            erased = manifest.extra.get("erasures", [])  # rewritten without erased records
            before = {e.get("content_hash_before") for e in erased}
            if content_hash in (manifest.content_hash, *before):
                self.verify(manifest)
                return ref_of(manifest, reused=True)
        return None

    def list(self, uri: str) -> list[str]:
        """The URIs of the entries of the folder `uri`, sorted (empty when it does not exist)."""
        if not self.exists(uri):
            return []
        return sorted(self._uri(p) for p in self.fs.ls(_strip(self.fs, uri), detail=False))

    def glob(self, pattern: str) -> list[str]:
        """The URIs matching `pattern` (a URI with `*`), sorted."""
        return sorted(self._uri(p) for p in self.fs.glob(_strip(self.fs, pattern)))

    def open(self, uri: str, mode: str = "rb") -> Any:
        """A file of the store, opened through its filesystem."""
        return self.fs.open(_strip(self.fs, uri), mode)

    def remove(self, uri: str, recursive: bool = False) -> None:
        """Delete a file (or, `recursive`, a folder and everything in it)."""
        self.fs.rm(_strip(self.fs, uri), recursive=recursive)

    def _uri(self, path: str) -> str:
        """A path of the store's filesystem as a URI of the store (`az://...` on Blob)."""
        return path if self.is_local or "://" in path else f"{self.uri.split('://')[0]}://{path}"

    def exists(self, uri: str) -> bool:
        return self.fs.exists(_strip(self.fs, uri))

    def table_files(self, dataset: DatasetRef, table: str) -> list[str]:
        """URIs of one table's Parquet files, in order."""
        manifest = self.read_manifest(dataset.uri)
        if table not in manifest.tables:
            raise KeyError(f"dataset {dataset.uri} has no table {table!r}")
        if table in manifest.removed:
            raise TableRemoved(
                f"the {table} table of dataset {dataset.uri} is gone: {manifest.removed[table]}"
            )
        return [f"{dataset.uri}/{name}" for name in manifest.tables[table].files]

    def remove_tables(self, dataset: DatasetRef, tables: list[str], why: str) -> bool:
        """Delete the files of `tables` from a finished dataset, its manifest rewritten (and
        signed) to say so: the dataset still verifies and still names its content hash and
        counts. False when they were already gone."""
        manifest = self.read_manifest(dataset.uri)
        gone = [t for t in tables if t in manifest.tables and t not in manifest.removed]
        if not gone:
            return False
        names = {name for t in gone for name in manifest.tables[t].files}
        when = datetime.now(UTC).isoformat(timespec="seconds")
        kept = manifest.model_copy(
            update={
                "files": {n: h for n, h in manifest.files.items() if n not in names},
                "removed": {**manifest.removed, **{t: f"deleted {when}: {why}" for t in gone}},
                "uri": self.relative(manifest.uri),
            }
        )
        if self.signing_key is not None:
            kept = kept.signed(self.signing_key)
        elif manifest.signature:
            raise ValueError(f"dataset {dataset.uri} is signed: removing tables needs its key")
        # the manifest first: a kill between the two leaves files it no longer lists, never a
        # manifest naming files that are gone
        self.write_text_atomic(
            f"{dataset.uri}/{MANIFEST}", kept.model_dump_json(indent=2, by_alias=True)
        )
        for name in sorted(names):
            if self.exists(f"{dataset.uri}/{name}"):
                self.remove(f"{dataset.uri}/{name}")
        return True

    def read_manifest(self, dataset_uri: str) -> Manifest:
        """The manifest of the dataset at `dataset_uri`, its `uri` that location (a manifest
        keeps its place relative to the store: a copied or moved store reads as itself)."""
        manifest = Manifest.model_validate_json(self.read_text(f"{dataset_uri}/{MANIFEST}"))
        return manifest.model_copy(update={"uri": dataset_uri.rstrip("/")})

    def relative(self, uri: str) -> str:
        """`uri` relative to the store's root (as manifests keep it)."""
        root = self.uri.rstrip("/") + "/"
        return uri[len(root) :] if uri.startswith(root) else uri

    def read_text(self, uri: str) -> str:
        with self.fs.open(_strip(self.fs, uri), "rb") as f:
            return f.read().decode("utf-8")

    def write_text_atomic(self, uri: str, text: str) -> None:
        """Write a file so readers see the old content or the new one, never a torn file."""
        path = _strip(self.fs, uri)
        parent = path.rsplit("/", 1)[0]
        self.fs.makedirs(parent, exist_ok=True)
        if self.is_local:
            write_text_atomic(Path(path), text)
        else:  # a blob upload is all-or-nothing already
            with self.fs.open(path, "wb") as f:
                f.write(text.encode("utf-8"))

    def begin_dataset(self, stage: str, key: str) -> DatasetWriter:
        return DatasetWriter(self, stage, key)


class DatasetWriter:
    """Builds a dataset in a scratch location; `commit` writes the manifest and publishes it."""

    def __init__(self, store: Store, stage: str, key: str) -> None:
        self.store = store
        self.stage = stage
        self.key = key
        self.final_uri = store.dataset_uri(stage, key)
        # Local: a sibling temp dir renamed on commit. Blob: write in place, manifest last.
        self.work_uri = (
            store.path("datasets", stage, f".tmp-{key[:16]}-{uuid.uuid4().hex[:8]}")
            if store.is_local
            else self.final_uri
        )
        if store.is_local:
            remove_stale_scratch(os.path.dirname(self.work_uri))
            os.makedirs(self.work_uri)
            owner = {"host": socket.gethostname(), "pid": os.getpid()}
            with open(os.path.join(self.work_uri, OWNER), "w", encoding="utf-8") as f:
                json.dump(owner, f)
        else:
            store.fs.makedirs(_strip(store.fs, self.work_uri), exist_ok=True)

    def part_uri(self, table: str, index: int) -> str:
        return f"{self.work_uri}/{table}/part-{index:05d}.parquet"

    def write_json(self, name: str, value: Any) -> None:
        self.store.write_text_atomic(f"{self.work_uri}/{name}", json.dumps(value, indent=2))

    def commit(
        self,
        *,
        task: str,
        content_hash: str,
        parent_hashes: list[str],
        config_hash: str,
        counts: dict[str, int],
        tables: dict[str, TableInfo],
        extra: dict[str, Any] | None = None,
    ) -> DatasetRef:
        manifest = Manifest(
            uri=self.final_uri,
            stage=self.stage,
            task=task,
            key=self.key,
            content_hash=content_hash,
            parent_hashes=parent_hashes,
            config_hash=config_hash,
            created_at=datetime.now(UTC).isoformat(timespec="seconds"),
            counts=counts,
            tables=tables,
            extra=extra or {},
        )
        manifest = manifest.model_copy(update={"files": self._file_hashes()})
        if self.store.signing_key is not None:
            manifest = manifest.signed(self.store.signing_key)
        kept = manifest.model_copy(update={"uri": self.store.relative(self.final_uri)})
        text = kept.model_dump_json(indent=2, by_alias=True)
        self.store.write_text_atomic(f"{self.work_uri}/{MANIFEST}", text)
        if self.work_uri != self.final_uri:
            os.remove(os.path.join(self.work_uri, OWNER))
            self._publish_local()
        return ref_of(manifest, reused=False)

    def _file_hashes(self) -> dict[str, str]:
        """sha256 of every file written so far, by path relative to the dataset."""
        fs, root = self.store.fs, _strip(self.store.fs, self.work_uri)
        hashes = {}
        for path in sorted(fs.find(root)):
            name = path[len(root) :].lstrip("/")
            if name not in (MANIFEST, OWNER):
                hashes[name] = self.store.file_sha256(path)
        return hashes

    def abort(self) -> None:
        """Remove a local scratch directory after a failure (a blob dataset has no manifest)."""
        if self.work_uri != self.final_uri:
            self.store.fs.rm(_strip(self.store.fs, self.work_uri), recursive=True)

    def _publish_local(self) -> None:
        src = _strip(self.store.fs, self.work_uri)
        dst = _strip(self.store.fs, self.final_uri)
        try:
            os.rename(src, dst)
        except OSError:
            # Another run published the same key first (same inputs, same config): keep theirs.
            if not os.path.exists(os.path.join(dst, MANIFEST)):
                raise
            self.store.fs.rm(src, recursive=True)


def remove_stale_scratch(stage_dir: str, max_age_seconds: float = 86400.0) -> list[str]:
    """Remove the scratch folders of writers that died (a killed run): those whose owner process
    no longer runs on this host, and any older than `max_age_seconds` whatever wrote them. A
    live writer's folder is never touched. Returns the removed paths."""
    removed = []
    for path in glob.glob(os.path.join(stage_dir, ".tmp-*")):
        try:
            with open(os.path.join(path, OWNER), encoding="utf-8") as f:
                owner = json.load(f)
            dead = owner["host"] == socket.gethostname() and not process_alive(int(owner["pid"]))
            old = time.time() - os.path.getmtime(path) > max_age_seconds
        except (OSError, ValueError, KeyError, TypeError):
            try:  # no readable owner: a folder from before owners were written, or torn
                old = time.time() - os.path.getmtime(path) > max_age_seconds
            except OSError:
                continue  # removed by someone else meanwhile
            dead = False
        if dead or old:
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    if removed:
        log.info("removed %d scratch folder(s) of runs that stopped: %s", len(removed), removed)
    return removed


def write_table(
    store: Store,
    uri: str,
    rows: list[dict[str, Any]],
    schema: pa.Schema,
    cipher: RawCipher | None = None,
) -> dict[str, str]:
    """Write rows as one Parquet file with an explicit schema (with a `cipher`, the file is
    encrypted whole: no value of it is readable without the key); return the schema as text."""
    table = pa.Table.from_pylist(rows, schema=schema)
    path = _strip(store.fs, uri)
    store.fs.makedirs(path.rsplit("/", 1)[0], exist_ok=True)
    if cipher is None:
        with store.fs.open(path, "wb") as f:
            pq.write_table(table, f)
    else:
        plain = io.BytesIO()
        pq.write_table(table, plain)
        with store.fs.open(path, "wb") as f:
            f.write(cipher.encrypt(plain.getvalue()))
    return {field.name: str(field.type) for field in schema}


def read_table(store: Store, uri: str, cipher: RawCipher | None = None) -> list[dict[str, Any]]:
    """Read one Parquet file back into row dicts; an encrypted one is decrypted with `cipher`,
    else with the store's (a KeyMismatch says which key it needs when neither holds it)."""
    with store.fs.open(_strip(store.fs, uri), "rb") as f:
        data = f.read()
    if is_encrypted(data):
        cipher = cipher or store.raw_cipher
        if cipher is None:
            raise KeyMismatch(needs_key(uri, encrypted_with(data), "no key was given"))
        data = cipher.decrypt(data, uri)
    return pq.read_table(pa.BufferReader(data)).to_pylist()


def _strip(fs: fsspec.AbstractFileSystem, uri: str) -> str:
    return fs._strip_protocol(uri)
