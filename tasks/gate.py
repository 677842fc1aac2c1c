"""The quality gate: a pure decision over metric values, and its paired bootstrap.

`decide_gate` compares the candidate with absolute thresholds, with the base model (minimum gain)
and with the current champion (no regression beyond a tolerance), optionally with a paired
bootstrap confidence interval, and lists every unmet criterion. It does no I/O.

Most metrics are better higher, and gains are in their points. A metric that is better lower
(perplexity, `trainer.metrics.LOWER_IS_BETTER`) must be lower: a threshold is its maximum, and
gains are relative decreases in percent (100 x (base - candidate) / base).
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field, field_validator

from trainer.metrics import LOWER_IS_BETTER, METRIC_NAMES


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
    fail_on_pii: bool = Field(
        True, description="Fail when predictions hold PII absent from inputs."
    )

    @field_validator("thresholds")
    @classmethod
    def _known_metrics(cls, thresholds: dict[str, float]) -> dict[str, float]:
        unknown = sorted(set(thresholds) - set(METRIC_NAMES))
        if unknown:
            raise ValueError(f"unknown metric(s) {unknown}: expected some of {list(METRIC_NAMES)}")
        return thresholds

    def for_task(self, metric_names: Sequence[str]) -> GatePolicy:
        """This policy with only the thresholds on metrics the task reports."""
        kept = {m: v for m, v in self.thresholds.items() if m in metric_names}
        return self.model_copy(update={"thresholds": kept})


class Check(BaseModel):
    model_config = ConfigDict(frozen=True)
    name: str
    value: float
    required: float
    passed: bool


class GateDecision(BaseModel):
    model_config = ConfigDict(frozen=True)
    passed: bool
    reasons: list[str]
    checks: list[Check]


def decide_gate(
    candidate: dict[str, float],
    base: dict[str, float],
    champion: dict[str, float] | None,
    policy: GatePolicy,
    primary: str,
    *,
    interval: tuple[float, float] | None = None,
    pii_leaks: int = 0,
) -> GateDecision:
    """Pass only when every criterion holds; `reasons` lists each one that does not."""
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
            checks.append(
                Check(
                    name=f"{primary} vs champion, CI lower bound",
                    value=interval[0],
                    required=-policy.max_regression,
                    passed=interval[0] >= -policy.max_regression,
                )
            )
    if policy.fail_on_pii:
        checks.append(
            Check(
                name="predictions with PII not in their input",
                value=pii_leaks,
                required=0,
                passed=pii_leaks == 0,
            )
        )
    reasons = [
        f"{c.name}: {c.value:.2f} (required {c.required:.2f})" for c in checks if not c.passed
    ]
    return GateDecision(passed=not reasons, reasons=reasons, checks=checks)


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
