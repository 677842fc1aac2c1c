"""What screening looks for: Presidio entities, credentials and secrets, and toxicity.

`Detectors` is built once per worker process (loading spaCy is the slow part) and analyses a
batch of texts at once: spaCy runs over the batch with `nlp.pipe`, then every recognizer runs on
the precomputed NLP artifacts, exactly as `AnalyzerEngine.analyze` would one text at a time.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

os.environ.setdefault("TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS", "")  # offline: bundled suffix list

from presidio_analyzer import AnalyzerEngine, EntityRecognizer, RecognizerResult
from presidio_analyzer.nlp_engine import NlpArtifacts, NlpEngineProvider

from tasks.entity_types import SECRET_ENTITIES, SECRET_PATTERNS
from tasks.person_names import install as install_person_names
from tasks.redact import Span


class SecretRecognizer(EntityRecognizer):
    """Credentials by pattern; the span is the secret value, not the keyword before it."""

    def __init__(self) -> None:
        self._patterns = [(e, re.compile(p), g, s) for e, p, g, s in SECRET_PATTERNS]
        super().__init__(supported_entities=list(SECRET_ENTITIES), name="SecretRecognizer")

    def load(self) -> None:  # nothing to load: the patterns are compiled in __init__
        return None

    def analyze(
        self, text: str, entities: list[str], nlp_artifacts: NlpArtifacts | None = None
    ) -> list[RecognizerResult]:
        results = []
        for entity, pattern, group, score in self._patterns:
            if entity not in entities:
                continue
            for match in pattern.finditer(text):
                start, end = match.span(group)
                results.append(RecognizerResult(entity, start, end, score))
        return results


@dataclass
class Detectors:
    """A loaded analyzer for one spaCy model and entity list."""

    analyzer: AnalyzerEngine
    language: str
    entities: list[str]

    def analyze(self, texts: Sequence[str], batch_size: int = 64) -> list[list[Span]]:
        """Findings for every text, in order; identical texts are analysed once."""
        unique = list(dict.fromkeys(texts))
        engine = self.analyzer.nlp_engine
        found: dict[str, list[Span]] = {}
        for text, artifacts in engine.process_batch(unique, self.language, batch_size=batch_size):
            results = self.analyzer.analyze(
                text, self.language, entities=self.entities, nlp_artifacts=artifacts
            )
            found[text] = [Span(r.start, r.end, r.entity_type, r.score) for r in results]
        return [found[t] for t in texts]


def build_analyzer(spacy_model: str, language: str = "en") -> AnalyzerEngine:
    """Presidio's AnalyzerEngine on a pip-installed spaCy pipeline, plus the secret patterns and
    the person-name recognizer (`tasks.person_names`).

    Presidio's warnings (recognizers of other languages, unmapped spaCy labels) are silenced.
    """
    provider = NlpEngineProvider(
        nlp_configuration={
            "nlp_engine_name": "spacy",
            "models": [{"lang_code": language, "model_name": spacy_model}],
        }
    )
    logging.getLogger("presidio-analyzer").setLevel(logging.ERROR)
    engine = provider.create_engine()
    # Presidio reads entities, tokens and lemmas; the dependency parser feeds none of them and
    # costs ~15% of the time (benchmarks/screen.py checks that the findings stay identical).
    nlp = engine.nlp[language]
    if "parser" in nlp.pipe_names:
        nlp.disable_pipes("parser")
    analyzer = AnalyzerEngine(nlp_engine=engine, supported_languages=[language])
    analyzer.registry.add_recognizer(SecretRecognizer())
    install_person_names(analyzer, nlp)  # PERSON: spaCy's, minus products, plus name lists
    return analyzer


@cache
def detectors_for(spacy_model: str, language: str, entities: tuple[str, ...]) -> Detectors:
    """One Detectors per worker process and configuration."""
    return Detectors(build_analyzer(spacy_model, language), language, list(entities))


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")


def toxicity_scores(texts: Sequence[str]) -> list[float]:
    """Probability that each text is offensive: the highest score of its sentences.

    Scored per sentence because one abusive line in a long, polite ticket scores low as a whole.
    The model is the local alt-profanity-check classifier (nothing is downloaded).
    """
    if not texts:
        return []
    from profanity_check import predict_prob

    sentences: list[str] = []
    owners: list[int] = []
    for i, text in enumerate(texts):
        for sentence in _SENTENCE_END.split(text):
            if sentence.strip():
                sentences.append(sentence)
                owners.append(i)
    scores = [0.0] * len(texts)
    for owner, p in zip(owners, predict_prob(sentences) if sentences else [], strict=True):
        scores[owner] = max(scores[owner], float(p))
    return scores
