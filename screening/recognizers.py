"""One Presidio recognizer for each of the screen's own finders (phones, cards, IBANs, e-mail and
street addresses, credentials): a finder is a function from a text to its spans, each with its
entity, offsets and score (`screening.redact.Span`, `screening.finders.credentials.Finding`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from presidio_analyzer import AnalysisExplanation, EntityRecognizer, RecognizerResult
from presidio_analyzer.nlp_engine import NlpArtifacts


class FinderRecognizer(EntityRecognizer):
    """Presidio's face of a finder: its spans of the entities asked for, each with an explanation
    (which Presidio's context enhancer raises near the recognizer's `context` words). Nothing to
    load: the finders build their patterns on import."""

    def __init__(
        self,
        name: str,
        entities: Sequence[str],
        find: Callable[[str], Iterable[Any]],
        context: list[str] | None = None,
    ) -> None:
        super().__init__(supported_entities=list(entities), name=name, context=context)
        self._find = find

    def load(self) -> None:
        return None

    def analyze(
        self, text: str, entities: list[str], nlp_artifacts: NlpArtifacts | None = None
    ) -> list[RecognizerResult]:
        wanted = set(entities)
        return [
            RecognizerResult(
                s.entity,
                s.start,
                s.end,
                s.score,
                AnalysisExplanation(recognizer=self.name, original_score=s.score),
            )
            for s in self._find(text)
            if s.entity in wanted
        ]
