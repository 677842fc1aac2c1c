"""A domain classifier's ROC AUC (how well a classifier tells the window's requests from the
reference's, on held-out halves) and what chance gives at these sizes, for the vocabulary and
embedding drift signals (tasks/drift.py).

A threshold alone misreads a small window: with a handful of window requests in the held-out
half, the AUC is a few ranks, and a classifier that learned nothing reads 0.75 or more often
(one window request held out: a uniform draw, 25% of the time). So each side is split in half
(`halves`: each side's own requests alternate between the halves, so the held-out half always
holds about half of the window), the classifier is fitted on one half and scores the other,
and the same held-out scores are ranked again under `permutations` shuffles of their labels:
the `quantile` of those AUCs is what chance gives this window size against this reference. The
signal drifts when its AUC is at or above the configured threshold and above that chance bound
(`exceeds`). The shuffles re-rank fixed scores (no refit), so they cost milliseconds.

Requests about one document go to one half. Users ask several questions of one context, and the
test set holds several questions of each; split apart, one document's requests in both halves
let the classifier recognise the document rather than the domain (the demo's calm window of 60
requests on 29 contexts read a vocabulary AUC of 0.79, above chance, though its tickets came
from the training data's own generator; with documents kept together, 0.56). The caller names
each sample's group (tasks/drift_features.py `request_group`); the halves are drawn from the
groups' hashes, so the same requests give the same halves in any order.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from tasks.chance import CHANCE_SEED, ChanceConfig

SPLIT_SEED = 42  # the halves' seed (Evidently's domain classifiers use 42 too)

# Fits a classifier on (train samples, train labels: 1 the window, 0 the reference) and returns
# its scores of the held-out samples (higher: more like the window).
FitScore = Callable[[Any, Any, Any], Any]


class DomainAuc(BaseModel):
    """One domain classifier's held-out ROC AUC and its chance bound."""

    model_config = ConfigDict(frozen=True)
    auc: float
    chance: float = Field(description="The configured quantile of the AUC with shuffled labels.")
    window: int = Field(description="Window samples in the held-out half.")
    reference: int = Field(description="Reference samples in the held-out half.")

    def exceeds(self, threshold: float) -> bool:
        """Drift: at or above `threshold` and above what chance gives at these sizes."""
        return self.auc >= threshold and self.auc > self.chance

    @property
    def judgeable(self) -> bool:
        """False when even a perfect classifier (AUC 1.0) would not beat chance: too few."""
        return self.chance < 1.0


def domain_auc(
    current: Sequence[Any],
    reference: Sequence[Any],
    fit_score: FitScore,
    chance: ChanceConfig,
    groups: tuple[Sequence[str], Sequence[str]] | None = None,
) -> DomainAuc | None:
    """The held-out ROC AUC of `fit_score`'s classifier telling `current` from `reference` (each
    split in half, a group's samples in one half) and its chance bound; `groups`: each sample's
    group (the current's, the reference's), None: each sample its own. None when a side has
    fewer than 2 groups (nothing to hold out)."""
    import numpy as np

    if groups is None:
        groups = ([str(i) for i in range(len(current))], [str(i) for i in range(len(reference))])
    if len(set(groups[0])) < 2 or len(set(groups[1])) < 2:
        return None
    held_out = [*halves(groups[0]), *halves(groups[1])]
    samples = [*current, *reference]
    labels = np.array([1] * len(current) + [0] * len(reference))
    test = np.flatnonzero(held_out)
    train = np.flatnonzero(~np.asarray(held_out))
    scores = np.asarray(
        fit_score([samples[i] for i in train], labels[train], [samples[i] for i in test])
    )
    held = labels[test]
    auc, bound = _auc_and_chance(scores, held, chance)
    return DomainAuc(
        auc=auc, chance=bound, window=int(held.sum()), reference=int((held == 0).sum())
    )


def halves(groups: Sequence[str]) -> list[bool]:
    """For each sample of one side, whether it is held out: the side's distinct groups, ordered
    by a hash of their names (seeded), alternate between the halves, so a group's samples stay
    together and the order the samples came in does not matter."""

    def order(group: str) -> bytes:
        return hashlib.sha256(f"{SPLIT_SEED}:{group}".encode()).digest()

    held = {group: i % 2 == 1 for i, group in enumerate(sorted(set(groups), key=order))}
    return [held[group] for group in groups]


def _auc_and_chance(scores: Any, labels: Any, chance: ChanceConfig) -> tuple[float, float]:
    """The Mann-Whitney AUC of `scores` for `labels` (ties count half) and the configured
    quantile of the AUC over seeded shuffles of the labels."""
    import numpy as np
    from scipy.stats import rankdata

    ranks = rankdata(scores)
    positives = int(labels.sum())
    negatives = len(labels) - positives
    offset = positives * (positives + 1) / 2

    def auc_of(rank_sums: Any) -> Any:
        return (rank_sums - offset) / (positives * negatives)

    auc = float(auc_of(ranks[labels == 1].sum()))
    rng = np.random.default_rng(CHANCE_SEED)
    shuffled = rng.permuted(np.tile(ranks, (chance.permutations, 1)), axis=1)
    null = auc_of(shuffled[:, :positives].sum(axis=1))
    return auc, float(np.quantile(null, chance.quantile, method="higher"))


def fit_score_embeddings(train: Any, labels: Any, test: Any) -> Any:
    """Evidently's embedding domain classifier (a logistic SGD classifier on the vectors)."""
    import numpy as np
    from sklearn.linear_model import SGDClassifier

    classifier = SGDClassifier(loss="log_loss", random_state=SPLIT_SEED)
    classifier.fit(np.asarray(train), labels)
    return classifier.predict_proba(np.asarray(test))[:, 1]


def fit_score_texts(train: Any, labels: Any, test: Any) -> Any:
    """Evidently's text domain classifier (TF-IDF words, an L1 SGD classifier)."""
    from evidently.legacy.utils.data_drift_utils import roc_auc_domain_classifier

    # it also scores its own AUC against the held-out labels it is given: ours is measured on
    # the scores it returns, so any labels of both classes do
    _, scores, _ = roc_auc_domain_classifier(train, test, labels, [i % 2 for i in range(len(test))])
    return scores
