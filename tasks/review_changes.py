"""What changed since the last approved dataset: the part of the review a person reads first.

A nightly run over mostly the same data should not ask the reviewer to reread everything: the
pause shows how the counts, the findings per entity and the set of record ids moved since the
dataset last approved for the same model (`registry.model_name`: another model's data is no
baseline), and which record ids are new. Which data a model's runs went ahead with is kept in
the store beside the approval records (`approvals/models/<model>/<dataset hash>.json`,
`remember_approved`), so a decision reused by several models counts for each of them.
"""

from __future__ import annotations

import json
from typing import Any, NamedTuple

import pyarrow.parquet as pq
from pydantic import BaseModel, ConfigDict

from platforms.approvals import ApprovalRecord
from platforms.manifest import DatasetRef
from platforms.store import Store

_COUNTS = ("records_in", "kept", "redacted", "quarantined", "flagged")
_SHOWN_IDS = 10


class Change(NamedTuple):
    """One number in the last approved dataset and in this one (a `(then, now)` pair)."""

    then: int  # in the last approved dataset
    now: int  # in this dataset


class ReviewChanges(BaseModel):
    """The comparison with the last approved dataset: counts, findings and the id changes."""

    model_config = ConfigDict(frozen=True)
    previous_hash: str
    previous_reviewer: str
    previous_decided_at: str
    model: str = ""  # the model whose last approved data it is
    counts: dict[str, Change]
    findings: dict[str, Change]
    added_ids: list[str]
    removed_ids: list[str]


def remember_approved(store: Store, model: str, record: ApprovalRecord, used_at: str) -> None:
    """Keep that a run of `model` went ahead with the data `record` approved (at `used_at`):
    the baseline of this model's next review."""
    entry = {
        "dataset_hash": record.dataset_hash,
        "dataset_uri": record.dataset_uri,
        "reviewer": record.reviewer,
        "decided_at": record.decided_at,
        "used_at": used_at,
    }
    store.write_text_atomic(
        _model_folder(store, model) + f"/{record.dataset_hash}.json", json.dumps(entry)
    )


def last_approved(store: Store, exclude_hash: str, model: str) -> dict[str, Any] | None:
    """The data a run of `model` last went ahead with, other than `exclude_hash` (or None)."""
    root = _model_folder(store, model)
    if not store.exists(root):
        return None
    latest = None
    for uri in store.glob(f"{root}/*.json"):
        entry = json.loads(store.read_text(uri))
        if entry["dataset_hash"] == exclude_hash:
            continue
        if latest is None or entry["used_at"] > latest["used_at"]:
            latest = entry
    return latest


def _model_folder(store: Store, model: str) -> str:
    return store.path("approvals", "models", model)


def record_ids(store: Store, dataset_uri: str) -> set[str]:
    """The ids in a screened dataset (only the id column is read)."""
    files = store.table_files(store.dataset_at(dataset_uri), "screened")
    ids: set[str] = set()
    for uri in files:
        with store.open(uri) as f:
            ids.update(pq.read_table(f, columns=["id"]).column("id").to_pylist())
    return ids


def compare(store: Store, screened: DatasetRef, report: Any, model: str) -> ReviewChanges | None:
    """How `screened` and its report differ from the data last approved for `model`."""
    previous = last_approved(store, screened.content_hash, model)
    if previous is None or not store.exists(f"{previous['dataset_uri']}/report.json"):
        return None
    before = json.loads(store.read_text(f"{previous['dataset_uri']}/report.json"))
    now = report.model_dump(mode="json")
    then_ids = record_ids(store, previous["dataset_uri"])
    now_ids = record_ids(store, screened.uri)
    return ReviewChanges(
        previous_hash=previous["dataset_hash"],
        previous_reviewer=previous["reviewer"],
        previous_decided_at=previous["decided_at"],
        model=model,
        counts={k: Change(before[k], now[k]) for k in _COUNTS},
        findings=_findings(before["entities"], now["entities"]),
        added_ids=sorted(now_ids - then_ids),
        removed_ids=sorted(then_ids - now_ids),
    )


def changes_markdown(changes: ReviewChanges | None, model: str = "") -> str:
    if changes is None:
        for_model = f" for model `{model}`" if model else ""
        return (
            "### Since the last approved dataset\n\n"
            f"No dataset was approved{for_model} before this one."
        )
    lines = [
        "### Since the last approved dataset",
        "",
        f"Compared with `{changes.previous_hash[:16]}`, the data last approved for model "
        f"`{changes.model}` (by {changes.previous_reviewer} at {changes.previous_decided_at}).",
        "",
        "| | then | now | change |",
        "|---|---:|---:|---:|",
        *[_row(name.replace("_", " "), change) for name, change in changes.counts.items()],
        *[_row(f"{entity} findings", change) for entity, change in changes.findings.items()],
        "",
        f"**New record ids** ({len(changes.added_ids)}): {_ids(changes.added_ids)}",
        "",
        f"**Gone since then** ({len(changes.removed_ids)}): {_ids(changes.removed_ids)}",
    ]
    return "\n".join(lines)


def changes_summary(changes: ReviewChanges | None, model: str = "") -> str:
    """One line of what changed, for the pause form (the review has the whole comparison)."""
    if changes is None:
        of_model = f" of `{model}`" if model else ""
        return f"**Since the last approval:** this is the first{of_model}."
    kept = changes.counts["kept"]
    return (
        f"**Since the last approval of `{changes.model}`** "
        f"(`{changes.previous_hash[:16]}`, by {changes.previous_reviewer}): "
        f"{len(changes.added_ids)} new record ids, "
        f"{len(changes.removed_ids)} gone; kept {kept.then} → {kept.now}."
    )


def _findings(before: list[dict[str, Any]], now: list[dict[str, Any]]) -> dict[str, Change]:
    then = {e["entity"]: e["findings"] for e in before}
    current = {e["entity"]: e["findings"] for e in now}
    return {k: Change(then.get(k, 0), current.get(k, 0)) for k in sorted(then | current)}


def _row(label: str, change: Change) -> str:
    return f"| {label} | {change.then} | {change.now} | {change.now - change.then:+d} |"


def _ids(ids: list[str]) -> str:
    if not ids:
        return "none"
    shown = ", ".join(f"`{i}`" for i in ids[:_SHOWN_IDS])
    return shown + (f" and {len(ids) - _SHOWN_IDS} more" if len(ids) > _SHOWN_IDS else "")
