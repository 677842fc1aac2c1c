"""Rewriting a finished dataset without some of its rows: how an erasure reaches the store.

A dataset is content-addressed and never edited in place, but an erasure must leave no copy of
a record anywhere in the store, old versions included. So each table file holding a matching
row is written again, under a new name, without it (encrypted again when it was encrypted),
and the dataset becomes a new version at its place: a manifest listing the new files with their
hashes, its counts less the rows removed (`erased` counts them), a new content hash (of the one
before and the erasure), the erasure recorded in `extra.erasures`, signed again. The screen's
`report.json` loses the record's masked samples.

The switch is journaled: the new files are written first, then `.erasure-pending.json` (the new
manifest, the new report, the old files to delete), then the report and the manifest, then the
old files are deleted and the journal removed. A rewrite that stopped half way is finished by
the next one (`finish_pending`): no old file outlives it, and no reader ever sees a manifest
naming files that are not there yet.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from platforms.hashing import combine_hashes
from platforms.keys import KeyMismatch, encrypted_with, is_encrypted, needs_key
from platforms.manifest import Manifest, TableInfo
from platforms.store import MANIFEST, Store

JOURNAL = ".erasure-pending.json"
REPORT = "report.json"
RowMatch = Callable[[dict[str, Any]], bool]
# the count each table's rows are counted in (the stages' manifests)
_COUNTED_AS = {"accepted": "accepted", "quarantine": "quarantined", "screened": "accepted"}


def matching_rows(store: Store, manifest: Manifest, match: RowMatch) -> dict[str, list[dict]]:
    """The rows of every table of the dataset that `match` picks, by table (tables whose files
    were deleted on purpose hold none)."""
    found: dict[str, list[dict]] = {}
    for table, info in manifest.tables.items():
        if table in manifest.removed:
            continue
        for name in info.files:
            rows = [r for r in _read(store, f"{manifest.uri}/{name}")[0].to_pylist() if match(r)]
            if rows:
                found.setdefault(table, []).extend(rows)
    return found


def rewrite_without(
    store: Store, manifest: Manifest, match: RowMatch, erasure: dict[str, Any]
) -> Manifest | None:
    """The dataset rewritten without the rows `match` picks (see the module docstring), its new
    manifest returned; None when it held none. `erasure` (id, time, by) goes into the manifest."""
    finish_pending(store, manifest.uri)
    manifest = store.read_manifest(manifest.uri)
    tables, files, removed = dict(manifest.tables), dict(manifest.files), {}
    delete: list[str] = []
    for table, info in manifest.tables.items():
        if table in manifest.removed:
            continue
        kept_files, kept_rows = [], 0
        for name in info.files:
            data, encrypted = _read(store, f"{manifest.uri}/{name}")
            mask = [not match(r) for r in data.to_pylist()]
            if all(mask):
                kept_files.append(name)
                kept_rows += data.num_rows
                continue
            removed[table] = removed.get(table, 0) + mask.count(False)
            delete.append(name)
            files.pop(name, None)
            left = data.filter(pa.array(mask))
            if left.num_rows:
                new = _new_name(name, erasure["erasure"])
                files[new] = _write(store, f"{manifest.uri}/{new}", left, encrypted)
                kept_files.append(new)
                kept_rows += left.num_rows
        tables[table] = TableInfo(rows=kept_rows, files=kept_files, schema=info.schema_)
    report = _report_without(store, manifest, match)
    if not removed and report is None:
        return None
    if report is not None:
        files[REPORT] = _sha256(report.encode("utf-8"))
    counts = dict(manifest.counts)
    for table, n in removed.items():
        key = _COUNTED_AS.get(table, table)
        if key in counts:
            counts[key] = max(0, counts[key] - n)
    counts["erased"] = counts.get("erased", 0) + sum(removed.values())
    history = [*manifest.extra.get("erasures", []), {**erasure, "rows": removed}]
    history[-1]["content_hash_before"] = manifest.content_hash
    new = manifest.model_copy(
        update={
            "tables": tables,
            "files": files,
            "counts": counts,
            "content_hash": combine_hashes(["erasure", manifest.content_hash, erasure["erasure"]]),
            "extra": {**manifest.extra, "erasures": history},
            "uri": store.relative(manifest.uri),
        }
    )
    if store.signing_key is not None:
        new = new.signed(store.signing_key)
    elif manifest.signature:
        raise ValueError(f"dataset {manifest.uri} is signed: rewriting it needs its key")
    journal = {"manifest": new.model_dump(mode="json", by_alias=True), "report": report}
    store.write_text_atomic(f"{manifest.uri}/{JOURNAL}", json.dumps({**journal, "delete": delete}))
    finish_pending(store, manifest.uri)
    return store.read_manifest(manifest.uri)


def finish_pending(store: Store, dataset_uri: str) -> bool:
    """Finish a rewrite of the dataset that stopped half way (its journal is there): the
    report and manifest written, the old files deleted. True when there was one."""
    journal_uri = f"{dataset_uri}/{JOURNAL}"
    if not store.exists(journal_uri):
        return False
    journal = json.loads(store.read_text(journal_uri))
    if journal.get("report") is not None:
        store.write_text_atomic(f"{dataset_uri}/{REPORT}", journal["report"])
    manifest = Manifest.model_validate(journal["manifest"])
    store.write_text_atomic(
        f"{dataset_uri}/{MANIFEST}", manifest.model_dump_json(indent=2, by_alias=True)
    )
    for name in journal["delete"]:
        if store.exists(f"{dataset_uri}/{name}"):
            store.remove(f"{dataset_uri}/{name}")
    store.remove(journal_uri)
    return True


def _report_without(store: Store, manifest: Manifest, match: RowMatch) -> str | None:
    """The screen's report without the masked samples of matching records (None: unchanged)."""
    if REPORT not in manifest.files:
        return None
    report = json.loads(store.read_text(f"{manifest.uri}/{REPORT}"))
    samples = report.get("samples") or []
    kept = [s for s in samples if not match(s)]
    if len(kept) == len(samples):
        return None
    return json.dumps({**report, "samples": kept}, indent=2)


def _read(store: Store, uri: str) -> tuple[pa.Table, bool]:
    """A table file's rows, and whether it was encrypted at rest."""
    with store.open(uri) as f:
        data = f.read()
    encrypted = is_encrypted(data)
    if encrypted:
        if store.raw_cipher is None:
            raise KeyMismatch(needs_key(uri, encrypted_with(data), "the store has no key"))
        data = store.raw_cipher.decrypt(data, uri)
    return pq.read_table(pa.BufferReader(data)), encrypted


def _write(store: Store, uri: str, table: pa.Table, encrypted: bool) -> str:
    """Write a table file (encrypted with the store's key when the one it replaces was);
    returns its sha256."""
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink)
    data = sink.getvalue().to_pybytes()
    if encrypted:
        assert store.raw_cipher is not None  # `_read` decrypted the file it replaces
        data = store.raw_cipher.encrypt(data)
    with store.open(uri, "wb") as f:
        f.write(data)
    return _sha256(data)


def _new_name(name: str, erasure_id: str) -> str:
    stem, _, suffix = name.rpartition(".")
    return f"{stem.split('.erased-')[0]}.erased-{erasure_id}.{suffix}"


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
