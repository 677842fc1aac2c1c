"""Tuned defaults per task: a run without a config trains with what the demo was tuned to."""

from __future__ import annotations

import dataclasses

import pytest

from flows.config import load_config
from platforms.manifest import DatasetRef
from tasks.train import TrainConfig, job_name
from trainer import taskspec
from trainer.args import TrainArgs, parse_args

QA_TUNED = {
    "epochs": 4.0,
    "learning_rate": 2e-3,
    "batch_size": 8,
    "lora_r": 16,
    "lora_target_modules": ["query", "key", "value", "dense"],
}


def _split(task: str = "extractive-qa") -> DatasetRef:
    return DatasetRef(uri="/s", stage="split", task=task, key="k", content_hash="h", counts={})


def test_the_trainer_applies_the_tasks_tuned_defaults_under_config_and_flags() -> None:
    qa = parse_args(["--task", "extractive-qa", "--data-dir", "d"])
    assert {k: getattr(qa, k) for k in QA_TUNED} == QA_TUNED
    flagged = parse_args(["--task", "extractive-qa", "--data-dir", "d", "--epochs", "1"])
    assert flagged.epochs == 1.0 and flagged.learning_rate == 2e-3  # a flag wins, one field
    summary = parse_args(["--task", "summarization", "--data-dir", "d"])
    assert (summary.model, summary.lora) == ("packaged:minilm-bert2bert", False)
    chat = parse_args(["--task", "causal-lm", "--data-dir", "d"])
    assert (chat.model, chat.lora) == ("packaged:minilm-decoder", False)


def test_tuned_defaults_are_for_the_model_they_were_tuned_on() -> None:
    generic = TrainArgs()
    other = parse_args(["--task", "extractive-qa", "--data-dir", "d", "--model", "roberta-base"])
    assert (other.epochs, other.learning_rate, other.lora_r) == (
        generic.epochs,
        generic.learning_rate,
        generic.lora_r,
    )
    t5 = parse_args(["--task", "summarization", "--data-dir", "d", "--model", "t5-base"])
    assert t5.lora and t5.learning_rate == generic.learning_rate


def test_a_pipeline_without_a_train_section_runs_the_tuned_settings() -> None:
    cfg = load_config(None)
    assert cfg.train.trainer_args("extractive-qa") == {
        "task": "extractive-qa",
        "model": "packaged:all-MiniLM-L6-v2",
    }
    assert cfg.train.trainer_args("summarization")["model"] == "packaged:minilm-bert2bert"
    resolved = cfg.train.resolved_args("extractive-qa")
    assert {k: getattr(resolved, k) for k in QA_TUNED} == QA_TUNED
    explicit = TrainConfig(learning_rate=1e-4).resolved_args("extractive-qa")
    assert explicit.learning_rate == 1e-4 and explicit.epochs == 4.0


def test_the_job_name_follows_the_resolved_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    config = TrainConfig()
    before = job_name(_split(), config)
    assert job_name(_split(), config) == before
    assert job_name(_split(), TrainConfig(epochs=5)) != before
    # a change of the tuned defaults is a new job: a model trained with the old ones is not reused
    spec = dataclasses.replace(taskspec.EXTRACTIVE_QA, train_defaults={**QA_TUNED, "epochs": 9.0})
    monkeypatch.setitem(taskspec.TASK_SPECS, "extractive-qa", spec)
    assert config.resolved_args("extractive-qa").epochs == 9.0
    assert job_name(_split(), config) != before
