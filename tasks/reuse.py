"""What earlier runs already did with this data: the lookups the retrain flow branches on.

`reread_needed`: the ingest dataset's raw records were deleted after an approval and this run
must screen them again (its screen config differs, or that screened dataset is gone), so ingest
reads the inputs again. `trained_before`: an earlier run already had this ingest dataset approved
and trained on with these settings, so a deployment's run has nothing new to do. Both read the
store or the registry and decide nothing else.
"""

from __future__ import annotations

from platforms.backends import Backends
from platforms.manifest import DatasetRef
from platforms.store import Store
from screening.config import ScreenConfig
from tasks.ingest import raw_removed
from tasks.screen import screened_before
from tasks.train import TrainConfig, job_name_for


def reread_needed(store: Store, ingested: DatasetRef, screen: ScreenConfig) -> bool:
    """Whether the ingest dataset's raw records were deleted after an approval and this run has
    to screen them (its screen config differs, or that screened dataset is gone)."""
    if not raw_removed(store, ingested):
        return False
    return not screened_before(store, ingested, screen)


def trained_before(
    backends: Backends,
    ingested: DatasetRef,
    *,
    model_name: str,
    task: str,
    train: TrainConfig,
    split_only: bool,
) -> str | None:
    """When the ingest dataset `ingested` was first made, if an earlier run already had it
    approved and trained on with these settings (a version of `model_name` whose lineage holds
    it and the training job `train` makes of its split; with `split_only`, a run that stops at
    the split: a split of it), else None."""
    store = backends.store
    made = store.read_manifest(ingested.uri).created_at
    if split_only:
        manifests = store.manifests()
        screened = {
            m.content_hash
            for m in manifests
            if m.stage == "screen" and m.parent_hashes == [ingested.content_hash]
        }
        split = any(m.stage == "split" and set(m.parent_hashes) & screened for m in manifests)
        return made if split else None
    for version in backends.registry.versions(model_name):
        data = version.lineage.datasets
        if data.get("ingest") == ingested.content_hash and version.lineage.training_job == (
            job_name_for(data.get("split", ""), task, train)
        ):
            return made
    return None
