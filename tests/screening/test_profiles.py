"""Screening profiles: `screen.profile` adjusts the default rules to a kind of text, under what
the config writes, and says so in the report; `personal` is the screen as it was."""

from __future__ import annotations

from pathlib import Path

import pytest

from flows.config import ConfigError, load_config
from platforms.hashing import stable_json
from screening.config import (
    DEFAULT_PII_RULES,
    DEFAULT_SECRET_RULES,
    Action,
    EntityRule,
    ScreenConfig,
    ToxicityConfig,
)
from screening.report import ScreenReport, counts_line, counts_markdown, report_hash
from screening.toxicity.terms import abusive_terms


def test_personal_is_the_screen_as_it_was_and_hashes_as_before() -> None:
    config = ScreenConfig()
    assert config.profile == "personal" == ScreenConfig(profile="personal").profile
    assert config.entities == DEFAULT_PII_RULES and config.secrets == DEFAULT_SECRET_RULES
    assert config.toxicity == ToxicityConfig()
    dumped = config.model_dump(mode="json")
    assert "profile" not in dumped  # the config hash (and the screen's key) unchanged
    assert ScreenConfig.model_validate(dumped) == config


def test_literary_keeps_names_and_places_and_still_removes_the_rest() -> None:
    config = load_config(None, ["screen.profile=literary"]).screen
    assert "PERSON" not in config.entities and "LOCATION" not in config.entities
    for kept in ("EMAIL_ADDRESS", "PHONE_NUMBER", "CREDIT_CARD", "IBAN_CODE", "US_SSN",
                 "IP_ADDRESS", "STREET_ADDRESS"):  # fmt: skip
        assert config.entities[kept] == DEFAULT_PII_RULES[kept]
    assert set(config.secrets) == set(DEFAULT_SECRET_RULES)
    assert {r.action for r in config.secrets.values()} == {Action.redact}
    assert not config.toxicity.classifier and not config.toxicity.threats
    assert config.toxicity.terms == "narrative" and config.toxicity.threshold == 1.0
    assert ScreenConfig().toxicity.threats
    dumped = config.model_dump(mode="json")
    assert dumped["profile"] == "literary"
    assert ScreenConfig.model_validate(dumped) == config  # a run's dumped config reads back
    assert stable_json(dumped) != stable_json(ScreenConfig().model_dump(mode="json"))


def test_what_the_config_writes_wins_over_the_profile() -> None:
    config = load_config(
        None,
        [
            "screen.profile=literary",
            'screen.entities={"PERSON": {"action": "flag"}}',
            "screen.toxicity.classifier=true",
        ],
    ).screen
    assert config.entities == {"PERSON": EntityRule(action=Action.flag)}
    assert config.toxicity.classifier and not config.toxicity.threats  # one field each
    assert config.secrets["PASSWORD"].action is Action.redact  # secrets not given: the profile's
    config = ScreenConfig(profile="literary", secrets={"PASSWORD": {"action": "drop"}})
    assert config.secrets == {"PASSWORD": EntityRule(action=Action.drop)}


def test_the_gpt2_scenario_screens_its_books_as_literature() -> None:
    scenario = Path(__file__).resolve().parents[2] / "configs/azureml/gpt2-text-deepspeed.yaml"
    assert load_config(scenario).screen == ScreenConfig(profile="literary")


def test_code_keeps_names_and_drops_credentials() -> None:
    config = ScreenConfig(profile="code")
    assert "PERSON" not in config.entities and "EMAIL_ADDRESS" in config.entities
    assert config.secrets == DEFAULT_SECRET_RULES
    assert config.toxicity == ToxicityConfig()


def test_an_unknown_profile_names_the_field() -> None:
    with pytest.raises(ConfigError, match=r"screen\.profile: Input should be 'personal'"):
        load_config(None, ["screen.profile=poetry"])


def test_without_threats_an_epic_fight_is_no_abuse_but_a_slur_still_is() -> None:
    battle = "When we have killed these people, we will kill you too."
    assert abusive_terms(battle) and not abusive_terms(battle, threats=False)
    assert abusive_terms("Shut up, you nigger.", threats=False)
    assert abusive_terms("You are a fucking idiot.", threats=False)
    assert not abusive_terms("Nor be niggardly in the presents you make.")  # a miser's word


def _report(profile: str = "personal") -> ScreenReport:
    return ScreenReport(
        task="text-generation", records_in=3, kept=3, redacted=1, quarantined=0, flagged=0,
        entities=[], quarantine_reasons={}, flagged_ids=[], samples=[], toxicity_threshold=1.0,
        profile=profile,
    )  # fmt: skip


def test_the_report_says_which_profile_screened_and_old_reports_hash_as_before() -> None:
    old = _report().model_dump(mode="json")
    assert "profile" not in old
    assert report_hash(ScreenReport.model_validate(old)) == report_hash(_report())
    literary = _report("literary")
    assert "literary profile" in counts_markdown(literary)[0]
    assert counts_line(literary).startswith("Screening report (literary profile):")
    assert report_hash(literary) != report_hash(_report())
