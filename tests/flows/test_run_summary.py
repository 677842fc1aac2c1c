"""What a person reads at the end of a run, and in the training log."""

from __future__ import annotations

from flows.summary import gate_line
from tasks.gate import GatePolicy, decide_gate

EVALUATION = {
    "primary_metric": "f1",
    "base": {"f1": 10.24, "exact_match": 0.0},
    "candidate": {"f1": 86.76, "exact_match": 85.0},
    "champion": None,
    "champion_version": None,
    "gate": {"passed": True, "reasons": []},
}


def test_the_closing_line_shows_base_to_candidate_and_the_gate() -> None:
    assert gate_line(EVALUATION) == "f1: base 10.2 → candidate 86.8; gate passed"
    failed = {
        **EVALUATION,
        "champion": {"f1": 88.0},
        "champion_version": 3,
        "gate": {"passed": False, "reasons": ["f1 regression 1.2 > 1.0 vs champion"]},
    }
    assert gate_line(failed) == (
        "f1: base 10.2 → candidate 86.8 (champion v3: 88.0); "
        "gate FAILED: f1 regression 1.2 > 1.0 vs champion"
    )
    decision = decide_gate(EVALUATION["candidate"], EVALUATION["base"], None, GatePolicy(), "f1",
                           test_records=3)  # fmt: skip
    gate = {"passed": decision.passed, "verdict": decision.verdict, "reasons": decision.reasons}
    assert gate_line({**EVALUATION, "gate": gate}).startswith(
        "f1: base 10.2 → candidate 86.8; gate cannot judge: cannot judge on 3 test records"
    )


def test_a_new_head_is_one_line_in_the_log_not_transformers_loading_table(caplog) -> None:
    import logging

    from trainer.modeling import load_base

    with caplog.at_level(logging.INFO):
        load_base("extractive-qa", "packaged:all-MiniLM-L6-v2", seed=42)
    text = "\n".join(r.getMessage() for r in caplog.records)
    assert "UNEXPECTED" not in text and "MISSING" not in text
    assert (
        "loaded packaged:all-MiniLM-L6-v2: new (initialised) qa_outputs; "
        "unused from the checkpoint pooler.dense" in text
    )
    assert logging.getLogger("transformers.modeling_utils").level == logging.NOTSET  # restored
