"""Scoring predictions: every model (base, candidate, champion, each serving runtime) is measured
by the same prediction code (trainer/predict) and the repo's own metric modules (trainer/metrics),
so their numbers compare.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from trainer.metrics import score_records


@dataclass(frozen=True)
class Scored:
    """One model's predictions on the test records and their scores."""

    predictions: list[str]
    metrics: dict[str, float]
    per_example: list[float]  # the primary metric of each record, for the bootstrap


def scored(task_type: str, predictions: list[str], records: list[dict[str, Any]]) -> Scored:
    metrics, per_example = score_records(task_type, predictions, records)
    return Scored(predictions, metrics, per_example)


def predict_and_score(
    task_type: str,
    trainer_task: str,
    model: Any,
    tokenizer: Any,
    records: list[dict[str, Any]],
    batch_size: int,
    **lengths: int,
) -> Scored:
    """One model through the same prediction and metric code as every other (`lengths`:
    max_length, max_new_tokens; default the model's own)."""
    from trainer.predict import predict

    predictions = predict(model, tokenizer, trainer_task, records, batch_size=batch_size, **lengths)
    return scored(task_type, predictions, records)
