"""ROUGE-1/2/L/Lsum on rouge_score as an `evaluate` module.

Loaded by path, offline: `trainer.metrics.load_metric(ROUGE_MODULE)`, never a hub name.
"""

import datasets
import evaluate

from trainer.metrics.scores import rouge_scores


class Rouge(evaluate.Metric):
    def _info(self) -> evaluate.MetricInfo:
        return evaluate.MetricInfo(
            description="Mean ROUGE F-measures (percent), Porter stemming, Lsum on newlines.",
            citation="Lin, ROUGE: A Package for Automatic Evaluation of Summaries, 2004",
            inputs_description="predictions: list of str; references: list of str",
            features=datasets.Features(
                {"predictions": datasets.Value("string"), "references": datasets.Value("string")}
            ),
        )

    def _compute(self, predictions, references, use_stemmer=True):
        return rouge_scores(predictions, references, use_stemmer=use_stemmer)
