"""Perplexity and token accuracy of a language model's predictions as an `evaluate` module.

A prediction is the JSON string `trainer.metric_specs.lm_prediction` writes (the model's
summed negative log-likelihood of a document's tokens, their count, how many it ranked first);
the references (the documents) are what was scored, not compared with. Lower perplexity is
better. Loaded by path, offline: `trainer.metrics.load_metric(PERPLEXITY_MODULE)`.
"""

import datasets
import evaluate

from trainer.metrics.scores import perplexity_scores


class Perplexity(evaluate.Metric):
    def _info(self) -> evaluate.MetricInfo:
        return evaluate.MetricInfo(
            description="Corpus perplexity (exp of the mean token negative log-likelihood; lower "
            "is better) and token accuracy (percent of tokens that were the most likely).",
            citation="Jelinek et al., Perplexity: a measure of the difficulty of speech "
            "recognition tasks, 1977",
            inputs_description="predictions: list of JSON str (lm_prediction); references: "
            "list of str (the documents)",
            features=datasets.Features(
                {"predictions": datasets.Value("string"), "references": datasets.Value("string")}
            ),
        )

    def _compute(self, predictions, references):
        if len(predictions) != len(references):
            raise ValueError(f"{len(predictions)} predictions but {len(references)} references")
        return perplexity_scores(predictions)
