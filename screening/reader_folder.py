"""A Hugging Face token-classification folder the screen may read person names with.

`screen.person_model_dir` names a local folder as `save_pretrained` writes it (`config.json`,
the weights, the tokenizer): an NER model of your own or one downloaded beforehand, in place of
the shipped reader (`screening.person_model`). Its labels say which tokens are persons: a
label is one when, without its tag scheme's prefix (`B-`, `I-`, `E-`, `S-`, `L-`, `U-`) and
any trailing digits, it is one of `PERSON_TAGS`, in any case: CoNLL's `B-PER`, WNUT's
`I-person`, PII models' `B-GIVENNAME1` / `I-SURNAME`. Checked here with the standard library
only, so a bad setting fails config validation (exit 2) before torch is imported.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

PERSON_TAGS = frozenset(
    [
        "per",
        "pers",
        "person",
        "name",
        "fullname",
        "firstname",
        "lastname",
        "givenname",
        "surname",
        "middlename",
        "username",
    ]
)
WEIGHT_FILES = ("model.safetensors", "model.safetensors.index.json", "pytorch_model.bin")
_PREFIX = re.compile(r"^[BIESLU][-_]", re.IGNORECASE)


def person_tag(label: str) -> bool:
    """Whether a label of a token classifier marks a person's name."""
    core = _PREFIX.sub("", label.strip()).rstrip("0123456789")
    return re.sub(r"[^a-z]", "", core.casefold()) in PERSON_TAGS


def person_label_ids(id2label: Mapping[Any, str]) -> list[int]:
    """The ids (as ints) of the labels that mark persons, in order."""
    return sorted(int(i) for i, label in id2label.items() if person_tag(label))


def folder_problem(folder: str) -> str | None:
    """What keeps `folder` from serving as the person reader, in words; None when it can."""
    path = Path(folder).expanduser()
    if not path.is_dir():
        return (
            f"{folder!r} is not a folder; give the local folder of a Hugging Face "
            "token-classification model (save_pretrained's output; nothing is downloaded)"
        )
    try:
        config = json.loads((path / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        return f"{folder!r} has no readable config.json ({exc.__class__.__name__})"
    labels = config.get("id2label") if isinstance(config, dict) else None
    if not isinstance(labels, dict) or not labels:
        return f"{folder}/config.json has no id2label: not a token-classification model"
    if not person_label_ids(labels):
        shown = ", ".join(sorted(set(map(str, labels.values())))[:12])
        return (
            f"no label of {folder}/config.json marks a person (labels: {shown}); one such as "
            "B-PER, I-person or B-GIVENNAME is needed"
        )
    if not any((path / name).is_file() for name in WEIGHT_FILES):
        return f"{folder!r} holds no weights ({' or '.join(WEIGHT_FILES)})"
    return None
