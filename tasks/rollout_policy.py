"""The canary decision: a pure function over two deployments' health, and the policy it applies.

`decide_rollout_step` compares the candidate deployment with the live one after a canary step
was held (enough requests, or enough time): its error rate may exceed the live one's by at most
`max_error_rate_increase`, its p95 latency may be at most `max_p95_ratio` times the live one's
(plus a small absolute allowance, so a 2 ms vs 3 ms blip is no regression). A latency breach
alone must hold over `latency_windows` consecutive held windows before it rolls back (a busy
machine slows one window; a slower model slows every one); errors and too few requests roll back
at once. It does no I/O; the rollout stage carries out what it returns and records every number
it compared.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field, field_validator


class RolloutPolicy(BaseModel):
    """How a new model version earns its traffic."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    steps: list[int] = Field(
        default_factory=lambda: [10, 50, 100],
        description="Canary traffic percentages for the new deployment, ending at 100.",
    )
    hold_requests: int = Field(
        50, ge=1, le=1_000_000, description="Requests the candidate must serve at each step."
    )
    hold_seconds: float = Field(
        60.0, gt=0, description="Longest a step is held waiting for those requests."
    )
    max_error_rate_increase: float = Field(
        0.01, ge=0, le=1, description="Error rate the candidate may add over the live deployment."
    )
    max_p95_ratio: float = Field(
        1.5, ge=1, description="Candidate p95 latency at most this multiple of the live one's."
    )
    p95_allowance_ms: float = Field(
        5.0, ge=0, description="Absolute p95 slack (ms) on top of the ratio, for tiny latencies."
    )
    min_requests: int = Field(
        10, ge=1, description="Fewer candidate requests than this at the end of a hold: roll back."
    )
    latency_windows: int = Field(
        2,
        ge=1,
        le=10,
        description="Consecutive held windows the p95 rule must fail before it rolls back "
        "(the step is held again after a breach); 1: the first breach rolls back.",
    )

    @field_validator("steps")
    @classmethod
    def _steps_rise_to_100(cls, steps: list[int]) -> list[int]:
        if not steps or steps[-1] != 100:
            raise ValueError(f"must end at 100, got {steps}")
        if any(not 0 < s <= 100 for s in steps) or steps != sorted(set(steps)):
            raise ValueError(f"must be strictly rising percentages in 1..100, got {steps}")
        return steps


class DeploymentHealth(BaseModel):
    """What one deployment served during a step."""

    model_config = ConfigDict(frozen=True)
    requests: int = Field(ge=0)
    errors: int = Field(ge=0)
    p95_ms: float | None = Field(None, ge=0)

    @property
    def error_rate(self) -> float:
        return self.errors / self.requests if self.requests else 0.0


class Step(StrEnum):
    proceed = "proceed"  # healthy: go to the next traffic step (or promote after the last)
    hold_again = "hold-again"  # only latency breached, not yet in enough windows: hold once more
    rollback = "rollback"


class StepDecision(BaseModel):
    """The decision and every number it compared."""

    model_config = ConfigDict(frozen=True)
    step: Step
    reasons: list[str]
    candidate: DeploymentHealth
    live: DeploymentHealth
    p95_limit_ms: float | None
    error_rate_limit: float


def error_rate_check(
    candidate: DeploymentHealth, live: DeploymentHealth, max_increase: float
) -> tuple[float, list[str]]:
    """(the candidate's error-rate limit, [the reason] when it is above it)."""
    limit = live.error_rate + max_increase
    if candidate.error_rate <= limit:
        return limit, []
    return limit, [
        f"candidate error rate {candidate.error_rate:.3f} above {limit:.3f} "
        f"(live {live.error_rate:.3f} + {max_increase})"
    ]


def p95_check(
    candidate: DeploymentHealth, live: DeploymentHealth, ratio: float, allowance_ms: float
) -> tuple[float | None, list[str]]:
    """(the candidate's p95 limit, None when the live side has no p95; [the reason] when the
    candidate's p95 is above it)."""
    if live.p95_ms is None:
        return None, []
    limit = live.p95_ms * ratio + allowance_ms
    if candidate.p95_ms is None or candidate.p95_ms <= limit:
        return limit, []
    return limit, [
        f"candidate p95 {candidate.p95_ms:.1f} ms above {limit:.1f} ms "
        f"(live {live.p95_ms:.1f} ms x {ratio} + {allowance_ms} ms)"
    ]


def decide_rollout_step(
    candidate: DeploymentHealth,
    live: DeploymentHealth,
    policy: RolloutPolicy,
    latency_breaches: int = 0,
) -> StepDecision:
    """Proceed only when the candidate served enough requests, no more errors and no slower.

    `latency_breaches`: windows of this step that already failed the p95 rule alone.
    """
    reasons: list[str] = []
    if candidate.requests < policy.min_requests:
        reasons.append(
            f"candidate served {candidate.requests} requests, fewer than {policy.min_requests}"
        )
    error_limit, too_many = error_rate_check(candidate, live, policy.max_error_rate_increase)
    reasons += too_many
    p95_limit, too_slow = p95_check(candidate, live, policy.max_p95_ratio, policy.p95_allowance_ms)
    reasons += too_slow
    slow = bool(too_slow)
    if not reasons:
        step = Step.proceed
    elif slow and len(reasons) == 1 and latency_breaches + 1 < policy.latency_windows:
        step = Step.hold_again
        reasons[0] += f" (window {latency_breaches + 1} of {policy.latency_windows}: held again)"
    else:
        step = Step.rollback
    return StepDecision(
        step=step,
        reasons=reasons,
        candidate=candidate,
        live=live,
        p95_limit_ms=p95_limit,
        error_rate_limit=error_limit,
    )
