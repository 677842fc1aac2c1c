"""Metric modules against hand-computed cases, through the plain functions and `load_metric`."""

from __future__ import annotations

import pytest

from trainer.metric_specs import lm_completion, lm_prediction
from trainer.metrics import PERPLEXITY_MODULE, ROUGE_MODULE, SQUAD_MODULE, load_metric
from trainer.metrics.scores import (
    normalize_answer,
    per_example_f1,
    per_example_log_perplexity,
    perplexity_scores,
    rouge_scores,
    squad_scores,
    token_f1,
)


def test_normalisation_drops_case_punctuation_articles_and_spaces() -> None:
    assert normalize_answer("  The  Lisbon office, (EU)!") == "lisbon office eu"


def test_f1_by_hand() -> None:
    # prediction "the red router" -> [red, router]; reference "router red box" -> [router, red, box]
    # overlap 2, precision 2/2, recall 2/3, F1 = 0.8
    assert token_f1("the red router", "router red box") == pytest.approx(0.8)
    assert token_f1("", "") == 1.0 and token_f1("x", "") == 0.0


def test_squad_takes_the_best_reference_and_reports_percent() -> None:
    scores = squad_scores(
        ["3 days", "Lisbon office"], [["three days", "3 days"], ["the Porto office"]]
    )
    assert scores["exact_match"] == pytest.approx(50.0)
    assert scores["f1"] == pytest.approx((100 + 50) / 2)  # office/office: P=1/2, R=1/2


def test_rouge_by_hand() -> None:
    # unigrams: pred {the, cat, sat} vs ref {the, cat, ran}: 2 common, P=R=2/3
    scores = rouge_scores(["the cat sat"], ["the cat ran"], use_stemmer=False)
    assert scores["rouge1"] == pytest.approx(100 * 2 / 3)
    assert scores["rouge2"] == pytest.approx(50.0)  # bigrams: {the cat} of 2
    assert scores["rougeL"] == pytest.approx(100 * 2 / 3)


def test_evaluate_modules_load_from_the_repo_and_agree() -> None:
    squad = load_metric(SQUAD_MODULE)
    assert squad.compute(predictions=["3 days"], references=[["3 days"]]) == {
        "exact_match": 100.0,
        "f1": 100.0,
    }
    rouge = load_metric(ROUGE_MODULE)
    got = rouge.compute(predictions=["the cat sat"], references=["the cat ran"])
    assert got == pytest.approx(rouge_scores(["the cat sat"], ["the cat ran"]))


def test_mismatched_lengths_are_an_error() -> None:
    with pytest.raises(ValueError, match="2 predictions but 1 references"):
        squad_scores(["a", "b"], [["a"]])


def test_metric_modules_load_with_no_network(monkeypatch, tmp_path) -> None:
    """A hub lookup would open a connection: with every connection refused, loading still works."""
    import socket

    def refuse(*args, **kwargs):
        raise OSError("network access attempted while loading a metric module")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    load_metric.cache_clear()
    squad = load_metric(SQUAD_MODULE)
    assert squad.compute(predictions=["3 days"], references=[["3 days"]])["f1"] == 100.0
    assert (
        load_metric(ROUGE_MODULE).compute(predictions=["a b"], references=["a b"])["rouge1"]
        == 100.0
    )
    perplexity = load_metric(PERPLEXITY_MODULE).compute(
        predictions=[lm_prediction("", 0.0, 3, 3)], references=["a b c d"]
    )
    assert perplexity == {"perplexity": 1.0, "token_accuracy": 100.0}
    with pytest.raises(ValueError, match="not a metric module of this repo"):
        load_metric(str(tmp_path))
    load_metric.cache_clear()


def _evaluate_load_calls(source: str) -> int:
    """Calls of `evaluate.load` in `source`, however it was imported (`import evaluate as ev`,
    `from evaluate import load as fetch`)."""
    import ast

    tree = ast.parse(source)
    modules, functions = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules |= {a.asname or a.name for a in node.names if a.name == "evaluate"}
        elif isinstance(node, ast.ImportFrom) and node.module == "evaluate":
            functions |= {a.asname or a.name for a in node.names if a.name == "load"}
    return sum(
        isinstance(node, ast.Call)
        and (
            (
                isinstance(node.func, ast.Attribute)
                and node.func.attr == "load"
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id in modules
            )
            or (isinstance(node.func, ast.Name) and node.func.id in functions)
        )
        for node in ast.walk(tree)
    )


@pytest.mark.slow
def test_only_load_metric_calls_evaluate_load() -> None:
    """Every metric load goes through `load_metric` (by path, offline): a hub name passed to
    `evaluate.load` anywhere else would fetch from the Hub at run time. Every Python file of the
    repo is read, tests and benchmarks included, whatever name evaluate or its load goes by."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    # hidden folders (.venv, .git, a demo's store .tunegate with its models' code) are not the
    # repo's code
    callers = [
        str(path.relative_to(root))
        for path in sorted(root.rglob("*.py"))
        if not any(
            part.startswith(".") or part == "node_modules" for part in path.relative_to(root).parts
        )
        and _evaluate_load_calls(path.read_text())
    ]
    assert callers == ["trainer/metrics/__init__.py"]
    # the scan sees every way of calling it (the argument does not matter to it)
    for source in (
        "import evaluate\nevaluate.load(name)",
        "import evaluate as ev\nev.load(name)",
        "from evaluate import load as fetch\nfetch(name)",
    ):
        assert _evaluate_load_calls(source) == 1, source


NO_NETWORK = """
import socket

def refuse(*args, **kwargs):
    raise OSError("network access attempted while loading a metric")

socket.socket.connect = refuse
socket.create_connection = refuse
from trainer.metrics import PERPLEXITY_MODULE, ROUGE_MODULE, SQUAD_MODULE, load_metric
from trainer.metric_specs import lm_prediction

print(load_metric(PERPLEXITY_MODULE).compute(
    predictions=[lm_prediction("", 0.0, 2, 2)], references=["a b c"])["perplexity"])
print(load_metric(SQUAD_MODULE).compute(predictions=["Porto"], references=[["Porto"]])["f1"])
print(load_metric(ROUGE_MODULE).compute(predictions=["a b"], references=["a b"])["rouge1"])
"""


@pytest.mark.slow
def test_metrics_load_and_score_with_no_network_at_all() -> None:
    """Offline at run time: loading and computing both metrics opens no connection (a hub name
    would try the Hub first), with none of the HF offline variables set."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    env = {k: v for k, v in os.environ.items() if not k.startswith("HF_")}
    probe = subprocess.run(
        [sys.executable, "-c", NO_NETWORK],
        cwd=Path(__file__).resolve().parents[2],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert probe.returncode == 0, probe.stderr[-2000:]
    assert probe.stdout.split() == ["1.0", "100.0", "100.0"]


def test_a_question_without_answers_is_right_only_when_the_prediction_is_empty() -> None:
    # SQuAD v2.0: no reference (or only references empty once normalised) means the one gold
    # answer "", so "" and "the." match it and any words do not
    scores = squad_scores(["", "the.", "Lisbon", "3 days"], [[], ["a"], [], ["", "3 days"]])
    assert scores == {"exact_match": 75.0, "f1": 75.0}
    assert per_example_f1(["", "Lisbon"], [[], [""]]) == [100.0, 0.0]


def test_perplexity_is_the_corpus_one_and_lower_is_better() -> None:
    import math

    from trainer.metrics import LOWER_IS_BETTER, METRICS, metric_of, score

    # two documents: 3 tokens at nll 3 x ln 2 and 1 token at ln 16, 2 of the 4 ranked first
    predictions = [
        lm_prediction("the wind", 3 * math.log(2), 3, 2),
        lm_prediction("", math.log(16), 1, 0),
    ]
    scores = perplexity_scores(predictions)
    assert scores["perplexity"] == pytest.approx(2 ** (7 / 4))  # not the mean of 2 and 16
    assert scores["token_accuracy"] == 50.0
    assert per_example_log_perplexity(predictions) == pytest.approx(
        [-100 * math.log(2), -100 * math.log(16)]
    )
    assert lm_completion(predictions[0]) == "the wind"
    values, per_example = score("perplexity", predictions, ["doc one", "doc two"])
    assert values == pytest.approx(scores) and len(per_example) == 2
    assert {"perplexity"} == LOWER_IS_BETTER and metric_of("perplexity") is METRICS["perplexity"]
    with pytest.raises(ValueError, match="unknown metric 'bleu'"):
        metric_of("bleu")
    with pytest.raises(ValueError, match="no tokens"):
        perplexity_scores([lm_prediction("", 0.0, 0, 0)])
