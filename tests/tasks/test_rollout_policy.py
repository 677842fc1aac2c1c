"""decide_rollout_step: healthy canaries proceed; errors, slowness or silence roll back."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from tasks.rollout_policy import DeploymentHealth, RolloutPolicy, Step, decide_rollout_step

LIVE = DeploymentHealth(requests=900, errors=9, p95_ms=40.0)  # 1% errors
POLICY = RolloutPolicy(max_error_rate_increase=0.01, max_p95_ratio=1.5, p95_allowance_ms=5)


def test_a_healthy_candidate_proceeds_and_the_limits_are_recorded() -> None:
    decision = decide_rollout_step(
        DeploymentHealth(requests=100, errors=1, p95_ms=50.0), LIVE, POLICY
    )
    assert decision.step is Step.proceed and decision.reasons == []
    assert decision.p95_limit_ms == pytest.approx(40 * 1.5 + 5)
    assert decision.error_rate_limit == pytest.approx(0.02)


def test_errors_above_the_live_rate_plus_tolerance_roll_back() -> None:
    decision = decide_rollout_step(
        DeploymentHealth(requests=100, errors=3, p95_ms=30.0), LIVE, POLICY
    )
    assert decision.step is Step.rollback
    assert decision.reasons == ["candidate error rate 0.030 above 0.020 (live 0.010 + 0.01)"]


def test_a_slow_candidate_rolls_back() -> None:
    decision = decide_rollout_step(
        DeploymentHealth(requests=100, errors=0, p95_ms=66.0), LIVE, POLICY, latency_breaches=1
    )
    assert decision.step is Step.rollback and "p95 66.0 ms above 65.0 ms" in decision.reasons[0]


def test_too_few_requests_is_no_evidence_and_every_reason_is_listed() -> None:
    decision = decide_rollout_step(
        DeploymentHealth(requests=4, errors=4, p95_ms=500.0), LIVE, POLICY
    )
    assert decision.step is Step.rollback and len(decision.reasons) == 3


def test_tiny_latencies_get_the_absolute_allowance() -> None:
    live = DeploymentHealth(requests=100, errors=0, p95_ms=2.0)
    decision = decide_rollout_step(
        DeploymentHealth(requests=100, errors=0, p95_ms=6.0), live, POLICY
    )
    assert decision.step is Step.proceed  # 6 ms <= 2 x 1.5 + 5


@pytest.mark.parametrize("steps", [[10, 50], [50, 10, 100], [0, 100], []])
def test_steps_must_rise_to_100(steps: list[int]) -> None:
    with pytest.raises(ValidationError, match="steps"):
        RolloutPolicy(steps=steps)


def test_one_slow_window_is_held_again_two_roll_back_and_errors_never_wait() -> None:
    slow = DeploymentHealth(requests=100, errors=0, p95_ms=200.0)
    first = decide_rollout_step(slow, LIVE, POLICY)
    assert first.step is Step.hold_again and "window 1 of 2: held again" in first.reasons[0]
    healthy_again = decide_rollout_step(
        DeploymentHealth(requests=100, errors=0, p95_ms=50.0), LIVE, POLICY, latency_breaches=1
    )
    assert healthy_again.step is Step.proceed  # a busy machine, not a slower model
    assert decide_rollout_step(slow, LIVE, POLICY, latency_breaches=1).step is Step.rollback
    at_once = POLICY.model_copy(update={"latency_windows": 1})
    assert decide_rollout_step(slow, LIVE, at_once).step is Step.rollback
    slow_and_failing = DeploymentHealth(requests=100, errors=10, p95_ms=200.0)
    assert decide_rollout_step(slow_and_failing, LIVE, POLICY).step is Step.rollback


def test_a_window_p95_counts_only_the_requests_in_that_window() -> None:
    from serving.metrics import DeploymentMetrics, interval_percentile

    metrics = DeploymentMetrics()
    for _ in range(100):
        metrics.record(900.0, failed=False)  # a busy first window
    before = metrics.snapshot(model_calls=0)
    for latency in range(1, 101):
        metrics.record(float(latency), failed=False)  # 1..100 ms in the second
    after = metrics.snapshot(model_calls=0)
    assert after.latency_ms["p95"] == 900.0  # the lifetime window still remembers the spike
    p95 = interval_percentile(after, before, 95)
    assert p95 is not None and 95 <= p95 <= 95 * 1.1
    assert interval_percentile(before, before, 95) is None
    assert 900 <= interval_percentile(before, None, 95) <= 990
