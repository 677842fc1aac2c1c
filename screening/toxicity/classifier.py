"""The shipped abuse classifier: a logistic regression over hashed character and word n-grams
(`abuse_classifier`, `classifier_features`)."""

from __future__ import annotations

import functools
import html
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

from screening.toxicity.disguise import LETTER_RUN

# A logistic regression over hashed character and word n-grams (nothing stored but the weights:
# `screening/data/toxicity_classifier.npz`, rebuilt offline by
# screening/data/build/make_toxicity_classifier.py from public labelled abuse that the benchmark's
# test halves do not hold). It scores a sentence the terms do not hold; at or above the cut-off
# stored with it (calibrated on held-out folds of its training data, never on a test half) the
# sentence scores 1.0 and the record is dropped, naming the classifier and its score.

CLASSIFIER = Path(__file__).resolve().parents[1] / "data" / "toxicity_classifier.npz"
_HANDLE = re.compile(r"(?<!\w)@\w+")
_LINK = re.compile(r"https?://\S+|www\.\S+")
_SPACES = re.compile(r"\s+")
_RETWEET = re.compile(r"(?<!\w)rt(?!\w)\s*:?")
CLASSIFIER_FEATURES = 2**18  # hashed buckets per analyzer (character 2-5-grams, word 1-2-grams)


def classifier_text(sentence: str) -> str:
    """The sentence as the classifier reads it: lower case, without `@handles`, links and `RT`
    marks (where a text was posted, not what it says), a letter written three or more times
    written twice, spaces collapsed."""
    text = _LINK.sub(" ", _HANDLE.sub(" ", html.unescape(sentence))).lower()
    return _SPACES.sub(" ", LETTER_RUN.sub(r"\1\1", _RETWEET.sub(" ", text))).strip()


@functools.cache
def _vectorizers() -> tuple[Any, Any]:
    from sklearn.feature_extraction.text import HashingVectorizer

    common = {"n_features": CLASSIFIER_FEATURES, "alternate_sign": False, "lowercase": False}
    chars = HashingVectorizer(analyzer="char_wb", ngram_range=(2, 5), **common)
    words = HashingVectorizer(
        analyzer="word", ngram_range=(1, 2), token_pattern=r"[a-z0-9_']+|[!?]", **common
    )
    return chars, words


def classifier_features(sentences: Sequence[str]) -> Any:
    """The sparse features of each sentence: character and word n-grams side by side."""
    from scipy.sparse import hstack

    texts = [classifier_text(s) for s in sentences]
    chars, words = _vectorizers()
    return hstack([chars.transform(texts), words.transform(texts)]).tocsr()


class AbuseClassifier(NamedTuple):
    """The shipped weights: P(abusive) = sigmoid(features . weights + bias); `drop_at` the
    cut-off a sentence is dropped at."""

    weights: Any  # float32 vector, 2 * CLASSIFIER_FEATURES
    bias: float
    drop_at: float

    def probabilities(self, sentences: Sequence[str]) -> list[float]:
        if not sentences:
            return []
        import numpy as np

        logits = classifier_features(sentences) @ self.weights + self.bias
        return (1.0 / (1.0 + np.exp(-logits))).tolist()


@functools.cache
def abuse_classifier() -> AbuseClassifier:
    """The classifier shipped in the package (read once; nothing is downloaded)."""
    import numpy as np

    with np.load(CLASSIFIER) as data:
        weights = data["weights"].astype(np.float32)
        if weights.shape != (2 * CLASSIFIER_FEATURES,):
            raise ValueError(f"{CLASSIFIER.name}: {weights.shape[0]} weights, not the features")
        return AbuseClassifier(weights, float(data["bias"]), float(data["drop_at"]))
