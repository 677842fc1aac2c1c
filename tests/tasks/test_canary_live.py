"""The live window's decision (tasks/canary_live.py): which collected records a window reads, what
each side's numbers are, and the verdict on them. The rollouts that use it run against a real
endpoint in test_rollout_live.py."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from tasks.canary_live import (
    LiveCanaryConfig,
    decide_live_window,
    live_side,
    step_after_live,
    window_records,
)
from tasks.rollout_policy import DeploymentHealth, Step, StepDecision

START = datetime(2026, 11, 29, 10, 0, tzinfo=UTC)
CONFIG = LiveCanaryConfig(min_requests=10)
ENTITIES = frozenset({"EMAIL_ADDRESS"})


def _record(
    deployment: str,
    status: int = 200,
    answer: str = "3 days",
    score: float = 0.5,
    at: datetime = START,
    routed: str = "traffic",
    latency_ms: float = 20.0,
) -> dict[str, Any]:
    outputs = [{"answer": answer, "score": score}] if status < 400 else None
    version = {"green": "qa:2", "blue": "qa:1"}[deployment]
    return {
        "deployment": deployment,
        "version": version,
        "status": status,
        "latency_ms": latency_ms,
        "inputs": [{"question": "How long?", "context": "It lasted 3 days."}],
        "outputs": outputs,
        "time": (at + timedelta(seconds=1)).isoformat(),
        "routed": routed,
    }


def _sides(challenger: list[dict], champion: list[dict]) -> tuple[Any, Any]:
    return (
        live_side(challenger, "green", "qa:2", "answer", ENTITIES),
        live_side(champion, "blue", "qa:1", "answer", ENTITIES),
    )


def _decide(challenger: list[dict], champion: list[dict], config: LiveCanaryConfig = CONFIG):
    return decide_live_window(*_sides(challenger, champion), config, "since", "until")


def test_a_window_reads_the_users_requests_of_its_time_and_sides_only() -> None:
    records = [
        _record("green"),
        _record("green", routed="named"),  # the rollout's own replay
        _record("green", at=START - timedelta(minutes=5)),  # before the step
        _record("blue"),
        {**_record("blue"), "version": "qa:0"},  # an older version on the same colour
        {k: v for k, v in _record("blue").items() if k != "routed"},  # collected before `routed`
    ]
    sides: dict = {("green", "qa:2", "traffic"): [], ("blue", "qa:1", "traffic"): []}
    window_records(iter(records), START, START + timedelta(minutes=1), sides)
    assert [len(v) for v in sides.values()] == [1, 2]


def test_a_record_stamped_to_the_millisecond_before_the_step_is_not_in_its_window() -> None:
    """The local collector stamps to the millisecond: a request answered 300 ms before the step
    began (traffic still routed the old way) is not the step's. Azure ML's collector stamps to
    the second: its record of that second may be the step's, so it counts."""
    since = START + timedelta(milliseconds=700)
    before = (START + timedelta(milliseconds=400)).isoformat(timespec="milliseconds")
    after = (START + timedelta(milliseconds=900)).isoformat(timespec="milliseconds")
    records = [
        {**_record("blue"), "time": before},
        {**_record("blue"), "time": after},
        {**_record("green"), "time": START.isoformat(timespec="seconds")},
    ]
    sides: dict = {("green", "qa:2", "traffic"): [], ("blue", "qa:1", "traffic"): []}
    window_records(iter(records), since, START + timedelta(minutes=1), sides)
    assert [r["time"] for r in sides[("blue", "qa:1", "traffic")]] == [after]
    assert len(sides[("green", "qa:2", "traffic")]) == 1


def test_a_healthy_challenger_passes_and_every_number_is_kept() -> None:
    verdict = _decide([_record("green")] * 12, [_record("blue")] * 12)
    assert verdict.verdict == "pass" and verdict.reasons == []
    assert verdict.challenger is not None and verdict.challenger.health.requests == 12
    assert verdict.challenger.median_score == 0.5 and verdict.score_p_value == 1.0
    assert verdict.error_rate_limit == pytest.approx(0.01)


def test_too_few_challenger_requests_cannot_be_judged() -> None:
    verdict = _decide([_record("green")] * 9, [_record("blue")] * 30)
    assert verdict.verdict == "cannot-judge"
    assert "9 live requests" in verdict.reasons[0] and "min_requests (10)" in verdict.reasons[0]


def test_errors_the_champion_does_not_have_fail() -> None:
    challenger = [_record("green")] * 8 + [_record("green", status=500)] * 4
    verdict = _decide(challenger, [_record("blue")] * 12)
    assert verdict.verdict == "fail"
    assert verdict.reasons == [
        "live: challenger error rate 0.333 above 0.010 (champion 0.000 + 0.01)"
    ]


def test_a_refused_request_is_no_model_error() -> None:
    verdict = _decide([_record("green")] * 12 + [_record("green", status=413)], [_record("blue")])
    assert verdict.verdict == "pass"


def test_lower_scores_fail_only_when_they_differ_beyond_chance() -> None:
    lower = [_record("green", score=0.1 + i / 1000) for i in range(30)]
    champion = [_record("blue", score=0.6 + i / 1000) for i in range(30)]
    verdict = _decide(lower, champion)
    assert verdict.verdict == "fail" and "answer scores lower" in verdict.reasons[0]
    # higher scores are no reason to roll back; two scores of ten apart are no evidence
    assert _decide(champion[:12], lower[:12]).verdict == "pass"
    few = [_record("green", score=0.4)] * 10 + [_record("green", score=0.1)] * 2
    assert _decide(few, [_record("blue", score=0.4)] * 12).verdict == "pass"


def test_personal_data_in_the_answers_fails_beyond_the_champions_share() -> None:
    leaking = [_record("green", answer="mail <EMAIL_ADDRESS>")] * 3 + [_record("green")] * 9
    verdict = _decide(leaking, [_record("blue")] * 12)
    assert verdict.verdict == "fail"
    assert verdict.challenger is not None and verdict.challenger.personal_answers == 3
    assert "personal data 0.250 above 0.050" in verdict.reasons[0]
    # a placeholder of an entity the screen does not name is not personal data
    other = [_record("green", answer="<LOCATION>")] * 12
    assert _decide(other, [_record("blue")] * 12).verdict == "pass"


def test_a_slower_challenger_fails_on_its_p95() -> None:
    slow = [_record("green", latency_ms=400)] * 12
    verdict = _decide(slow, [_record("blue", latency_ms=20)] * 12)
    assert verdict.verdict == "fail" and "live: challenger p95 400.0 ms" in verdict.reasons[0]


def _replayed(step: Step) -> StepDecision:
    health = DeploymentHealth(requests=10, errors=0)
    return StepDecision(
        step=step, reasons=[], candidate=health, live=health, p95_limit_ms=None, error_rate_limit=0
    )


@pytest.mark.parametrize(
    ("action", "step", "said"),
    [
        ("rollback", Step.rollback, "rolled back (rollout.live.on_cannot_judge: rollback)"),
        ("smoke-only", Step.proceed, "advanced on the replayed requests alone"),
    ],
)
def test_a_window_that_cannot_be_judged_never_advances_unsaid(
    action: str, step: Step, said: str
) -> None:
    config = CONFIG.model_copy(update={"on_cannot_judge": action})
    verdict = decide_live_window(*_sides([], []), config, "since", "until")
    got, reasons = step_after_live(_replayed(Step.proceed), verdict, config)
    assert got is step and said in reasons[-1]


def test_both_halves_must_pass() -> None:
    passed = _decide([_record("green")] * 12, [_record("blue")] * 12)
    failed = _decide([_record("green", status=500)] * 12, [_record("blue")] * 12)
    assert step_after_live(_replayed(Step.proceed), passed, CONFIG)[0] is Step.proceed
    assert step_after_live(_replayed(Step.proceed), failed, CONFIG)[0] is Step.rollback
    assert step_after_live(_replayed(Step.rollback), passed, CONFIG)[0] is Step.rollback
    assert step_after_live(None, failed, CONFIG)[0] is Step.rollback  # the shadow step
    off = step_after_live(_replayed(Step.proceed), None, CONFIG)
    assert off[0] is Step.proceed and "rollout.live.enabled: false" in off[1][-1]
