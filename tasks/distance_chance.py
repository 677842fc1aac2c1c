"""What chance gives a column drift distance at a window's size, for the length and score
signals (tasks/drift.py).

A distance between a window's values and the reference's shrinks with the window's size but
never reaches zero: 10 request lengths drawn from the reference's own distribution lie 0.3
reference standard deviations (normed Wasserstein) or more from it in most windows. So the
window's and reference's values are pooled and split again at random into a reference-sized
and a window-sized part, `permutations` times (seeded), and the same Evidently distance is
measured on each split: its `quantile` is what chance gives at these sizes. A p-value method
(`ks`) already knows the sizes, and has no bound.
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
