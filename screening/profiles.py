"""Screening profiles: the screen's default rules adjusted to a kind of text, in one table.

`screen.profile` names one: `personal` (conversations, tickets, forms: today's defaults,
unchanged), `literary` (published or public-domain prose: the names of its characters and
places are what a model must learn, so they stay; contact details, credentials and identifiers
still go) or `code` (source and technical text: identifiers that look like names stay;
credentials and contact details still go). A profile is a set of per-entity rule overrides
(`entities`: a `Rule`, or None for "not screened") and of toxicity field overrides, applied by
`ScreenConfig` on top of the defaults of the table of finders and under what the user wrote: a
`screen.entities` or `screen.secrets` map the config gives is taken as written, and a toxicity
field the config sets wins over the profile's.

A postal address with a house number is contact data under every profile (STREET_ADDRESS keeps
its rule): a place's name alone is LOCATION, which `literary` keeps.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from screening.finder_table import Rule

ProfileName = Literal["personal", "literary", "code"]
DEFAULT_PROFILE: ProfileName = "personal"


@dataclass(frozen=True)
class Profile:
    """What a profile changes: entity rules (None: the entity is not screened), one rule for
    every credential type (None: their defaults) and toxicity fields
    (`screening.config.ToxicityConfig`'s names)."""

    description: str
    entities: dict[str, Rule | None] = field(default_factory=dict)
    secrets: Rule | None = None
    toxicity: dict[str, Any] = field(default_factory=dict)


PROFILES: dict[ProfileName, Profile] = {
    "personal": Profile("personal data of people: every default rule"),
    "literary": Profile(
        "published or public-domain prose: names of characters and places kept; contact "
        "details, credentials and identifiers removed; violence in narrative not abuse",
        entities={"PERSON": None, "LOCATION": None},
        # A credential in a book's passage is not the book's: it is replaced, the passage kept.
        secrets=Rule("redact"),
        # The shipped classifier and the threat and harassment terms read an epic's battles and
        # its suitors ("we will kill you too") as abuse; slurs, strong profanity and hate aimed
        # at a group still score 1.0 and drop.
        toxicity={"classifier": False, "terms": "narrative"},
    ),
    "code": Profile(
        "source code and technical text: identifiers that look like names kept; credentials "
        "and contact details removed",
        entities={"PERSON": None, "LOCATION": None},
    ),
}
