"""What chance gives a column drift distance or a rate's rise at a window's size, for the length
and score signals and the rates read against the reference (tasks/drift.py).

A distance between a window's values and the reference's shrinks with the window's size but
never reaches zero: 10 request lengths drawn from the reference's own distribution lie 0.3
reference standard deviations (normed Wasserstein) or more from it in most windows. So the
window's and reference's values are pooled and split again at random into a reference-sized
and a window-sized part, `permutations` times (seeded), and the same Evidently distance is
measured on each split: its `quantile` is what chance gives at these sizes. A p-value method
(`ks`) already knows the sizes, and has no bound. A rate (personal data, other languages, empty
answers, words outside the vocabulary) gets the same bound on its rise (`rise_chance`): 13 of 30
requests with personal data against 30 of 78 in the reference is a rise of 0.05, the default
threshold, while chance gives a window of 30 a rise of up to 0.23 (0.99 quantile); at 1,000
requests against 2,000, up to 0.04.
"""

from __future__ import annotations

from collections.abc import Sequence

from tasks.chance import CHANCE_SEED, ChanceConfig
from tasks.drift_signals import P_VALUE_METHODS, Method

DISTANCES: frozenset[Method] = frozenset({"wasserstein", "psi", "jensenshannon"})


def distance_chance(
    now: Sequence[float], before: Sequence[float], method: Method, chance: ChanceConfig
) -> float | None:
    """The `chance.quantile` of Evidently's `method` distance between the pooled values of
    `now` (the window) and `before` (the reference), split at random into parts of their sizes;
    None for a p-value method, or a method that is not a column distance."""
    import numpy as np
    import pandas as pd
    from evidently.legacy.calculations.stattests import get_stattest
    from evidently.legacy.core import ColumnType

    if method in P_VALUE_METHODS or method not in DISTANCES:
        return None
    # sorted: the bound depends on the values, not on the order they were read in (a window
    # read from Azure's collector and the same window read locally give the same bound)
    pooled = np.sort(np.asarray([*now, *before], dtype=float))
    size = len(now)
    distance = get_stattest(
        pd.Series(before, dtype=float), pd.Series(now, dtype=float), ColumnType.Numerical, method
    ).func
    rng = np.random.default_rng(CHANCE_SEED)
    null = []
    for _ in range(chance.permutations):
        shuffled = rng.permutation(pooled)
        found, _ = distance(
            pd.Series(shuffled[size:]), pd.Series(shuffled[:size]), ColumnType.Numerical, 1.0
        )
        null.append(float(found))
    return float(np.quantile(null, chance.quantile, method="higher"))


def rise_chance(now: Sequence[float], before: Sequence[float], chance: ChanceConfig) -> float:
    """The `chance.quantile` of the rise of the mean of `now` (the window's per-request values: a
    rate's 0/1, a share) over that of `before`, with the pooled values split at random into
    parts of their sizes. Each draw picks the smaller part (without replacement), so it costs
    the smaller side's size, not the pooled one's."""
    import numpy as np

    pooled = np.sort(np.asarray([*now, *before], dtype=float))  # order-free, as above
    total, size = float(pooled.sum()), len(now)
    small = min(size, len(pooled) - size)
    rng = np.random.default_rng(CHANCE_SEED)
    sums = np.array(
        [
            pooled[rng.choice(len(pooled), small, replace=False)].sum()
            for _ in range(chance.permutations)
        ]
    )
    window_sums = sums if small == size else total - sums
    rises = window_sums / size - (total - window_sums) / (len(pooled) - size)
    return float(np.quantile(rises, chance.quantile, method="higher"))
