"""What screening looks for: Presidio entities, credentials and secrets (toxicity:
`screening.toxicity`).

`Detectors` is built once per worker process (loading spaCy is the slow part) and analyses a
batch of texts at once: spaCy runs over the batch with `nlp.pipe`, then every recognizer runs on
the precomputed NLP artifacts, exactly as `AnalyzerEngine.analyze` would one text at a time.

`PatternDetectors` are the same recognizers without spaCy (Presidio's pattern recognizers and the
screen's credentials, phones, cards, IBANs, e-mail addresses and street addresses; no person
names or locations, which need the NER model): what masks an endpoint's collected traffic, in
~1-3 ms per short text, where no spaCy pipeline is installed (Azure ML's serving image).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache, cached_property
from typing import TYPE_CHECKING, Any

os.environ.setdefault("TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS", "")  # offline: bundled suffix list

from presidio_analyzer import (
    AnalyzerEngine,
    EntityRecognizer,
    PatternRecognizer,
    RecognizerRegistry,
)
from presidio_analyzer.nlp_engine import NlpEngineProvider

from screening.azure_language import AzureLanguageDetectors, CombinedDetectors
from screening.azure_language import client as azure_client
from screening.finder_table import load, own_finders
from screening.persons.name_parts import name_parts
from screening.persons.names import PersonNameRecognizer
from screening.persons.names import install as install_person_names
from screening.persons.person_model import PersonModelRecognizer, shared_model
from screening.recognizers import FinderRecognizer
from screening.redact import AnalysisFailed, Span

if TYPE_CHECKING:
    from screening.config import ScreenConfig


@dataclass
class Detectors:
    """A loaded analyzer for one spaCy model and entity list."""

    analyzer: AnalyzerEngine
    language: str
    entities: list[str]

    def analyze(self, texts: Sequence[str], batch_size: int = 64) -> list[list[Span]]:
        """Findings for every text, in order; identical texts are analysed once.

        When a batch fails, its texts are analysed one at a time, and a text whose own analysis
        fails gets an `AnalysisFailed` (so one bad text never fails the others)."""
        unique = list(dict.fromkeys(texts))
        try:
            found = self._analyze(unique, batch_size)
        except Exception:  # noqa: BLE001 (any failure: retried text by text below)
            found = {}
            for text in unique:
                try:
                    found.update(self._analyze([text], 1))
                except Exception as exc:  # noqa: BLE001
                    found[text] = AnalysisFailed(f"{type(exc).__name__} in the analyzer")
        return [found[t] for t in texts]

    def _analyze(self, texts: list[str], batch_size: int) -> dict[str, list[Span]]:
        engine = self.analyzer.nlp_engine
        found: dict[str, list[Span]] = {}
        for recognizer in self.analyzer.registry.recognizers:
            if isinstance(recognizer, PersonModelRecognizer) and "PERSON" in self.entities:
                recognizer.prefetch(texts)  # the token classifier reads the batch at once
        names = self._name_rules
        for text, artifacts in engine.process_batch(texts, self.language, batch_size=batch_size):
            results = self.analyzer.analyze(
                text, self.language, entities=self.entities, nlp_artifacts=artifacts
            )
            spans = [Span(r.start, r.end, r.entity_type, r.score) for r in results]
            if names is not None:
                spans += name_parts(names, text, spans)  # `Lamarr` after `Hedy Lamarr`
            found[text] = sorted(spans, key=lambda s: (s.start, s.end, s.entity))
        return found

    def record_name_parts(
        self, texts: Sequence[str], found: Sequence[list[Span]]
    ) -> list[list[Span]]:
        """One record's fields' findings, each field's with the parts of the names found whole
        in the record's other fields where they stand alone in it (`screening.persons.
        name_parts`: a QA question's `Lamarr` after its context's `Hedy Lamarr`)."""
        names = self._name_rules
        if names is None or len(texts) < 2:
            return list(found)
        pairs = list(zip(texts, found, strict=True))
        out = []
        for i, (text, spans) in enumerate(pairs):
            more = name_parts(names, text, spans, [p for j, p in enumerate(pairs) if j != i])
            out.append(sorted({*spans, *more}, key=lambda s: (s.start, s.end, s.entity)))
        return out

    @cached_property
    def _name_rules(self) -> PersonNameRecognizer | None:
        """The name rules' recognizer (its word tables decide a name's parts), if PERSON is
        looked for."""
        if "PERSON" not in self.entities:
            return None
        return next(
            (r for r in self.analyzer.registry.recognizers if isinstance(r, PersonNameRecognizer)),
            None,
        )


def spacy_engine(spacy_model: str, language: str = "en", parser: bool = False) -> Any:
    """Presidio's spaCy NLP engine on a pip-installed pipeline, Presidio's warnings (recognizers
    of other languages, unmapped spaCy labels) silenced. Presidio reads entities, tokens and
    lemmas; the dependency parser feeds none of them and costs ~15% of the time, so it is off
    unless asked for (benchmarks/screen.py checks that the findings stay identical)."""
    provider = NlpEngineProvider(
        nlp_configuration={
            "nlp_engine_name": "spacy",
            "models": [{"lang_code": language, "model_name": spacy_model}],
        }
    )
    logging.getLogger("presidio-analyzer").setLevel(logging.ERROR)
    engine = provider.create_engine()
    nlp = engine.nlp[language]
    if not parser and "parser" in nlp.pipe_names:
        nlp.disable_pipes("parser")
    return engine


def build_analyzer(
    spacy_model: str,
    language: str = "en",
    parser: bool = False,
    person_model: bool | str = True,
) -> AnalyzerEngine:
    """Presidio's AnalyzerEngine on a pip-installed spaCy pipeline, with the screen's own
    recognizers (`install_recognizers`)."""
    engine = spacy_engine(spacy_model, language, parser=parser)
    analyzer = AnalyzerEngine(nlp_engine=engine, supported_languages=[language])
    install_recognizers(analyzer, engine.nlp[language], person_model=person_model)
    return analyzer


# Presidio's recognizers that the screen's own replace (phones, cards, IBANs, e-mail addresses).
REPLACED = tuple(f.replaces for f in own_finders() if f.replaces)


def own_recognizers() -> list[EntityRecognizer]:
    """A recognizer for each of the screen's own finders (`screening.finder_table`), in order."""
    return [
        FinderRecognizer(f.name, f.entities, load(f.find), context=list(f.context) or None)
        for f in own_finders()
        if f.find is not None
    ]


def install_recognizers(
    analyzer: AnalyzerEngine, nlp: Any, person_model: bool | str = True
) -> None:
    """The screen's recognizers on an analyzer: its own finders (`own_recognizers`: credentials,
    and phone numbers of every region, cards of every network, IBANs of every country and e-mail
    addresses as RFC 5322 writes them in place of Presidio's own, street addresses), and person
    names (`screening.persons.names`: spaCy's PERSON minus products, plus lists;
    `screening.persons.person_model`: a token classifier fine-tuned on tweets).
    `person_model=False` leaves the token classifier out (the name rules alone); a folder (str)
    reads with the token classifier saved there instead of the shipped one."""
    for name in REPLACED:
        analyzer.registry.remove_recognizer(name)
    for recognizer in own_recognizers():
        analyzer.registry.add_recognizer(recognizer)
    names = install_person_names(analyzer, nlp)
    if person_model:
        folder = person_model if isinstance(person_model, str) else None
        analyzer.registry.add_recognizer(
            PersonModelRecognizer(shared_model(folder), veto=names.vetoes)
        )


def detectors_for(
    spacy_model: str, language: str, entities: tuple[str, ...], person_model: bool | str = True
) -> Detectors:
    """One Detectors per worker process and configuration (however the arguments are passed)."""
    return _detectors(spacy_model, language, tuple(entities), person_model)


@cache
def _detectors(
    spacy_model: str, language: str, entities: tuple[str, ...], person_model: bool | str
) -> Detectors:
    return Detectors(_analyzer(spacy_model, language, person_model), language, list(entities))


@cache
def _analyzer(spacy_model: str, language: str, person_model: bool | str) -> AnalyzerEngine:
    """One analyzer per worker process and model, whatever entities each config asks of it (the
    inputs of `screen.profiles` screened in one process share it)."""
    return build_analyzer(spacy_model, language, person_model=person_model)


@dataclass
class PatternDetectors:
    """The screen's recognizers that need no NLP model, run on one text at a time."""

    recognizers: list[EntityRecognizer]
    entities: list[str]

    def analyze(self, texts: Sequence[str], batch_size: int = 1) -> list[list[Span]]:
        """Findings for every text, in order (the interface of `Detectors.analyze`; one text at
        a time whatever `batch_size`)."""
        found = []
        for text in texts:
            spans = []
            for recognizer in self.recognizers:
                wanted = [e for e in recognizer.supported_entities if e in self.entities]
                if wanted:
                    for r in recognizer.analyze(text, wanted, None):
                        spans.append(Span(r.start, r.end, r.entity_type, r.score))
            found.append(spans)
        return found


@cache
def pattern_detectors(language: str, entities: tuple[str, ...]) -> PatternDetectors:
    """`install_recognizers`' recognizers and Presidio's pattern ones for `language`, without
    spaCy (so without person names, which need its NER): one per process and configuration."""
    logging.getLogger("presidio-analyzer").setLevel(logging.ERROR)  # other languages' recognizers
    registry = RecognizerRegistry(supported_languages=[language])
    registry.load_predefined_recognizers(languages=[language])
    presidio = [
        r
        for r in registry.recognizers
        if isinstance(r, PatternRecognizer) and r.name not in REPLACED
    ]
    return PatternDetectors([*presidio, *own_recognizers()], list(entities))


def screen_detectors(config: ScreenConfig) -> Any:
    """What finds personal data and credentials for a screen config: the local detectors, and
    with `pii_backend: azure-ai-language` Azure AI Language's beside them or, `mode: instead`,
    in place of the local personal-data recognizers (`screening.azure_language`)."""
    entities = config.all_entities()
    if config.pii_backend != "azure-ai-language" or config.azure_language is None:
        return detectors_for(config.spacy_model, config.language, entities, config.person_reader())
    service = config.azure_language
    azure = _azure_detectors(
        service.endpoint, service.key_env, service.retries, config.language,
        service.model_version, entities,
    )  # fmt: skip
    if service.mode == "instead":
        secrets = tuple(e for e in entities if e in config.secrets)
        return CombinedDetectors([pattern_detectors(config.language, secrets), azure])
    local = detectors_for(config.spacy_model, config.language, entities, config.person_reader())
    return CombinedDetectors([local, azure])


@cache
def _azure_detectors(
    endpoint: str,
    key_env: str,
    retries: int,
    language: str,
    model_version: str | None,
    entities: tuple[str, ...],
) -> AzureLanguageDetectors:
    """One client per worker process and resource."""
    return AzureLanguageDetectors(
        azure_client(endpoint, key_env, retries),
        list(entities),
        language=language,
        model_version=model_version,
        endpoint=endpoint,
        key_env=key_env,
    )
