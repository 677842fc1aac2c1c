"""Screening what a model wrote: personal data in predictions that their input did not hold.

The evaluate stage runs the candidate's predictions through the same detectors and rules as the
data (`screen_outputs`); a model that emits PII fails the gate, and the predictions a person
reads in the evaluation report are shown with their findings replaced by placeholders. An Azure
ML evaluation job runs the same screen on its node after predicting (`python -m
screening.outputs`, the run's screen config staged beside the code as `screen.json`), and the
evaluate stage takes its `output-screen.json` instead of screening again.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from screening.config import Action, ScreenConfig
from screening.redact import MIN_PROPAGATED_LENGTH, Span, occurrences, redact_text


class OutputFinding(BaseModel):
    """One finding in one prediction: its kind and place (never its text), and whether the
    record's input holds the same text (copied, not leaked)."""

    model_config = ConfigDict(frozen=True)
    prediction: int  # its index among the predictions
    entity: str
    start: int
    end: int
    score: float
    in_input: bool


class OutputScreen(BaseModel):
    """The screen of one model's predictions: what the gate counts and the report shows."""

    model_config = ConfigDict(frozen=True)
    screen: dict[str, Any]  # the screen config applied (`ScreenConfig`, as JSON)
    predictions: int  # how many were screened
    leaks: int  # predictions holding a finding their record's input does not
    findings: list[OutputFinding]
    masked: list[str]  # every prediction, its findings replaced by placeholders

    def applies(self, screen: ScreenConfig, predictions: int) -> bool:
        """Whether this is the screen of `predictions` predictions under `screen`'s rules."""
        return self.predictions == predictions and _same_rules(self.screen) == _same_rules(
            screen.model_dump(mode="json")
        )


def _same_rules(dump: dict[str, Any]) -> dict[str, Any]:
    """A screen config as JSON as far as it rules outputs: its person reader's folder by what it
    is, not where (the evaluation job reads a copy staged with its code,
    `platforms.azureml.entities.PERSON_READER`), and no toxicity classifier's folder (outputs are
    screened for personal data only; the job is staged without it)."""
    same = dict(dump)
    if same.get("person_model_dir"):
        same["person_model_dir"] = "(a folder of the run's)"
    if isinstance(same.get("toxicity"), dict):
        same["toxicity"] = {**same["toxicity"], "model_dir": None}
    return same


def screen_outputs(
    predictions: Sequence[str], records: Sequence[dict[str, Any]], screen: ScreenConfig
) -> OutputScreen:
    """Every prediction's personal-data findings (of the rules that mask, drop or quarantine,
    at their minimum scores; flag-only rules are not findings here), how many predictions hold
    one whose text is not in their record's input, and every prediction masked."""
    from screening.detectors import detectors_for  # Presidio

    detectors = detectors_for(
        screen.spacy_model, screen.language, screen.all_entities(), screen.person_reader()
    )
    leaks = 0
    findings: list[OutputFinding] = []
    masked: list[str] = []
    for index, (prediction, record, spans) in enumerate(
        zip(predictions, records, detectors.analyze(list(predictions)), strict=True)
    ):
        source = json.dumps(record, ensure_ascii=False)
        found = [
            span
            for span in spans
            if (rule := screen.rule(span.entity))
            and rule.action is not Action.flag
            and span.score >= rule.min_score
        ]
        copied = [prediction[s.start : s.end] in source for s in found]
        leaks += not all(copied)
        findings += [
            OutputFinding(
                prediction=index,
                entity=s.entity,
                start=s.start,
                end=s.end,
                score=s.score,
                in_input=c,
            )
            for s, c in zip(found, copied, strict=True)
        ]
        masked.append(redact_text(prediction, found)[0])
    return OutputScreen(
        screen=screen.model_dump(mode="json"),
        predictions=len(predictions),
        leaks=leaks,
        findings=findings,
        masked=masked,
    )


def screen_candidate(
    task: str,
    candidate: Sequence[str],
    records: Sequence[dict[str, Any]],
    screen: ScreenConfig,
) -> OutputScreen:
    """The screen of the candidate's predictions of `records` as the endpoint answers them (the
    task's `answer_of`: a language model's completion, not its scores)."""
    from trainer.taskspec import task_spec

    answer_of = task_spec(task).answer_of
    return screen_outputs([answer_of(p) for p in candidate], records, screen)


def main(argv: list[str] | None = None) -> OutputScreen | None:
    """The evaluation job's screen: the candidate's predictions in `--evaluation-dir`'s
    predictions.json, of the test records of `--data-dir`, under `--screen-config`; writes
    output-screen.json beside them. A config naming a spaCy pipeline the job's image does not
    hold writes nothing (the evaluate stage then screens the outputs itself)."""
    from trainer.args import OUTPUT_SCREEN, PREDICTIONS
    from trainer.data import read_split  # datasets loads here

    parser = argparse.ArgumentParser(
        prog="python -m screening.outputs",
        description=f"Screen the candidate's predictions in {PREDICTIONS} for personal data "
        f"their input did not hold; write {OUTPUT_SCREEN} beside it.",
    )
    parser.add_argument("--evaluation-dir", required=True, help=f"The folder of {PREDICTIONS}.")
    parser.add_argument("--data-dir", required=True, help="The split dataset it predicted.")
    parser.add_argument("--max-test-records", type=int, default=0, help="As it predicted.")
    parser.add_argument(
        "--screen-config", help="The run's screen config as JSON (default: the defaults)."
    )
    args = parser.parse_args(argv)
    folder = Path(args.evaluation_dir)
    made = json.loads((folder / PREDICTIONS).read_text())
    config = json.loads(Path(args.screen_config).read_text()) if args.screen_config else {}
    pipeline = config.get("spacy_model", ScreenConfig.model_fields["spacy_model"].default)
    if importlib.util.find_spec(pipeline) is None:  # a pipeline the job's image does not have
        print(
            f"[evaluate] spaCy pipeline {pipeline!r} is not installed here: the candidate's "
            "outputs are screened where the gate runs",
            flush=True,
        )
        return None
    screen = ScreenConfig.model_validate(config)
    records = read_split(args.data_dir, "test", args.max_test_records)
    candidate = made["predictions"]["candidate"]
    if len(candidate) != len(records):
        raise SystemExit(f"{len(candidate)} predictions for {len(records)} test records")
    result = screen_candidate(made["task"], candidate, records, screen)
    (folder / OUTPUT_SCREEN).write_text(result.model_dump_json())
    print(
        f"[evaluate] the candidate's {result.predictions} predictions screened: "
        f"{result.leaks} with personal data not in their input",
        flush=True,
    )
    return result


def traffic_masker(screen: ScreenConfig | None = None) -> Callable[[Any], Any]:
    """A function that returns a JSON value (a request's records, a model's answers) with every
    string in it masked: each finding of a type `screen` has a rule for (default: the screen's
    default rules) replaced by its placeholder, as the screen masks the samples a reviewer sees,
    and every other occurrence of a found value in the same value masked too, whole or cut: a
    text that is a piece of a found value, or that begins or ends with one (an extractive
    answer whose span cuts through an e-mail), has that piece masked as the value is."""
    from screening.detectors import pattern_detectors  # Presidio's recognizers, no spaCy

    # the defaults without validation: the serving image has no spaCy pipeline to check for
    screen = screen or ScreenConfig.model_construct()
    detectors = pattern_detectors(screen.language, screen.all_entities())

    def mask(value: Any) -> Any:
        texts: list[str] = []
        _strings(value, texts)
        if not texts:
            return value
        findings = detectors.analyze(texts)
        found = {
            text[s.start : s.end]: s.entity
            for text, spans in zip(texts, findings, strict=True)
            for s in spans
            if screen.rule(s.entity)
        }
        masked = {}
        for text, spans in zip(texts, findings, strict=True):
            kept: list[Span] = [s for s in spans if screen.rule(s.entity)]
            for found_value, entity in found.items():
                kept += occurrences(text, found_value, entity) + _cut(text, found_value, entity)
            masked[text] = redact_text(text, kept)[0]
        return _replace_strings(value, masked)

    return mask


def traffic_entities(screen: ScreenConfig) -> frozenset[str]:
    """The entity types `traffic_masker(screen)` can find: those of the screen's rules that a
    recognizer without spaCy supports (no person names or places). A monitor comparing
    collected traffic with screened data counts only these placeholders on both sides: a
    `<PERSON>` the screen put in the reference has no counterpart the collector could write."""
    from screening.detectors import pattern_detectors

    detectors = pattern_detectors(screen.language, screen.all_entities())
    supported = {e for r in detectors.recognizers for e in r.supported_entities}
    return frozenset(e for e in screen.all_entities() if e in supported and screen.rule(e))


def _cut(text: str, value: str, entity: str) -> list[Span]:
    """Where `text` holds a piece of `value` cut by its own start or end (at least
    MIN_PROPAGATED_LENGTH characters): all of it when `text` lies inside `value`."""
    if len(text.strip()) >= MIN_PROPAGATED_LENGTH and text in value:
        return [Span(0, len(text), entity)]
    spans = []
    for k in range(min(len(value), len(text)) - 1, MIN_PROPAGATED_LENGTH - 1, -1):
        if text.endswith(value[:k]):  # the value's beginning ends the text
            spans.append(Span(len(text) - k, len(text), entity))
            break
    for k in range(min(len(value), len(text)) - 1, MIN_PROPAGATED_LENGTH - 1, -1):
        if text.startswith(value[-k:]):  # the value's end begins the text
            spans.append(Span(0, k, entity))
            break
    return spans


def _strings(value: Any, out: list[str]) -> None:
    if isinstance(value, str):
        out.append(value)
    elif isinstance(value, dict):
        for item in value.values():
            _strings(item, out)
    elif isinstance(value, list | tuple):
        for item in value:
            _strings(item, out)


def _replace_strings(value: Any, masked: dict[str, str]) -> Any:
    if isinstance(value, str):
        return masked[value]
    if isinstance(value, dict):
        return {k: _replace_strings(v, masked) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_replace_strings(v, masked) for v in value]
    return value


if __name__ == "__main__":
    main()
