"""Small windows: the vocabulary and embedding signals (domain classifiers' ROC AUC) and the
length distances judge a window of a few requests against what chance gives at its size
(tasks/domain_auc.py, tasks/distance_chance.py), so requests from the reference's own
distribution are no drift and another domain still is.

Public text the repo bundles (benchmarks/corpora): the first user turns of Topical-Chat
conversations are the reference (150 of them, the sample these tests' monitor reads a side)
and, from the next ones, the in-distribution windows; the first user turns of SGD's
task-oriented dialogues (films, flights, restaurants) and of code questions are the shifted
ones. Before the chance bound, a threshold alone called some in-distribution windows drift:
vocabulary 0.943 and 0.962 (windows 5 and 9 of 10 requests), embedding 0.766, 0.785 and 0.810
(windows 1, 2 and 5 of 10) and 0.772 (window 7 of 20): Evidently's unstratified split had left
one to three window texts in the held-out half, so the AUC was a few ranks. And the normed
Wasserstein distance of request lengths read 0.31-0.48 against its 0.3 threshold in 8 of these
18 in-distribution windows of 10, 20 and 30 requests (`_LENGTH_ALARMS`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from samples.generate import valid_records
from tasks.chance import ChanceConfig
from tasks.distance_chance import distance_chance
from tasks.domain_auc import domain_auc, fit_score_texts, halves
from tasks.drift import measure_drift
from tasks.drift_features import Sample, vocabulary
from tasks.drift_signals import DriftSignals, SignalResult, SignalThreshold

CORPORA = Path(__file__).resolve().parents[2] / "benchmarks" / "corpora"
REFERENCE = 150
# in-distribution windows (size, index) whose request lengths drifted by the threshold alone
_LENGTH_ALARMS = [(10, 1), (10, 2), (10, 3), (10, 4), (20, 1), (20, 2), (30, 1), (30, 5)]


@cache
def _requests(corpus: str) -> tuple[str, ...]:
    """The first user turn of each conversation of a bundled chat corpus."""
    found = []
    for line in (CORPORA / corpus).read_text(encoding="utf-8").splitlines():
        turns = [m["content"] for m in json.loads(line)["messages"] if m["role"] == "user"]
        if turns:
            found.append(turns[0])
    return tuple(found)


def _topical() -> tuple[str, ...]:
    return _requests("everyday_topical_chat.jsonl")


def _window(size: int, index: int) -> list[str]:
    """The `index`th in-distribution window of `size` requests (after the reference's)."""
    pool = _topical()[REFERENCE:]
    return list(pool[index * size : (index + 1) * size])


def _sample(texts: Sequence[str], reference: Sequence[str], size: int = REFERENCE) -> Sample:
    sample = Sample(vocabulary(reference), frozenset(), sample_size=size)
    for text in texts:
        sample.add(text, None)
    return sample


def _signal(name: str, window: list[str], reference: Sequence[str] | None = None) -> SignalResult:
    """One signal of `window` against `reference` (default: the Topical-Chat one), as the
    monitor measures it."""
    reference = reference or _topical()[:REFERENCE]
    off = SignalThreshold(threshold=1.0, method="rate", enabled=False)
    signals = DriftSignals(**{n: off for n in DriftSignals.model_fields if n != name})
    size = max(REFERENCE, len(reference))
    found, _ = measure_drift(
        _sample(reference, reference, size), _sample(window, reference, size), signals, plots=False
    )
    (result,) = found
    return result


def _paragraph_questions(article: dict[str, Any], paragraph: int) -> list[str]:
    """A SQuADShifts paragraph's questions as QA requests (question, then context)."""
    found = article["paragraphs"][paragraph]
    return [f"{qa['question']}\n{found['context']}" for qa in found["qas"]]


@pytest.mark.parametrize("size", [10, 20, 50])
def test_in_distribution_windows_are_no_vocabulary_drift(size: int) -> None:
    results = [_signal("vocabulary", _window(size, i)) for i in range(10)]
    assert not [(i, r.value) for i, r in enumerate(results) if r.drift]
    assert all(r.chance is not None and r.value is not None for r in results)
    assert "chance gives up to" in (results[0].note or "")


def test_a_shifted_window_of_50_is_vocabulary_drift() -> None:
    sgd = _requests("chat_sgd.jsonl")
    for i in range(3):
        result = _signal("vocabulary", list(sgd[i * 50 : (i + 1) * 50]))
        assert result.drift and result.value is not None and result.chance is not None
        assert result.value > result.chance and result.value >= result.threshold


@pytest.mark.slow
def test_small_windows_of_embeddings_drift_only_when_shifted() -> None:
    for window in (_window(10, 5), _window(20, 7), _window(50, 0)):
        calm = _signal("embedding", window)
        assert not calm.drift, (len(window), calm.value, calm.chance)
    for corpus in ("chat_sgd.jsonl", "code_chat.jsonl"):
        for size in (10,):
            shifted = _signal("embedding", list(_requests(corpus)[:size]))
            assert shifted.drift, (corpus, size, shifted.value, shifted.chance)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["vocabulary", "embedding"])
def test_several_questions_on_one_paragraph_are_held_out_together(name: str) -> None:
    # SQuADShifts' Wikipedia set: the reference is each article's first paragraph's questions,
    # a window 12 other articles' next paragraph's (about 60 requests on 12 paragraphs, as a
    # QA endpoint's users ask). Split apart, a paragraph's questions in both halves taught the
    # classifier the paragraph: AUC 0.88-1.00, drift in all 12 of these windows' two signals.
    articles = json.loads((CORPORA / "qa_squadshifts_wiki.json").read_text())["data"]
    reference = [t for article in articles for t in _paragraph_questions(article, 0)]
    for first, paragraph in ((0, 1), (12, 2), (24, 3)):
        window = [
            t
            for article in articles[first : first + 12]
            for t in _paragraph_questions(article, paragraph)
        ]
        calm = _signal(name, window, reference)
        assert not calm.drift, (first, paragraph, calm.value, calm.chance)
    # help-desk tickets (our generator), several questions each, against Wikipedia: drift
    tickets = [f"{r['question']}\n{r['context']}" for r in valid_records("extractive-qa", 60)]
    shifted = _signal(name, tickets, reference)
    assert shifted.drift, (shifted.value, shifted.chance)


def test_a_document_s_requests_stay_in_one_half_whatever_their_order() -> None:
    groups = ["a", "b", "a", "c", "b", "d", "a"]
    held = halves(groups)
    assert all(held[i] == held[groups.index(g)] for i, g in enumerate(groups))
    assert sum(held[groups.index(g)] for g in "abcd") == 2  # 2 of the 4 documents held out
    order = [6, 3, 0, 5, 1, 4, 2]
    assert halves([groups[i] for i in order]) == [held[i] for i in order]


def test_chance_shrinks_with_the_window_and_is_reproducible() -> None:
    reference = list(_topical()[:REFERENCE])
    chance = ChanceConfig()
    bounds = []
    for size in (10, 20, 50):
        found = domain_auc(_window(size, 0), reference, fit_score_texts, chance)
        assert found is not None and found.window == size // 2
        again = domain_auc(_window(size, 0), reference, fit_score_texts, chance)
        assert again == found
        bounds.append(found.chance)
    # the text classifier's scores tie, so 20 and 50 may swap by a few hundredths
    assert bounds[0] == max(bounds) and bounds[0] > bounds[-1], bounds


def test_a_classifier_that_learned_nothing_beats_chance_at_most_as_often_as_the_quantile() -> None:
    # scores unrelated to the samples: whatever the window's size, the held-out AUC is chance's
    rng = np.random.default_rng(3)

    def noise(train: list[int], labels: object, test: list[int]) -> object:
        return rng.random(len(test))

    chance = ChanceConfig(quantile=0.95, permutations=200)
    for size in (4, 10, 50):
        hits = [
            domain_auc(list(range(size)), list(range(150)), noise, chance).exceeds(0.5)  # type: ignore[union-attr]
            for _ in range(100)
        ]
        assert np.mean(hits) <= 0.1, (size, np.mean(hits))


def test_too_few_texts_are_not_judged() -> None:
    assert (
        domain_auc(["one request"], list(_topical()[:20]), fit_score_texts, ChanceConfig()) is None
    )
    window, reference = ["a film about dogs", "the dogs film"], ["rain in paris", "london rain"]
    tiny = domain_auc(window, reference, fit_score_texts, ChanceConfig())
    assert tiny is not None and not tiny.judgeable and not tiny.exceeds(0.75)


@pytest.mark.slow
def test_small_windows_of_request_lengths_drift_only_when_shifted() -> None:
    for size, index in _LENGTH_ALARMS:
        calm = _signal("input_length", _window(size, index))
        assert calm.value is not None and calm.value >= calm.threshold  # the threshold alone
        assert not calm.drift and calm.chance is not None, (size, index, calm.value, calm.chance)
    code = _requests("code_chat.jsonl")
    for size in (20, 30):  # at 10: 14 of 15 code windows (docs/monitoring.md)
        shifted = _signal("input_length", list(code[:size]))
        assert shifted.drift, (size, shifted.value, shifted.chance)


def test_a_distance_of_a_small_window_is_judged_against_chance_at_its_size() -> None:
    rng = np.random.default_rng(7)
    reference = rng.poisson(12, 300).tolist()
    chance = ChanceConfig(permutations=200)
    small, large = (
        distance_chance(rng.poisson(12, n).tolist(), reference, "wasserstein", chance)
        for n in (10, 100)
    )
    assert small is not None and large is not None and small > 0.3 and small > 2 * large
    again = distance_chance(reference[:10], reference, "wasserstein", chance)
    assert again == distance_chance(reference[:10], reference, "wasserstein", chance)
    assert distance_chance(reference[:10], reference, "ks", chance) is None  # a p-value knows
