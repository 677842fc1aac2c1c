"""Metrics that ship with the repo: SQuAD-style EM/F1, ROUGE and perplexity. Nothing loads from
a hub.

`scores.py` holds the plain functions; `squad/`, `rouge/` and `perplexity/` wrap them as
`evaluate` modules, loaded by their directory path with `load_metric` (never by a hub name such
as "squad", which `evaluate.load` would fetch from the Hugging Face Hub at run time). `METRICS`
is the table a task's `TaskSpec.metric` names: the module, what it reports and which of those are
better lower (`trainer.metric_specs`, readable without loading any of this), and the primary
metric of each example (what a paired bootstrap resamples).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trainer.metric_specs import (
    LOWER_IS_BETTER,
    METRIC_NAMES,
    METRIC_SPECS,
    MetricSpec,
    metric_spec,
)
from trainer.metrics.scores import (
    per_example_f1,
    per_example_log_perplexity,
    per_example_rouge_l,
)

SQUAD_MODULE = str(Path(__file__).parent / "squad")
ROUGE_MODULE = str(Path(__file__).parent / "rouge")
PERPLEXITY_MODULE = str(Path(__file__).parent / "perplexity")


@dataclass(frozen=True)
class Metric:
    """One metric module: its folder, what it reports (`trainer.metric_specs`) and each
    example's score (higher is better) for the paired bootstrap."""

    module: str
    spec: MetricSpec
    per_example: Callable[[Sequence[str], Sequence[Any]], list[float]]

    @property
    def names(self) -> tuple[str, ...]:
        return self.spec.names

    @property
    def lower_is_better(self) -> frozenset[str]:
        return self.spec.lower_is_better


METRICS: dict[str, Metric] = {
    "squad": Metric(SQUAD_MODULE, METRIC_SPECS["squad"], per_example_f1),
    "rouge": Metric(ROUGE_MODULE, METRIC_SPECS["rouge"], per_example_rouge_l),
    "perplexity": Metric(
        PERPLEXITY_MODULE,
        METRIC_SPECS["perplexity"],
        lambda predictions, references: per_example_log_perplexity(predictions),
    ),
}
assert set(METRICS) == set(METRIC_SPECS), "every metric spec has its module"


def metric_of(name: str) -> Metric:
    """The metric module `name` (a `TaskSpec.metric`); ValueError naming an unknown one."""
    metric_spec(name)
    return METRICS[name]


def score(
    name: str, predictions: Sequence[str], references: Sequence[Any]
) -> tuple[dict[str, float], list[float]]:
    """(the metric's values, each example's score) of predictions against their references,
    through the repo's `evaluate` module."""
    metric = metric_of(name)
    if not predictions:
        raise ValueError("no predictions to score")
    values = load_metric(metric.module).compute(predictions=predictions, references=references)
    return values, metric.per_example(predictions, references)


def score_records(
    task: str, predictions: Sequence[str], records: Sequence[dict[str, Any]]
) -> tuple[dict[str, float], list[float]]:
    """(the task's metric values, each record's primary score) of one model's predictions of
    `records`, scored against the references the task's spec reads from them: what the evaluate
    stage and the evaluation job both score with."""
    from trainer.taskspec import task_spec

    spec = task_spec(task)
    return score(spec.metric, predictions, [spec.reference_of(r) for r in records])


@functools.cache
def load_metric(module_dir: str) -> Any:
    """One of the repo's `evaluate` modules, loaded from its directory (offline)."""
    script = Path(module_dir) / f"{Path(module_dir).name}.py"
    if not script.is_file():
        raise ValueError(
            f"{module_dir} is not a metric module of this repo (no {script.name}): use "
            "one of trainer.metrics.METRICS' modules"
        )
    os.environ.setdefault("HF_EVALUATE_OFFLINE", "1")
    import evaluate

    return evaluate.load(str(script.resolve()))  # a local script path: never a Hub lookup


__all__ = [
    "LOWER_IS_BETTER",
    "METRICS",
    "METRIC_NAMES",
    "Metric",
    "load_metric",
    "metric_of",
    "score",
    "score_records",
]
