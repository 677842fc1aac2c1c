"""Raw-text documents for the text-generation task: passages of a weather station's logbook.

Each document is one paragraph (a `.txt` file's documents are separated by blank lines) of
three to five sentences about a day at one of the stations, written from templates and slot
values of this module's own, so a small decoder can learn their style. Some plant personal data
(the same sentences and values as the tickets, `samples.templates.PII_SENTENCES`), which the
screen must find. Deterministic: everything comes from the caller's `random.Random`.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from samples import templates as t
from samples import values

STATIONS = [
    "Harrow Point", "Redmoss", "the upper weir", "Lowmoor", "Saltfleet", "Crane Hill",
    "Otter Bay", "Windle Fell", "the salt marsh", "Stony Cross", "the cliff top", "Greyfield",
]  # fmt: skip
SKIES = [
    "a low grey sky", "a clear blue sky", "thin high cloud", "a heavy sea fog",
    "broken cloud from the west", "steady drizzle", "a bright cold sky", "thunderheads inland",
]  # fmt: skip
WINDS = ["north", "north-east", "east", "south-east", "south", "south-west", "west", "north-west"]
BIRDS = ["curlews", "oystercatchers", "gannets", "skylarks", "lapwings", "redshanks", "terns"]
TASKS = [
    "cleaned the rain gauge", "reset the barometer", "replaced the anemometer cups",
    "painted the instrument screen", "checked the soil thermometers", "logged the river level",
    "mended the fence by the mast", "read the sunshine card",
]  # fmt: skip
OPENINGS = [
    "The day at {station} began with {sky} and a {strength} wind from the {wind}.",
    "At {station} the day opened with {sky} and a {strength} {wind} wind.",
    "{station} woke to {sky}, with the wind {strength} from the {wind}.",
]
MIDDLES = [
    "By nine the temperature had reached {temp} degrees and the pressure stood at {pressure}.",
    "The observer {task} before the first check.",
    "A flock of {count} {birds} crossed the field in the early light.",
    "Rain in the gauge measured {rain} millimetres since the last observation.",
    "The pressure fell slowly through the morning to {pressure}.",
    "After the midday check the observer {task}.",
    "Around midday {count} {birds} settled on the wet grass by the screen.",
    "The wind turned to the {wind} in the afternoon and grew {strength}.",
]
CLOSINGS = [
    "The last check of the day read {temp} degrees, and the station was closed for the night.",
    "By dusk the sky had cleared and the last observation was logged at {temp} degrees.",
    "The log for {station} ends with a calm evening and {temp} degrees.",
]
STRENGTHS = ["light", "moderate", "fresh", "strong", "gusty"]
_PII_RATE = 0.15


@dataclass
class Document:
    """One logbook passage and the personal data planted in it."""

    text: str
    pii: list[tuple[str, str]] = field(default_factory=list)


def document(rng: random.Random, clean: bool = False) -> Document:
    """A passage of three to five sentences; unless `clean`, some get personal data."""
    slots = {
        "station": rng.choice(STATIONS),
        "sky": rng.choice(SKIES),
        "wind": rng.choice(WINDS),
        "strength": rng.choice(STRENGTHS),
    }

    def fill(template: str) -> str:
        return template.format(
            **slots,
            temp=rng.randint(-4, 24),
            pressure=rng.randint(978, 1034),
            rain=rng.randint(0, 30),
            count=rng.randint(3, 60),
            birds=rng.choice(BIRDS),
            task=rng.choice(TASKS),
        )

    sentences = [fill(rng.choice(OPENINGS))]
    sentences += [fill(s) for s in rng.sample(MIDDLES, rng.randint(1, 3))]
    sentences.append(fill(rng.choice(CLOSINGS)))
    planted: list[tuple[str, str]] = []
    if not clean and rng.random() < _PII_RATE:
        kinds, name = values.pii_plan(rng)
        for kind in kinds:
            value = values.pii_value(rng, kind, name)
            template = rng.choice(t.PII_SENTENCES[kind])[0]
            sentences.insert(rng.randint(1, len(sentences) - 1), template.format(v=value))
            planted.append(("PERSON" if kind == "PERSON_AGENT" else kind, value))
    return Document(" ".join(sentences), planted)
