"""Models of the user's own, read from local Hugging Face folders, in place of or beside the shipped.

Two settings name such a folder, as `save_pretrained` writes it (`config.json`, the weights, the
tokenizer; nothing is downloaded):
- `screen.person_model_dir`: a token classifier (an NER or PII model) that reads person names in
  place of the shipped reader (`screening.persons.person_model`). A label marks persons when, without
  its tag scheme's prefix (`B-`, `I-`, `E-`, `S-`, `L-`, `U-`) and any trailing digits, it is
  one of `PERSON_TAGS`, in any case: CoNLL's `B-PER`, WNUT's `I-person`, PII models'
  `B-GIVENNAME1` / `I-SURNAME`.
- `screen.toxicity.model_dir`: a text classifier (a hate-speech or toxicity model) that scores
  each prose sentence beside the local backend (`SentenceClassifier`). A label is toxic when it
  is one of `TOXIC_TAGS` (`hate`, `toxic`, `offensive`, `identity_hate`, ...): a single-label
  model's score is the sum of its toxic labels' softmax probabilities, a multi-label model's
  (`problem_type: multi_label_classification`) the highest of their sigmoids.

`folder_problem` checks a folder with the standard library only, so a bad setting fails config
validation (exit 2, the field named) before torch is imported.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from functools import cache
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
TOXIC_TAGS = frozenset(
    [
        "toxic",
        "toxicity",
        "severetoxic",
        "severetoxicity",
        "hate",
        "hateful",
        "hatespeech",
        "offensive",
        "offensivelanguage",
        "abusive",
        "abuse",
        "insult",
        "threat",
        "obscene",
        "identityhate",
        "identityattack",
        "harassment",
        "profanity",
        "sexualexplicit",
    ]
)
WEIGHT_FILES = ("model.safetensors", "model.safetensors.index.json", "pytorch_model.bin")
_PREFIX = re.compile(r"^[BIESLU][-_]", re.IGNORECASE)


def _core(label: str) -> str:
    return re.sub(r"[^a-z]", "", label.strip().casefold())


def person_tag(label: str) -> bool:
    """Whether a label of a token classifier marks a person's name."""
    return _core(_PREFIX.sub("", label.strip()).rstrip("0123456789")) in PERSON_TAGS


def toxic_tag(label: str) -> bool:
    """Whether a label of a text classifier marks toxic text (`not hate`, `non-toxic`: no)."""
    return _core(label) in TOXIC_TAGS


def label_ids(id2label: Mapping[Any, str], wanted: Callable[[str], bool]) -> list[int]:
    """The ids (as ints) of the labels `wanted` takes, in order."""
    return sorted(int(i) for i, label in id2label.items() if wanted(label))


def person_label_ids(id2label: Mapping[Any, str]) -> list[int]:
    return label_ids(id2label, person_tag)


KINDS: dict[str, tuple[Callable[[str], bool], str]] = {
    "person": (person_tag, "marks a person (one such as B-PER, I-person or B-GIVENNAME)"),
    "toxic": (toxic_tag, "marks toxic text (one such as hate, toxic or offensive)"),
}


def folder_problem(folder: str, kind: str = "person") -> str | None:
    """What keeps `folder` from serving as a model of `kind` (`KINDS`), in words; None when it
    can."""
    wanted, needed = KINDS[kind]
    path = Path(folder).expanduser()
    if not path.is_dir():
        return (
            f"{folder!r} is not a folder; give the local folder of a Hugging Face model "
            "(save_pretrained's output; nothing is downloaded)"
        )
    try:
        config = json.loads((path / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        return f"{folder!r} has no readable config.json ({exc.__class__.__name__})"
    labels = config.get("id2label") if isinstance(config, dict) else None
    if not isinstance(labels, dict) or not labels:
        return f"{folder}/config.json has no id2label: not a classification model"
    if not label_ids(labels, wanted):
        shown = ", ".join(sorted(set(map(str, labels.values())))[:12])
        return (
            f"no label of {folder}/config.json {needed}; its labels: {shown} "
            "(name them in config.json's id2label)"
        )
    if not any((path / name).is_file() for name in WEIGHT_FILES):
        return f"{folder!r} holds no weights ({' or '.join(WEIGHT_FILES)})"
    return None


def checked_folder(folder: str | None, kind: str) -> str | None:
    """`folder` as given (None: not set), or ValueError saying what keeps it from serving as a
    model of `kind`: a config field's validator."""
    problem = folder_problem(folder, kind) if folder is not None else None
    if problem:
        raise ValueError(problem)
    return folder


class SentenceClassifier:
    """A text classifier saved in `folder`, loaded on first use: `scores(sentences)` is each
    sentence's toxicity in [0, 1] (see the module's note)."""

    def __init__(self, folder: str, max_length: int = 256) -> None:
        self.folder, self.max_length = folder, max_length
        self._model: Any = None
        self._lock = threading.Lock()

    def _load(self) -> None:
        with self._lock:
            if self._model is not None:
                return
            from transformers import AutoModelForSequenceClassification, AutoTokenizer
            from transformers.utils import logging as hf_logging

            problem = folder_problem(self.folder, "toxic")
            if problem:
                raise RuntimeError(f"screen.toxicity.model_dir: {problem}")
            hf_logging.set_verbosity_error()
            path = Path(self.folder).expanduser()
            self._tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
            model = AutoModelForSequenceClassification.from_pretrained(path, local_files_only=True)
            self._toxic = label_ids(model.config.id2label, toxic_tag)
            self._multi = model.config.problem_type == "multi_label_classification"
            self._model = model.eval()

    def scores(self, sentences: Sequence[str], batch_size: int = 32) -> list[float]:
        if not sentences:
            return []
        self._load()
        import torch

        order = sorted(range(len(sentences)), key=lambda i: len(sentences[i]))
        out = [0.0] * len(sentences)
        for at in range(0, len(order), batch_size):
            batch = order[at : at + batch_size]
            enc = self._tokenizer(
                [sentences[i] for i in batch],
                truncation=True,
                max_length=self.max_length,
                padding=True,
                return_tensors="pt",
            )
            with torch.inference_mode():
                logits = self._model(**enc).logits.float()
            if self._multi:
                found = logits.sigmoid()[:, self._toxic].max(-1).values
            else:
                found = logits.softmax(-1)[:, self._toxic].sum(-1)
            for i, p in zip(batch, found.tolist(), strict=True):
                out[i] = float(p)
        return out


@cache
def sentence_classifier(folder: str) -> SentenceClassifier:
    """One classifier per process and folder."""
    return SentenceClassifier(folder)
