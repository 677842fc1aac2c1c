"""A domain classifier's ROC AUC (how well a classifier tells the window's requests from the
reference's, on held-out halves) and what chance gives at these sizes, for the vocabulary and
embedding drift signals (tasks/drift.py).

A threshold alone misreads a small window: with a handful of window requests in the held-out
half, the AUC is a few ranks, and a classifier that learned nothing reads 0.75 or more often
(one window request held out: a uniform draw, 25% of the time). So each side is split in half
(stratified, so the held-out half always holds half of the window), the classifier is fitted
on one half and scores the other, and the same held-out scores are ranked again under
`permutations` shuffles of their labels: the `quantile` of those AUCs is what chance gives
this window size against this reference. The signal drifts when its AUC is at or above the
configured threshold and above that chance bound (`exceeds`). The shuffles re-rank fixed
scores (no refit), so they cost milliseconds.
"""

from __future__ import annotations

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
) -> DomainAuc | None:
    """The held-out ROC AUC of `fit_score`'s classifier telling `current` from `reference` (each
    split in half, stratified) and its chance bound; None when a side has fewer than 2 samples
    (nothing to hold out)."""
    import numpy as np
    from sklearn.model_selection import train_test_split

    if len(current) < 2 or len(reference) < 2:
        return None
    samples = [*current, *reference]
    labels = np.array([1] * len(current) + [0] * len(reference))
    train, test = train_test_split(
        np.arange(len(samples)),
        test_size=0.5,
        stratify=labels,
        random_state=SPLIT_SEED,
        shuffle=True,
    )
    scores = np.asarray(
        fit_score([samples[i] for i in train], labels[train], [samples[i] for i in test])
    )
    held = labels[test]
    auc, bound = _auc_and_chance(scores, held, chance)
    return DomainAuc(
        auc=auc, chance=bound, window=int(held.sum()), reference=int((held == 0).sum())
    )


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
