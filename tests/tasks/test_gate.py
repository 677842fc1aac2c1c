"""decide_gate: pass, below threshold, regression against the champion, PII in predictions."""

from __future__ import annotations

import pytest

from tasks.gate import GatePolicy, decide_gate, paired_bootstrap

BASE = {"f1": 10.0, "exact_match": 5.0}


def test_a_clear_improvement_passes() -> None:
    decision = decide_gate(
        {"f1": 60.0, "exact_match": 50.0},
        BASE,
        None,
        GatePolicy(thresholds={"f1": 40}, min_gain_over_base=20),
        "f1",
    )
    assert decision.passed and decision.reasons == []
    assert {c.name for c in decision.checks} >= {"f1 >= 40.0", "f1 gain over base"}


def test_every_unmet_criterion_is_listed() -> None:
    decision = decide_gate(
        {"f1": 25.0, "exact_match": 20.0},
        BASE,
        {"f1": 30.0, "exact_match": 25.0},
        GatePolicy(
            thresholds={"f1": 40, "exact_match": 10}, min_gain_over_base=20, max_regression=1.0
        ),
        "f1",
        memorised_pii=2,
        invented_pii_rate=0.1,
        max_invented_pii=0.05,
    )
    assert not decision.passed
    assert decision.reasons == [
        "f1 >= 40.0: 25.00 (required 40.00)",
        "f1 gain over base: 15.00 (required 20.00)",
        "f1 change vs champion: -5.00 (required -1.00)",
        "predictions with personal data of the training split: 2.00 (required 0.00)",
        "share of predictions with invented personal data: 0.10 (required 0.05)",
    ]


def test_small_regressions_within_tolerance_pass_but_the_interval_can_veto() -> None:
    policy = GatePolicy(max_regression=1.0)
    assert decide_gate({"f1": 59.5}, BASE, {"f1": 60.0}, policy, "f1").passed
    vetoed = decide_gate({"f1": 59.5}, BASE, {"f1": 60.0}, policy, "f1", interval=(-1.6, -0.4))
    assert not vetoed.passed and vetoed.verdict == "failed"
    assert "CI lower bound" in vetoed.reasons[0]


def test_paired_bootstrap_brackets_the_mean_difference() -> None:
    candidate = [float(i % 7) + 1.0 for i in range(200)]
    champion = [float(i % 7) for i in range(200)]
    low, high = paired_bootstrap(candidate, champion, 500, 0.95)
    assert low == pytest.approx(1.0) and high == pytest.approx(1.0)
    noisy = [c + (3 if i % 2 else -3) for i, c in enumerate(champion)]
    low, high = paired_bootstrap(noisy, champion, 1000, 0.9)
    assert low < 0 < high


# --- a lower-is-better metric: perplexity must fall, gains are relative decreases -------------
LM_BASE = {"perplexity": 200.0, "token_accuracy": 10.0}


def test_a_lower_perplexity_passes_by_its_relative_decrease() -> None:
    policy = GatePolicy(thresholds={"perplexity": 50}, min_gain_over_base=40, max_regression=1)
    decision = decide_gate(
        {"perplexity": 20.0, "token_accuracy": 60.0},
        LM_BASE,
        {"perplexity": 20.1, "token_accuracy": 59.0},
        policy,
        "perplexity",
    )
    assert decision.passed, decision.reasons
    checks = {c.name: c.value for c in decision.checks}
    assert checks["perplexity <= 50.0"] == 20.0
    assert checks["perplexity gain over base (% decrease)"] == pytest.approx(90.0)
    assert checks["perplexity change vs champion (% decrease)"] == pytest.approx(100 * 0.1 / 20.1)


def test_a_higher_perplexity_fails_every_check_a_higher_score_would_pass() -> None:
    decision = decide_gate(
        {"perplexity": 150.0},
        LM_BASE,
        {"perplexity": 100.0},
        GatePolicy(thresholds={"perplexity": 120}, min_gain_over_base=40, max_regression=1),
        "perplexity",
    )
    assert decision.reasons == [
        "perplexity <= 120.0: 150.00 (required 120.00)",
        "perplexity gain over base (% decrease): 25.00 (required 40.00)",
        "perplexity change vs champion (% decrease): -50.00 (required -1.00)",
    ]


def test_perplexity_thresholds_are_known_and_kept_only_for_its_task() -> None:
    policy = GatePolicy(thresholds={"perplexity": 30, "f1": 50})
    assert policy.for_task(("perplexity", "token_accuracy")).thresholds == {"perplexity": 30}


def test_a_three_record_test_split_cannot_be_judged_and_says_what_to_do() -> None:
    """Issue 24 item 4: a user's first model failed its gate on 3 test records with no word
    that 3 records judge nothing; now the gate says it cannot judge, and how to get a verdict."""
    good = {"f1": 90.0, "exact_match": 80.0}
    policy = GatePolicy(thresholds={"f1": 50}, min_gain_over_base=20)
    for candidate in (good, {"f1": 0.0, "exact_match": 0.0}):  # a pass or a fail: noise either way
        decision = decide_gate(candidate, BASE, None, policy, "f1", test_records=3)
        assert not decision.passed and decision.verdict == "cannot-judge"
        assert decision.reasons[0].startswith("cannot judge on 3 test records")
        assert "evaluate.min_test_records: 30" in decision.reasons[0]
        assert "more records" in decision.reasons[0] and "split.test" in decision.reasons[0]
    enough = decide_gate(good, BASE, None, policy, "f1", test_records=30)
    assert enough.passed and enough.verdict == "passed"
    lowered = GatePolicy(min_test_records=3)
    assert decide_gate(good, BASE, None, lowered, "f1", test_records=3).passed
    leaking = decide_gate(good, BASE, None, policy, "f1", test_records=3, memorised_pii=1)
    assert leaking.verdict == "failed"  # a memorised value fails on any number of records


def test_an_interval_wider_than_the_regression_it_must_detect_cannot_judge() -> None:
    policy = GatePolicy(max_regression=1.0, confidence=0.95)
    args = ({"f1": 60.5}, BASE, {"f1": 60.0}, policy, "f1")
    wide = decide_gate(*args, interval=(-100.0, 40.0), test_records=40)
    assert wide.verdict == "cannot-judge" and not wide.passed
    assert "wider than the 1.00-point regression" in wide.reasons[-1]
    assert "larger test share" in wide.reasons[-1]
    assert decide_gate(*args, interval=(-0.5, 1.5), test_records=40).passed  # narrow: judged
    worse = decide_gate({"f1": 50.0}, BASE, {"f1": 60.0}, policy, "f1", interval=(-30.0, 5.0))
    assert worse.verdict == "failed"  # the change itself is a regression: judged, whatever the CI


def test_the_split_is_refused_with_the_gates_own_message_before_anything_trains() -> None:
    from tasks.evaluate import EvaluateConfig
    from tasks.judgeable import CannotJudge, require_judgeable

    config = EvaluateConfig(min_test_records=30)
    gate = decide_gate({"f1": 80.0}, {"f1": 10.0}, None, config, "f1", test_records=9)
    with pytest.raises(CannotJudge) as early:
        require_judgeable(9, config, "nothing was trained")
    assert (
        str(early.value)
        == f"the gate cannot judge this data, nothing was trained: {gate.reasons[0]}"
    )
    require_judgeable(30, config, "nothing was trained")  # enough: no error
    capped = EvaluateConfig(min_test_records=30, max_test_records=20)  # the run passes its cap
    with pytest.raises(CannotJudge, match=r"evaluate\.max_test_records: 20 caps it; raise it"):
        require_judgeable(500, capped, "nothing was trained", capped.max_test_records)


def test_a_memorised_value_always_fails_and_invented_ones_only_above_the_tasks_share() -> None:
    """Issue 45 item 6: a value of the training split in a prediction fails the gate; values
    neither its input nor training held are a share compared with the task's limit."""
    good = {"f1": 90.0, "exact_match": 80.0}
    policy = GatePolicy()
    assert policy.invented_limit("extractive-qa") == 0.0
    assert policy.invented_limit("chat") == 0.05
    chat = policy.invented_limit("chat")
    assert decide_gate(
        good, BASE, None, policy, "f1", invented_pii_rate=0.04, max_invented_pii=chat
    ).passed
    over = decide_gate(
        good, BASE, None, policy, "f1", invented_pii_rate=0.06, max_invented_pii=chat
    )
    assert over.reasons == [
        "share of predictions with invented personal data: 0.06 (required 0.05)"
    ]
    memorised = decide_gate(good, BASE, None, policy, "f1", memorised_pii=1, max_invented_pii=chat)
    assert memorised.reasons == [
        "predictions with personal data of the training split: 1.00 (required 0.00)"
    ]
    unchecked = GatePolicy(fail_on_pii=False)
    assert decide_gate(good, BASE, None, unchecked, "f1", memorised_pii=3).passed


def test_the_invented_share_is_set_per_known_task_between_0_and_1() -> None:
    from pydantic import ValidationError

    looser = GatePolicy(max_invented_pii={"chat": 0.2})  # the others keep their defaults
    assert looser.invented_limit("chat") == 0.2 and looser.invented_limit("summarization") == 0.05
    assert looser.invented_limit("extractive-qa") == 0.0
    with pytest.raises(ValidationError, match="unknown task type"):
        GatePolicy(max_invented_pii={"dialogue": 0.1})
    with pytest.raises(ValidationError, match="between 0 and 1"):
        GatePolicy(max_invented_pii={"chat": 5})
