"""erase: a person's record out of every dataset of the store, and the models trained on it marked.

`tunegate erase --id ID | --value VALUE` (cli/erase.py) runs `erase_records`:
1. find every dataset of the store holding the record (raw, screened and split; the raw ones
   decrypted with the store's key): by id, or by a value (an e-mail, a name) searched for in
   every text of every row, case folded. The raw records hold the value, the screened and split
   ones only its placeholder: the ids of the rows found by value are erased everywhere too;
2. rewrite each of them without it (platforms/dataset_rewrite.py: new files, a new signed
   manifest, no old file left);
3. find every registered version trained on one of them, through its lineage's dataset hashes
   (the hashes before the rewrite), and mark it `needs-retrain` in the registry; its model card
   says so when shown (`tunegate models show --card`);
4. keep the audit (platforms/erasures.py): what, when, by whom, a keyed hash of the value,
   never the value. Every later ingest and split leaves the erased ids out, so the retrain
   `--retrain` starts (or any later run) neither keeps nor trains on the record even where an
   input still holds it.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from platforms.dataset_rewrite import finish_pending, matching_rows, rewrite_without
from platforms.erasures import ErasedDataset, ErasureRecord, save_erasure, value_hash
from platforms.manifest import Manifest
from platforms.model_version import ModelRegistry, ModelVersion
from platforms.store import Store

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RecordMatch:
    """Which rows are the record: its ids, or any text holding the value (case folded)."""

    ids: frozenset[str]
    value: str | None = None

    def __call__(self, row: dict[str, Any]) -> bool:
        if row.get("id") in self.ids:
            return True
        return self.value is not None and _holds(row, self.value.strip().casefold())


def _holds(obj: Any, value: str) -> bool:
    if isinstance(obj, str):
        return value in obj.casefold()
    if isinstance(obj, dict):
        return any(_holds(v, value) for v in obj.values())
    if isinstance(obj, list | tuple):
        return any(_holds(v, value) for v in obj)
    return False


@dataclass(frozen=True)
class Erasure:
    """What an erasure did: its audit record, and the inputs outside the store the erased
    records were read from (they may still hold them: only their owner can change them)."""

    record: ErasureRecord
    sources: list[str] = field(default_factory=list)


def find_holders(store: Store, match: RecordMatch) -> tuple[RecordMatch, list[Manifest]]:
    """The datasets holding the record, and the match widened to the ids of the rows a value
    was found in (the screened and split copies hold a placeholder where the value was)."""
    for _ in range(2):  # by value (and the ids given), then by every id that found
        holders, ids = [], set(match.ids)
        for manifest in store.manifests():
            if finish_pending(store, manifest.uri):  # an earlier rewrite stopped half way
                manifest = store.read_manifest(manifest.uri)
            rows = matching_rows(store, manifest, match)
            if rows:
                holders.append(manifest)
                ids |= {r["id"] for found in rows.values() for r in found if r.get("id")}
        if ids == match.ids:
            return match, holders
        match = RecordMatch(frozenset(ids), match.value)
    return match, holders


def trained_on(registry: ModelRegistry, hashes: set[str]) -> list[ModelVersion]:
    """Every registered version whose lineage names one of these dataset content hashes."""
    return [
        version
        for name in registry.names()
        for version in registry.versions(name)
        if hashes & set(version.lineage.datasets.values())
    ]


def erase_records(
    store: Store,
    registry: ModelRegistry | None,
    *,
    ids: list[str],
    value: str | None,
    by: str,
    retrain: bool = False,
) -> Erasure:
    """Erase the record everywhere in the store, mark the versions trained on it, keep the
    audit (see the module docstring). `registry` None: no registry to mark (a data-only store)."""
    if not ids and not (value and value.strip()):
        raise ValueError("give the record's id (--id) or a value it holds (--value)")
    erasure_id = uuid.uuid4().hex[:12]
    at = datetime.now(UTC).isoformat(timespec="seconds")
    match, holders = find_holders(store, RecordMatch(frozenset(ids), value))
    erased, sources, hashes = [], set(), set()
    for manifest in holders:
        new = rewrite_without(store, manifest, match, {"erasure": erasure_id, "at": at, "by": by})
        if new is None:
            continue
        removed = new.extra["erasures"][-1]["rows"]
        erased.append(
            ErasedDataset(
                uri=store.relative(new.uri),
                stage=new.stage,
                rows=removed,
                content_hash_before=manifest.content_hash,
                content_hash_after=new.content_hash,
            )
        )
        # a version trained on any earlier form of the dataset held the record too
        hashes |= {e["content_hash_before"] for e in new.extra["erasures"]}
        sources |= set(manifest.extra.get("inputs", []))
        log.info("erase: %s lost %s", new.uri, removed)
    models = trained_on(registry, hashes) if registry is not None else []
    why = f"erasure {erasure_id} on {at} by {by} removed records it was trained on"
    for version in models:
        registry.mark_needs_retrain(version.name, version.version, why)  # type: ignore[union-attr]
    record = ErasureRecord(
        erasure_id=erasure_id,
        erased_at=at,
        erased_by=by,
        asked_for="value" if value else "id",
        value_hash=value_hash(value, store.signing_key) if value else None,
        record_ids=sorted(match.ids),
        datasets=erased,
        models=[f"{v.name}:{v.version}" for v in models],
        retrain=retrain,
    )
    return Erasure(save_erasure(store, record), sorted(sources))
