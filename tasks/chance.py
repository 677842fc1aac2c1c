"""What chance gives a drift signal at a window's size: the settings of the permutation nulls
(tasks/domain_auc.py for the domain classifiers' ROC AUC, tasks/distance_chance.py for the
column distances). A signal drifts only at or above its threshold and above this bound, so a
small window's sampling noise is not read as drift.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

CHANCE_SEED = 0  # the shuffles' seed: the same window always gets the same bound


class ChanceConfig(BaseModel):
    """What chance gives a signal at a window's size (a permutation null)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    quantile: float = Field(
        0.99,
        gt=0.5,
        lt=1.0,
        description="The vocabulary, embedding and distance signals (input_length, "
        "answer_length, score) and the rates read against the reference (out_of_vocabulary, "
        "empty_answers, personal_data, not_english) drift only when their value is above this "
        "quantile of the values "
        "the same data gets with the window's and reference's labels shuffled (and at or above "
        "the signal's threshold): what chance gives at the window's size.",
    )
    permutations: int = Field(
        1000, ge=100, le=100_000, description="Label shuffles behind that quantile (seeded)."
    )
