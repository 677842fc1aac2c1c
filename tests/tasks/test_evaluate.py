"""The evaluate stage's scoring and its PII check on predictions, with the real screen."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from platforms.evaluation import EvalReport
from screening.config import ScreenConfig
from screening.outputs import screen_outputs
from trainer.metrics import score_records

SCREEN = ScreenConfig()
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
    screened = screen_outputs(predictions, records, SCREEN)
    assert screened.leaks == 1
    assert screen_outputs(predictions[:2], records[:2], SCREEN).leaks == 0
    # what the evaluation artifact shows: every finding masked, leaked or copied
    assert screened.masked == ["3 days", "<EMAIL_ADDRESS>", "mail <EMAIL_ADDRESS>"]
    # what the report keeps of each finding: where it is and whether the input held it
    emails = [f for f in screened.findings if f.entity == "EMAIL_ADDRESS"]
    assert [(f.prediction, f.in_input) for f in emails] == [(1, True), (2, False)]
    assert predictions[2][emails[1].start : emails[1].end] == "jorge.pereira@contoso.com"


def passed_report(metric: str, **fields: Any) -> EvalReport:
    """An EvalReport whose gate passed, base 1.0 and candidate 60.0 on `metric`, with `fields`."""
    from platforms.evaluation import EvalReport, GateDecision

    values: dict[str, Any] = {
        "task": "extractive-qa",
        "primary_metric": metric,
        "test_records": 1,
        "base": {metric: 1.0},
        "candidate": {metric: 60.0},
        "champion": None,
        "champion_version": None,
        "interval": None,
        "pii_leaks": 0,
        "gate": GateDecision(passed=True, reasons=[], checks=[]),
    }
    return EvalReport(**(values | fields))


def test_the_evaluation_artifact_shows_outputs_beside_references() -> None:
    from tasks.evaluation_report import report_markdown

    report = passed_report(
        "rougeL",
        task="summarization",
        examples=[{"reference": "VPN down | 3 days", "base": "la la", "candidate": "VPN down"}],
    )
    assert "| VPN down \\| 3<br>days | la la | VPN down |" in report_markdown(report)


def test_the_examples_table_has_every_model_s_output_in_short_cells_and_the_loss_a_picture() -> (
    None
):
    import base64

    from tasks.evaluation_report import loss_curve_markdown, report_markdown, shown_question

    long_output = "see " + "x" * 200 + " and more words after it " * 4
    report = passed_report(
        "f1",
        champion={"f1": 50.0},
        champion_version=2,
        examples=[
            {
                "question": shown_question({"question": "How long?", "context": "c"}),
                "reference": "3 days",
                "base": "la",
                "candidate": long_output,
                "champion": "<PERSON> said 3 days",
            }
        ],
    )
    markdown = report_markdown(report)
    assert "| question | reference | base | candidate | champion |" in markdown
    row = next(line for line in markdown.splitlines() if line.startswith("| How long? |"))
    cells = row.strip("|").split(" | ")
    assert cells[-1].strip() == "&lt;PERSON&gt; said 3<br>days"  # a placeholder, not a tag
    # a few short lines: Prefect's cells do not wrap, so the lines are the cell's width
    lines = cells[3].split("<br>")
    assert len(lines) == 5 and max(len(line) for line in lines) <= 15
    assert lines[0] == "see xxxxxxxxxxx" and lines[-1].endswith("…")
    assert shown_question({"messages": [{"role": "user", "content": "hi"}]}) == "hi"

    picture = loss_curve_markdown([{"step": s, "loss": 3.0 / s} for s in range(1, 11)])
    assert picture is not None and "3.000 → 0.300 over 10 steps" in picture
    data = picture.split("(data:image/png;base64,")[1].rstrip(")")
    assert base64.b64decode(data).startswith(b"\x89PNG")
    assert loss_curve_markdown([{"step": 1, "eval_loss": 2.0}]) is None


def test_scores_come_from_the_repo_modules_with_per_example_values() -> None:
    records = [_record("3 days"), _record("Porto office")]
    values, per_example = score_records("extractive-qa", ["3 days", "the office"], records)
    # "the office" -> [office] vs [porto, office]: P=1, R=1/2, F1=2/3
    assert values == pytest.approx({"exact_match": 50.0, "f1": (100 + 200 / 3) / 2})
    assert per_example == pytest.approx([100.0, 200 / 3])
    summaries = [{"id": "s", "document": "d", "summary": "the cat sat"}]
    values, per_example = score_records("summarization", ["the cat sat"], summaries)
    assert values["rougeL"] == pytest.approx(100.0) and per_example == pytest.approx([100.0])


def test_the_gate_judges_the_evaluation_jobs_scores_and_screen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What an evaluation job scored (each record's score too) and found in the candidate's
    outputs is what the gate judges: nothing is scored or screened again here, and the paired
    bootstrap resamples the job's per-record scores. A screen under another screen config than
    the run's is not taken: the outputs are screened here."""
    from platforms.manifest import DatasetRef
    from platforms.model_version import ModelVersion
    from platforms.training import Evaluation, TrainingJob
    from tasks import evaluate as stage
    from tasks.gate import paired_bootstrap
    from trainer.evaluate import score_models

    records = [{**_record("3 days"), "id": f"r{i}"} for i in range(6)]
    (tmp_path / "test").mkdir()
    pq.write_table(pa.Table.from_pylist(records), tmp_path / "test" / "part-00000.parquet")
    split = DatasetRef(
        uri=str(tmp_path), stage="split", task="extractive-qa", key="k", content_hash="h", counts={}
    )
    job = TrainingJob(name="j", backend="azureml", status="completed", output_dir="", log_path="")
    champion = ModelVersion(name="m", version=3, path="azureml:m:3", created_at="")
    predictions: dict[str, list[str] | None] = {
        "base": ["Porto"] * 6,
        "candidate": ["3 days"] * 5 + ["mail jorge.pereira@contoso.com"],
        "champion": ["3 days", "3 days", "Porto", "Porto", "3 days", "Porto"],
    }
    # what the job wrote: trainer.evaluate's scores, screening.outputs' screen
    scores = score_models("extractive-qa", predictions, records)["models"]
    screened = stage.screen_candidate("extractive-qa", predictions["candidate"], records, SCREEN)
    config = stage.EvaluateConfig(min_test_records=6, bootstrap_samples=200)

    def again(*args: object) -> None:
        raise AssertionError("scored or screened again here")

    with monkeypatch.context() as patched:
        patched.setattr(stage, "scored", again)
        patched.setattr(stage, "screen_candidate", again)
        report = stage.run_evaluation(
            split,
            job,
            champion,
            config,
            SCREEN,
            Evaluation(predictions=predictions, scores=scores, output_screen=screened.model_dump()),
        )
    assert (report.base, report.candidate, report.champion) == tuple(
        scores[m]["metrics"] for m in ("base", "candidate", "champion")
    )
    per_example = [scores[m]["per_example"] for m in ("candidate", "champion")]
    assert report.interval == paired_bootstrap(*per_example, 200, 0.95)
    assert report.pii_leaks == 1 and not report.gate.passed
    # an extractive answer with a value neither its input nor training held: over qa's share 0
    assert any(r.startswith("share of predictions with invented") for r in report.gate.reasons)
    assert report.examples[0]["candidate"] == "3 days"

    other = screened.model_copy(update={"screen": {**screened.screen, "max_samples": 5}})
    calls: list[int] = []
    screen_here = stage.screen_candidate
    monkeypatch.setattr(stage, "screen_candidate", lambda *a: calls.append(1) or screen_here(*a))
    report = stage.run_evaluation(
        split,
        job,
        None,
        config,
        SCREEN,
        Evaluation(predictions=predictions, scores=scores, output_screen=other.model_dump()),
    )
    assert calls == [1] and report.pii_leaks == 1


def test_the_job_leaves_the_screen_to_the_gate_when_its_image_lacks_the_spacy_pipeline(
    tmp_path: Path,
) -> None:
    """An evaluation job whose run screens with a spaCy pipeline its image does not hold does
    not fail: it writes no screen, and the evaluate stage screens the outputs itself."""
    from screening.outputs import main

    (tmp_path / "predictions.json").write_text(
        '{"task": "extractive-qa", "predictions": {"candidate": ["3 days"]}}'
    )
    (tmp_path / "screen.json").write_text('{"spacy_model": "en_core_web_not_installed"}')
    flags = ["--evaluation-dir", str(tmp_path), "--data-dir", str(tmp_path / "data")]
    assert main([*flags, "--screen-config", str(tmp_path / "screen.json")]) is None
    assert sorted(p.name for p in tmp_path.iterdir()) == ["predictions.json", "screen.json"]
