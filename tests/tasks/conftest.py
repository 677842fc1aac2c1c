"""Fixtures of the rollout tests (test_rollout.py, test_rollout_live.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from trainer.modeling import load_trained
from trainer.predict import predict
from trainer.taskspec import task_spec

CONTEXT = "Agent Rui reset the VPN token for the Porto office; the outage lasted 3 days."
QUESTIONS = ["How long did the outage last?", "What was reset?", "Which office was affected?"]


@pytest.fixture(scope="module")
def samples(qa_model_dir: Path) -> list[dict]:
    """Smoke samples as the evaluation hands them to the rollout: three short requests and
    the answers `qa_model_dir` gave them offline."""
    records = [
        {"question": q, "context": CONTEXT, "answers": {"text": [""], "answer_start": [0]}}
        for q in QUESTIONS
    ]
    model, tokenizer, _ = load_trained(qa_model_dir)
    answers = predict(model, tokenizer, "extractive-qa", records)
    return [
        {"request": task_spec("extractive-qa").request_of(r), "expected": a}
        for r, a in zip(records, answers, strict=True)
    ]
