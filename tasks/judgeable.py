"""judgeable: whether the gate will be able to judge the test split this data makes.

The gate cannot judge on fewer test records than `evaluate.min_test_records`
(`tasks.gate.too_few_test_records`). That is known as soon as the split is, so a run asks it
twice: on the split the screened data would make, before a reviewer is asked to approve it, and
on the split made after approval (a reviewer's exclusions can only lower it), before anything
trains. Either way the run ends `cannot-judge` with the gate's own message and what to change,
instead of an approval and a training run whose verdict is known in advance. The gate's other
"cannot judge", an interval wider than the regression it must detect, depends on the models'
scores and is only known after evaluation.
"""

from __future__ import annotations

from tasks.gate import GatePolicy, too_few_test_records


class CannotJudge(ValueError):
    """The gate could not judge the test split this data makes: the run stops before approval
    or training, status `cannot-judge`."""


def require_judgeable(
    test_records: int, policy: GatePolicy, when: str, max_test_records: int = 0
) -> None:
    """Raise CannotJudge, saying `when` it was found, if the gate could not judge a test split of
    `test_records` (of which it scores at most `max_test_records`, 0: all)."""
    judged = min(test_records, max_test_records or test_records)
    why = too_few_test_records(judged, policy)
    if why is None:
        return
    if judged < test_records:  # the cap, not the data, is what is short
        why += f" (evaluate.max_test_records: {max_test_records} caps it; raise it)"
    raise CannotJudge(f"the gate cannot judge this data, {when}: {why}")
