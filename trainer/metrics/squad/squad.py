"""SQuAD v1.1 exact match and F1 as an `evaluate` module; no references is a question with no
answer, scored as SQuAD v2.0 does (an empty prediction is right).

Loaded by path, offline: `trainer.metrics.load_metric(SQUAD_MODULE)`, never a hub name.
"""

import datasets
import evaluate

from trainer.metrics.scores import squad_scores


class Squad(evaluate.Metric):
    def _info(self) -> evaluate.MetricInfo:
        return evaluate.MetricInfo(
            description="SQuAD v1.1 exact match and token F1 (percent), best over references; "
            "no references: only an empty prediction is right (SQuAD v2.0).",
            citation="Rajpurkar et al., SQuAD: 100,000+ Questions for Machine Comprehension, 2016",
            inputs_description="predictions: list of str; references: list of list of str",
            features=datasets.Features(
                {
                    "predictions": datasets.Value("string"),
                    "references": datasets.Sequence(datasets.Value("string")),
                }
            ),
        )

    def _compute(self, predictions, references):
        return squad_scores(predictions, references)
