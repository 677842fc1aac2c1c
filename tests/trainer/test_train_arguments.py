"""One declaration per trainer argument: every `TrainArgs` field has its help and bounds, and
reaches the trainer both from the command line and from the pipeline's `train:` config."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from typing import Any

import pytest
from pydantic import ValidationError

from platforms.training import trainer_arguments
from tasks.train import _SET_BY_PIPELINE, OWN_ARGUMENTS, TrainConfig
from trainer.args import ARGUMENTS, TrainArgs, command_line, parse_args

# A value of each argument other than its default, that the trainer accepts with the others.
_CHOSEN = {"task": "summarization", "precision": "fp16", "lora_target_modules": ["q", "v"]}


def _other_value(argument: Any) -> Any:
    if argument.name in _CHOSEN:
        return _CHOSEN[argument.name]
    if argument.type is bool:
        return not argument.default
    if argument.type is int:
        return argument.default + 1
    if argument.type is float:
        return argument.default / 2 or 0.5
    return f"other-{argument.default}"


OTHER = {name: _other_value(argument) for name, argument in ARGUMENTS.items()}


def test_every_argument_is_declared_with_its_help() -> None:
    fields = dataclasses.fields(TrainArgs)
    assert [f.name for f in fields] == list(ARGUMENTS)
    missing = [f.name for f in fields if not f.metadata.get("help", "").strip()]
    assert not missing, f"TrainArgs fields without help: {missing}"


def test_every_argument_round_trips_through_the_command_line() -> None:
    defaults = dataclasses.asdict(TrainArgs())
    assert not [name for name, value in OTHER.items() if value == defaults[name]]
    args = parse_args(command_line(OTHER))
    assert dataclasses.asdict(args) == OTHER
    # the training backends' flags are the same (data and output folders first)
    rest = {k: v for k, v in OTHER.items() if k not in ("data_dir", "output_dir")}
    flags = trainer_arguments(OTHER["data_dir"], OTHER["output_dir"], rest)
    assert dataclasses.asdict(parse_args(flags)) == OTHER


@pytest.mark.slow
def test_every_trainer_argument_is_described_in_help() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "trainer.train", "--help"],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "COLUMNS": "1000"},  # no wrapping inside a word
    ).stdout
    flat = " ".join(out.split())
    for argument in ARGUMENTS.values():
        assert argument.flag in out
        assert " ".join(argument.help.split()) in flat, argument.name
    assert "(default: 3e-04)" in flat or "(default: 0.0003)" in flat  # the generic learning rate


def test_every_argument_reaches_the_trainer_from_the_pipeline_config() -> None:
    """Each argument is the config's own field or one of its `args`, except those the pipeline
    sets itself (the task from `task`, the folders from the training backend)."""
    for name in ARGUMENTS:
        if name in _SET_BY_PIPELINE:
            continue
        config = TrainConfig(**{name: OTHER[name]} if name in OWN_ARGUMENTS else {})
        if name not in OWN_ARGUMENTS:
            config = TrainConfig(args={name: OTHER[name]})
        assert config.trainer_args("summarization")[name] == OTHER[name], name
        assert getattr(config.resolved_args("summarization"), name) == OTHER[name], name


def test_the_configs_own_fields_are_the_trainers_declarations() -> None:
    schema = TrainConfig.model_json_schema()["properties"]
    for name in OWN_ARGUMENTS:
        argument, field = ARGUMENTS[name], TrainConfig.model_fields[name]
        assert field.annotation == argument.type | None
        assert field.default is None  # unset: the task's choice
        assert schema[name]["description"].startswith(argument.help), name
        limits = {k: v for m in field.metadata for k, v in dataclasses.asdict(m).items()}
        assert limits == dict(argument.bounds), name


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("learning_rate", 1.5, "learning_rate must be less than 1"),
        ("batch_size", 0, "batch_size must be at least 1"),
        ("epochs", 0.0, "epochs must be greater than 0"),
    ],
)
def test_the_bounds_hold_in_the_trainer_and_the_config(name: str, value: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_args(["--data-dir", "d", ARGUMENTS[name].flag, str(value)])
    with pytest.raises(ValidationError, match=name):
        TrainConfig(**{name: value})


def test_a_bounded_argument_that_is_no_number_is_named() -> None:
    with pytest.raises(ValueError, match="epochs must be greater than 0, got 'many'"):
        TrainArgs(data_dir="d", epochs="many").validate()  # type: ignore[arg-type]


def test_an_unknown_argument_never_becomes_a_flag() -> None:
    with pytest.raises(ValueError, match=r"unknown training argument\(s\) \['learning_rat'\]"):
        command_line({"learning_rat": 0.1})
