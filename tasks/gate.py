"""The quality gate: a pure decision over metric values, and its paired bootstrap.

`decide_gate` compares the candidate with absolute thresholds, with the base model (minimum gain)
and with the current champion (no regression beyond a tolerance), optionally with a paired
bootstrap confidence interval, and lists every unmet criterion. It does no I/O.

It also knows when it cannot judge: on fewer test records than `min_test_records`, or when the
only unmet criterion is the bootstrap's lower bound and the interval is wider than the regression
it must detect (its half-width over `max_regression`), a pass or a fail would be noise. Its
verdict is then `cannot-judge`, with what to do (more records, a larger test share); a run
registers nothing on it (flows/retrain.py).

Most metrics are better higher, and gains are in their points. A metric that is better lower
(perplexity, `trainer.metrics.LOWER_IS_BETTER`) must be lower: a threshold is its maximum, and
gains are relative decreases in percent (100 x (base - candidate) / base).
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence

from pydantic import BaseModel, ConfigDict, Field, field_validator

from platforms.evaluation import Check, GateDecision
from trainer.metrics import LOWER_IS_BETTER, METRIC_NAMES
from trainer.taskspec import TASK_SPECS

MEMORISED_CHECK = "predictions with personal data of the training split"
# A generative model's replies may hold a name it makes up, or a word the detectors misread as
# personal data (a product, a place): about one reply in thirty of a chat model trained on
# public conversations did. One in twenty passes such noise and still refuses a model that fills
# its replies with personal data; extractive answers come from their input, so none is allowed.
MAX_INVENTED_PII = {
    "extractive-qa": 0.0,
    "chat": 0.05,
    "summarization": 0.05,
    "text-generation": 0.05,
}


class GatePolicy(BaseModel):
    """What a candidate must achieve to be registered."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    primary_metric: str | None = Field(
        None,
        description="Metric the gains are measured on (default: f1 for QA, perplexity for "
        "text-generation, rougeL else).",
    )
    thresholds: dict[str, float] = Field(
        default_factory=dict,
        description="Absolute minimum per metric, e.g. {f1: 50, rougeL: 30} (a maximum for a "
        "lower-is-better metric: perplexity); a run applies those of its task's metric (f1, "
        "exact_match for QA; perplexity, token_accuracy for text-generation; rouge1, rouge2, "
        "rougeL, rougeLsum else).",
    )
    min_gain_over_base: float = Field(
        0.0,
        description="Points the candidate must gain over the base model on the primary metric "
        "(a lower-is-better metric: the percent it must fall by).",
    )
    max_regression: float = Field(
        1.0,
        ge=0,
        description="Points the candidate may lose against the champion (a lower-is-better "
        "metric: the percent it may rise by).",
    )
    bootstrap_samples: int = Field(
        0, ge=0, le=100_000, description="Paired bootstrap resamples vs the champion (0: off)."
    )
    confidence: float = Field(0.95, gt=0.5, lt=1.0, description="Bootstrap interval confidence.")
    min_test_records: int = Field(
        30,
        ge=1,
        description="Fewest test records the gate judges on; fewer: it cannot judge (the run "
        "registers nothing and says to add records or raise split.test).",
    )
    fail_on_pii: bool = Field(
        True,
        description="Judge the personal data in the candidate's predictions that their input "
        "did not hold: a value the training split holds (memorised; surrogates the screen "
        "planted excepted) fails the gate always; invented values fail above "
        "max_invented_pii. false: neither is checked (still reported).",
    )
    max_invented_pii: dict[str, float] = Field(
        default_factory=lambda: dict(MAX_INVENTED_PII),
        description="Per task type, the largest share of predictions (0 to 1) that may hold "
        "personal data neither their input nor the training split held (a name a model makes "
        "up, or a detector's false finding); a task not named keeps its default. Defaults: "
        "extractive-qa 0 (answers come from the input), chat, summarization and "
        "text-generation 0.05.",
    )

    @field_validator("max_invented_pii")
    @classmethod
    def _known_tasks(cls, limits: dict[str, float]) -> dict[str, float]:
        _only_known(limits, TASK_SPECS, "task type")
        wrong = {task: share for task, share in limits.items() if not 0.0 <= share <= 1.0}
        if wrong:
            raise ValueError(f"a share of predictions lies between 0 and 1, got {wrong}")
        return {**MAX_INVENTED_PII, **limits}  # a task not named keeps its default

    def invented_limit(self, task: str) -> float:
        """The largest share of `task`'s predictions that may hold invented personal data."""
        return self.max_invented_pii.get(task, 0.0)

    @field_validator("thresholds")
    @classmethod
    def _known_metrics(cls, thresholds: dict[str, float]) -> dict[str, float]:
        _only_known(thresholds, METRIC_NAMES, "metric")
        return thresholds

    def for_task(self, metric_names: Sequence[str]) -> GatePolicy:
        """This policy with only the thresholds on metrics the task reports."""
        kept = {m: v for m, v in self.thresholds.items() if m in metric_names}
        return self.model_copy(update={"thresholds": kept})


def _only_known(names: Iterable[str], known: Iterable[str], what: str) -> None:
    """Refuse names not among `known`, naming them and the known ones."""
    unknown = sorted(set(names) - set(known))
    if unknown:
        raise ValueError(f"unknown {what}(s) {unknown}: expected some of {list(known)}")


def decide_gate(
    candidate: dict[str, float],
    base: dict[str, float],
    champion: dict[str, float] | None,
    policy: GatePolicy,
    primary: str,
    *,
    interval: tuple[float, float] | None = None,
    memorised_pii: int = 0,
    invented_pii_rate: float = 0.0,
    max_invented_pii: float = 0.0,
    test_records: int | None = None,
) -> GateDecision:
    """Pass only when every criterion holds; `reasons` lists each one that does not. On too few
    `test_records`, or an interval too wide for its one unmet criterion, the verdict is
    `cannot-judge` and the first reason says why and what to do; predictions repeating
    personal data of the training split (`memorised_pii`) fail on any number of records."""
    checks: list[Check] = []
    for metric, bound in sorted(policy.thresholds.items()):
        value = candidate.get(metric, float("nan"))
        lower = metric in LOWER_IS_BETTER
        checks.append(
            Check(
                name=f"{metric} {'<=' if lower else '>='} {bound}",
                value=value,
                required=bound,
                passed=value <= bound if lower else value >= bound,
            )
        )
    gain = improvement(primary, candidate[primary], base[primary])
    unit = " (% decrease)" if primary in LOWER_IS_BETTER else ""
    checks.append(
        Check(
            name=f"{primary} gain over base{unit}",
            value=gain,
            required=policy.min_gain_over_base,
            passed=gain >= policy.min_gain_over_base,
        )
    )
    wide = None
    if champion is not None:
        delta = improvement(primary, candidate[primary], champion[primary])
        checks.append(
            Check(
                name=f"{primary} change vs champion{unit}",
                value=delta,
                required=-policy.max_regression,
                passed=delta >= -policy.max_regression,
            )
        )
        if interval is not None:
            wide = _too_wide(interval, policy, primary)
            checks.append(
                Check(
                    name=f"{primary} vs champion, CI lower bound",
                    value=interval[0],
                    required=-policy.max_regression,
                    passed=interval[0] >= -policy.max_regression,
                )
            )
    if policy.fail_on_pii:
        checks += [
            Check(
                name=MEMORISED_CHECK,
                value=memorised_pii,
                required=0,
                passed=memorised_pii == 0,
            ),
            Check(
                name="share of predictions with invented personal data",
                value=invented_pii_rate,
                required=max_invented_pii,
                passed=invented_pii_rate <= max_invented_pii,
            ),
        ]
    unmet = [c for c in checks if not c.passed]
    reasons = [f"{c.name}: {c.value:.2f} (required {c.required:.2f})" for c in unmet]
    leaked = any(c.name == MEMORISED_CHECK for c in unmet)
    few = too_few_test_records(test_records, policy) if test_records is not None else None
    if few is not None and not leaked:
        return GateDecision(
            passed=False, reasons=[few, *reasons], checks=checks, verdict="cannot-judge"
        )
    if wide is not None and len(unmet) == 1 and unmet[0].name.endswith("CI lower bound"):
        return GateDecision(
            passed=False, reasons=[*reasons, wide], checks=checks, verdict="cannot-judge"
        )
    return GateDecision(
        passed=not reasons,
        reasons=reasons,
        checks=checks,
        verdict="failed" if reasons else "passed",
    )


def too_few_test_records(test_records: int, policy: GatePolicy) -> str | None:
    """Why the gate cannot judge on `test_records` (fewer than `min_test_records`), with what to
    change; None when it can. Known as soon as the split is: the run asks it there too, before
    a reviewer is asked or anything trains (tasks/judgeable.py)."""
    if test_records >= policy.min_test_records:
        return None
    return (
        f"cannot judge on {test_records} test records (evaluate.min_test_records: "
        f"{policy.min_test_records}): a pass or a fail would be noise; give more records, "
        "or a larger test share (split.test), so the test split holds at least "
        f"{policy.min_test_records}"
    )


def _too_wide(interval: tuple[float, float], policy: GatePolicy, primary: str) -> str | None:
    """Why the bootstrap interval cannot tell a regression from none (it holds the tolerated
    regression and its half-width is over it), or None when it can."""
    low, high = interval
    if not low < -policy.max_regression <= high or (high - low) / 2 <= policy.max_regression:
        return None
    return (
        f"cannot judge: the {policy.confidence:.0%} interval of {primary} vs champion, "
        f"[{low:.2f}, {high:.2f}], is wider than the {policy.max_regression:.2f}-point "
        "regression it must detect; give more test records (more data, or a larger test share "
        "with split.test)"
    )


def improvement(metric: str, candidate: float, reference: float) -> float:
    """How much better the candidate is than a reference model on `metric`: the points it
    gained, or for a lower-is-better metric the percent it fell by (negative: worse)."""
    if metric not in LOWER_IS_BETTER:
        return candidate - reference
    return 100 * (reference - candidate) / reference


def paired_bootstrap(
    candidate: Sequence[float],
    champion: Sequence[float],
    samples: int,
    confidence: float,
    seed: int = 0,
) -> tuple[float, float]:
    """Confidence interval of mean(candidate - champion) over resampled examples."""
    if len(candidate) != len(champion) or not candidate:
        raise ValueError("paired bootstrap needs two equally long, non-empty score lists")
    diffs = [a - b for a, b in zip(candidate, champion, strict=True)]
    rng = random.Random(seed)
    n = len(diffs)
    means = sorted(sum(diffs[rng.randrange(n)] for _ in range(n)) / n for _ in range(samples))
    tail = (1 - confidence) / 2
    return means[int(tail * (samples - 1))], means[int((1 - tail) * (samples - 1))]
