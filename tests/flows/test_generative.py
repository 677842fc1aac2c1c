"""Summarization and chat through the code that serves them, on the packaged generative models.

The whole `retrain` flow for summarization (MiniLM warm-started as an encoder-decoder, trained a
few steps here: plumbing, not quality; the quality is measured by `tunegate run --set
task=summarization`, docs/tasks.md) leaves an endpoint that answers `{"document"}` with a summary; a chat
model (MiniLM as a decoder) trained here answers `{"messages"}` through Azure ML's `init()/run()`.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from flows.retrain import retrain
from platforms.endpoint import stop_local_endpoint
from platforms.registry import MlflowRegistry
from samples.generate import generate_sample
from serving.client import EndpointClient
from tasks.records import TaskType
from tests.trainer.tiny import chat_record, write_dataset
from trainer.modeling import load_trained
from trainer.predict import predict
from trainer.train import main

pytestmark = pytest.mark.slow  # training, a Prefect API and an endpoint process

QUICK = {"max_steps": 3, "max_target_length": 8, "logging_steps": 1}


def test_summarization_runs_every_stage_and_the_endpoint_summarizes(
    prefect_api, make_config, tmp_path: Path
) -> None:
    data = tmp_path / "tickets.jsonl"
    data.write_bytes(b"\n".join(generate_sample("summarization", 80, seed=5).lines) + b"\n")
    cfg = make_config(
        task="summarization",
        until="rollout",
        ingest={"inputs": [str(data)]},
        approval={"mode": "auto"},
        train={"args": QUICK},
        # a model trained three steps passes on quality and on PII alike: with its copy head it
        # strings document words together, and the name detector read `reset mobile` as a PERSON
        evaluate={
            "min_gain_over_base": -100,
            "max_test_records": 3,
            "bootstrap_samples": 0,
            "fail_on_pii": False,
        },
        rollout={"steps": [100], "hold_requests": 2, "min_requests": 1, "hold_seconds": 5},
    )
    state = retrain(cfg, return_state=True)
    try:
        assert state.is_completed(), state.message
        summary = state.result()
        assert summary.model_version == "tunegate-summarization:1"
        assert set(summary.evaluation["candidate"]) >= {"rouge1", "rougeL"}
        champion = MlflowRegistry.local(Path(cfg.store)).alias("tunegate-summarization", "champion")
        info = json.loads((Path(champion.path) / "model_info.json").read_text())
        assert info["base_model"] == "packaged:minilm-bert2bert" and info["max_new_tokens"] == 8
        endpoint = summary.endpoint
        key = Path(endpoint["key_file"]).read_text().strip()
        document = {"document": "Ticket 9: the VPN drops every hour since the update."}
        answer = EndpointClient(endpoint["url"], key).score(document)
        assert answer.deployment == "blue" and isinstance(answer.body["summary"], str)
        # what the endpoint serves is what the registered model writes offline (a model trained
        # three steps may well write an empty summary: that is not what is tested here)
        model, tokenizer, _ = load_trained(champion.path)
        assert answer.body["summary"] == predict(model, tokenizer, "summarization", [document])[0]
    finally:
        stop_local_endpoint(Path(cfg.store) / "endpoints" / cfg.registry.name_for(cfg.task.value))


def test_a_chat_model_trained_here_replies_through_azure_mls_init_and_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = write_dataset(tmp_path, TaskType.chat, chat_record, n=16)
    out = tmp_path / "model"
    metrics = main(
        ["--task", "causal-lm", "--data-dir", str(data), "--output-dir", str(out)]
        + [f"--{k.replace('_', '-')}={v}" for k, v in QUICK.items()]
    )
    assert metrics["base_model"] == "packaged:minilm-decoder" and metrics["train_loss"] > 0
    tokenizer_config = json.loads((out / "tokenizer_config.json").read_text())
    assert "chat_template" in tokenizer_config or (out / "chat_template.jinja").exists()

    from serving import scoring

    monkeypatch.setenv("AZUREML_MODEL_DIR", str(tmp_path))  # Azure ML mounts the model folder
    scoring.init()
    conversation = {"messages": [{"role": "user", "content": "Reset token 3?"}]}
    reply = scoring.run(json.dumps(conversation))
    assert isinstance(reply["reply"], str)
    batch = scoring.run(json.dumps({"inputs": [conversation, conversation]}))
    assert [o["reply"] for o in batch["outputs"]] == [reply["reply"]] * 2
