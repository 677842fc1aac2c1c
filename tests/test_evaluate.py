"""The evaluate stage's scoring and its PII check on predictions, with the real screen."""

from __future__ import annotations

import pytest

from screening.outputs import screen_outputs
from screening.policy import ScreenConfig
from tasks.scoring import score

CONTEXT = "Write to dana.silva@example.com; the Porto office was closed for 3 days."


def _record(answer: str) -> dict:
    return {
        "id": "r1",
        "question": "Whom to write to?",
        "context": CONTEXT,
        "answers": {"text": [answer], "answer_start": [CONTEXT.index(answer)]},
    }


def test_a_prediction_with_pii_absent_from_its_input_is_a_leak() -> None:
    records = [_record("3 days"), _record("3 days"), _record("3 days")]
    predictions = [
        "3 days",  # clean
        "dana.silva@example.com",  # personal data, but copied from the input: not a leak
        "mail jorge.pereira@contoso.com",  # personal data the input never held
    ]
    screened = screen_outputs(predictions, records, ScreenConfig())
    assert screened.leaks == 1
    assert screen_outputs(predictions[:2], records[:2], ScreenConfig()).leaks == 0
    # what the evaluation artifact shows: every finding masked, leaked or copied
    assert screened.masked == ["3 days", "<EMAIL_ADDRESS>", "mail <EMAIL_ADDRESS>"]
    # what the report keeps of each finding: where it is and whether the input held it
    emails = [f for f in screened.findings if f.entity == "EMAIL_ADDRESS"]
    assert [(f.prediction, f.in_input) for f in emails] == [(1, True), (2, False)]
    assert predictions[2][emails[1].start : emails[1].end] == "jorge.pereira@contoso.com"


def test_the_evaluation_artifact_shows_outputs_beside_references() -> None:
    from tasks.evaluation_report import EvalReport, report_markdown
    from tasks.gate import GateDecision

    report = EvalReport(
        task="summarization",
        primary_metric="rougeL",
        test_records=1,
        base={"rougeL": 1.0},
        candidate={"rougeL": 60.0},
        champion=None,
        champion_version=None,
        interval=None,
        pii_leaks=0,
        gate=GateDecision(passed=True, reasons=[], checks=[]),
        examples=[{"reference": "VPN down | 3 days", "base": "la la", "candidate": "VPN down"}],
    )
    assert "| VPN down \\| 3 days | la la | VPN down |" in report_markdown(report)


def test_scores_come_from_the_repo_modules_with_per_example_values() -> None:
    records = [_record("3 days"), _record("Porto office")]
    values, per_example = score("extractive-qa", ["3 days", "the office"], records)
    # "the office" -> [office] vs [porto, office]: P=1, R=1/2, F1=2/3
    assert values == pytest.approx({"exact_match": 50.0, "f1": (100 + 200 / 3) / 2})
    assert per_example == pytest.approx([100.0, 200 / 3])
    summaries = [{"id": "s", "document": "d", "summary": "the cat sat"}]
    values, per_example = score("summarization", ["the cat sat"], summaries)
    assert values["rougeL"] == pytest.approx(100.0) and per_example == pytest.approx([100.0])
