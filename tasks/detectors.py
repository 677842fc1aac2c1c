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

from tasks.redact import Span

# Credentials and secrets: (entity, pattern, group holding the secret, score).
SECRET_PATTERNS: tuple[tuple[str, str, int, float], ...] = (
    ("AWS_ACCESS_KEY", r"\b((?:AKIA|ASIA)[0-9A-Z]{16})\b", 1, 1.0),
    ("AWS_SECRET_KEY", r"(?i)aws_?secret_?access_?key\W{0,3}([A-Za-z0-9/+=]{40})", 1, 1.0),
    ("GITHUB_TOKEN", r"\b(gh[pousr]_[A-Za-z0-9]{36,255})\b", 1, 1.0),
    ("SLACK_TOKEN", r"\b(xox[abposr]-[A-Za-z0-9-]{10,})\b", 1, 1.0),
    (
        "AZURE_CONNECTION_STRING",
        r"((?:DefaultEndpointsProtocol=[^;\s]+;)?AccountName=[^;\s]+;AccountKey=[A-Za-z0-9+/=]{20,}"
        r"(?:;[A-Za-z]+=[^;\s]+)*)",
        1,
        1.0,
    ),
    (
        "AZURE_SAS_TOKEN",
        r"(?:[?&]|\b)(sv=\d{4}-\d{2}-\d{2}&[^\s\"']*sig=[A-Za-z0-9%+/=]{20,})",
        1,
        1.0,
    ),
    (
        "PRIVATE_KEY",
        r"(-----BEGIN (?:[A-Z]+ )?PRIVATE KEY-----(?:[\s\S]*?-----END (?:[A-Z]+ )?PRIVATE KEY-----)?)",
        1,
        1.0,
    ),
    ("JWT", r"\b(eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,})", 1, 1.0),
    (
        "PASSWORD",
        r"(?i)\b(?:password|passwd|pwd|passphrase)\b\s*(?:is|[:=])\s*[\"']?([^\s\"',;]{6,})",
        1,
        0.9,
    ),
    (
        "API_KEY",
        r"(?i)\b(?:api[_-]?key|secret[_-]?key|access[_-]?token|client[_-]?secret)\b\s*[:=]\s*"
        r"[\"']?([A-Za-z0-9_\-./+=]{16,})",
        1,
        0.9,
    ),
)
SECRET_ENTITIES: tuple[str, ...] = tuple(p[0] for p in SECRET_PATTERNS)

# Presidio's predefined recognizers (presidio-analyzer 2.2) plus spaCy's NER types.
PRESIDIO_ENTITIES: frozenset[str] = frozenset(
    {
        "PERSON", "EMAIL_ADDRESS", "PHONE_NUMBER", "CREDIT_CARD", "IBAN_CODE", "IP_ADDRESS",
        "US_SSN", "US_PASSPORT", "US_DRIVER_LICENSE", "US_BANK_NUMBER", "US_ITIN", "UK_NHS",
        "LOCATION", "DATE_TIME", "NRP", "URL", "CRYPTO", "MEDICAL_LICENSE", "ORGANIZATION",
        "MAC_ADDRESS", "UUID", "AGE", "ID",
    }
)  # fmt: skip


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
    """Presidio's AnalyzerEngine on a pip-installed spaCy pipeline, plus the secret patterns.

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
