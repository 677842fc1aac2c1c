"""The trainer program end to end on tiny models built from a config here (QA, seq2seq, causal)."""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path

import pytest
import torch
from transformers import AutoModelForQuestionAnswering, TrainingArguments

from platforms import tracking
from tasks.records import TaskType
from tests.trainer.tiny import (
    chat_record,
    qa_record,
    summarization_record,
    tiny_model,
    write_dataset,
)
from trainer.args import parse_args
from trainer.modeling import load_trained
from trainer.tracking import job_variables
from trainer.train import main, report_to

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("task", "records", "kind"),
    [
        (TaskType.extractive_qa, qa_record, "bert"),
        (TaskType.summarization, summarization_record, "t5"),
        (TaskType.chat, chat_record, "gpt2"),
    ],
)
def test_trainer_runs_each_task(
    tmp_path: Path, task: TaskType, records, kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = _flow_run(tmp_path, monkeypatch) if kind == "bert" else None
    data = write_dataset(tmp_path, task, records)
    model = tiny_model(tmp_path, kind)
    trainer_task = {
        "extractive-qa": "extractive-qa",
        "summarization": "summarization",
        "chat": "causal-lm",
    }[task.value]
    metrics = main(
        [
            "--task",
            trainer_task,
            "--model",
            str(model),
            "--data-dir",
            str(data),
            "--output-dir",
            str(tmp_path / "out"),
            "--epochs",
            "2",
            "--batch-size",
            "8",
            "--max-length",
            "64",
            "--doc-stride",
            "16",
            "--max-target-length",
            "16",
            "--logging-steps",
            "1",
            *(["--merge-adapter"] if kind == "bert" else []),
        ]
    )
    assert metrics["loss_curve"] and metrics["tokens_per_second"] > 0
    # model FLOPs utilisation, against this CPU's measured peak (trainer/flops.py)
    assert 0 < metrics["mfu"] < 1 and metrics["peak_flops_source"].startswith("measured")
    assert metrics["model_flops_per_second"] > 0
    if run is not None:
        _logged_into_the_flow_run(*run, metrics)
    assert metrics["eval"]["eval_loss"] > 0 and metrics["peak_memory_bytes"] > 0
    out = tmp_path / "out"
    assert (out / "adapter_model.safetensors").exists() and (out / "metrics.json").exists()
    loaded, _, info = load_trained(out)
    generative = {"max_new_tokens": 16} if task is not TaskType.extractive_qa else {}
    assert info == {
        "task": trainer_task,
        "base_model": str(model),
        "adapter": True,
        "max_length": 64,
        **generative,
    }
    assert sum(p.numel() for p in loaded.parameters()) > 0
    if kind == "bert":  # the merged model is a plain model directory, no adapter needed
        merged = AutoModelForQuestionAnswering.from_pretrained(out / "merged")
        assert not any("lora" in name for name, _ in merged.named_parameters())
        # ...and what a deployment loads: the base model may be unreachable (a hub id offline)
        (out / "merged").rename(tmp_path / "merged")
        adapter, tokenizer, _ = load_trained(out)
        # what prediction feeds it: the tokenizer's own outputs for a question and a context
        inputs = tokenizer(["How long?"], ["It arrived after 4 days."], return_tensors="pt")
        with torch.no_grad():
            adapter_logits = adapter(**inputs).start_logits
        (tmp_path / "merged").rename(out / "merged")
        model.rename(tmp_path / "base-gone")
        served, _, _ = load_trained(out)
        assert not any("lora" in name for name, _ in served.named_parameters())
        with torch.no_grad():
            torch.testing.assert_close(served(**inputs).start_logits, adapter_logits)


def _flow_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[str, str]:
    """A flow's MLflow run on a temp store, handed to the trainer as a training backend does."""
    uri = tracking.ensure_local_database(tmp_path / "store")
    client = tracking.client(uri)
    experiment = tracking.experiment_id(client, "m", tmp_path / "artifacts")
    run_id = client.create_run(experiment).info.run_id
    client.log_param(run_id, "train.learning_rate", "0.001")  # the flow's, logged before
    for name, value in job_variables(uri, run_id).items():
        monkeypatch.setenv(name, value)
    for name in ("MLFLOW_TRACKING_URI", "MLFLOW_RUN_ID", "MLFLOW_MAX_LOG_PARAMS"):
        monkeypatch.delenv(name, raising=False)
    return uri, run_id


def _logged_into_the_flow_run(uri: str, run_id: str, metrics: dict) -> None:
    """The curves went live into the given run, and only there; the run is still the flow's
    (RUNNING); the trainer's arguments sit beside the flow's parameters without clashing."""
    client = tracking.client(uri)
    losses = [(m.step, m.value) for m in client.get_metric_history(run_id, "loss")]
    assert losses == [(p["step"], pytest.approx(p["loss"])) for p in metrics["loss_curve"]]
    assert client.get_metric_history(run_id, "eval_loss")  # per epoch and after training
    run = client.get_run(run_id)
    assert run.info.status == "RUNNING"
    assert run.data.params["train.learning_rate"] == "0.001"
    assert float(run.data.params["trainer.epochs"]) == 2 and "learning_rate" not in run.data.params
    every_run = client.search_runs(
        [e.experiment_id for e in client.search_experiments()], run_view_type=3
    )
    assert [r.info.run_id for r in every_run] == [run_id]  # no run of the callback's own
    assert "MLFLOW_TRACKING_URI" not in os.environ  # the variables are as they were


def test_mlflow_only_with_a_tracking_uri_and_the_package(monkeypatch, capsys) -> None:
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    assert report_to() == "none"
    monkeypatch.setenv("MLFLOW_TRACKING_URI", "file:///tmp/mlruns")
    installed = importlib.util.find_spec("mlflow") is not None
    assert report_to() == (["mlflow"] if installed else "none")
    if not installed:
        assert "mlflow is not installed" in capsys.readouterr().err


def test_arguments_layer_defaults_yaml_flags_and_reject_unknown_keys(tmp_path: Path) -> None:
    config = tmp_path / "args.yaml"
    config.write_text("epochs: 5\nlora_r: 4\ndata_dir: d\n")
    args = parse_args(["--config", str(config), "--lora-r", "16"])
    # YAML over the task's tuned default (epochs 4), the flag over the YAML, the tuned rate
    assert (args.epochs, args.lora_r, args.learning_rate) == (5, 16, 2e-3)
    args = parse_args(["--config", str(config), "--task", "summarization", "--model", "t5-small"])
    assert (args.epochs, args.lora_r, args.learning_rate) == (5, 4, 3e-4)  # no tuned values
    config.write_text("epochs: 5\nlora_rank: 4\n")
    with pytest.raises(ValueError, match=r"unknown training argument\(s\) \['lora_rank'\]"):
        parse_args(["--config", str(config)])
    with pytest.raises(SystemExit):
        parse_args(["--data-dir", "d", "--no-such-flag", "1"])
    with pytest.raises(ValueError, match="doc_stride must be smaller"):
        parse_args(["--data-dir", "d", "--doc-stride", "300"])


def test_the_model_is_made_after_the_training_arguments_at_the_configured_precision(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """TrainingArguments first: they register the DeepSpeed config that from_pretrained reads
    (`is_deepspeed_zero3_enabled()`), so with ZeRO-3's zero3_init_flag the weights are partitioned
    as they load, not loaded whole on every rank. And the trainer's precision (auto: fp32 on CPU)
    wins over the one `accelerate launch` exports from its config."""
    import trainer.train as train_module

    data = write_dataset(tmp_path, TaskType.extractive_qa, qa_record, n=8)
    model = tiny_model(tmp_path, "bert")
    events: list[str] = []
    made: list = []

    def training_arguments(*args, **kwargs):
        events.append("TrainingArguments")
        made.append(TrainingArguments(*args, **kwargs))
        return made[-1]

    def load_base(*args, **kwargs):
        events.append("load_base")
        return real_load_base(*args, **kwargs)

    real_load_base = train_module.load_base
    monkeypatch.setattr(train_module, "TrainingArguments", training_arguments)
    monkeypatch.setattr(train_module, "load_base", load_base)
    monkeypatch.setenv("ACCELERATE_MIXED_PRECISION", "bf16")  # as `accelerate launch` sets it
    main(
        [
            *("--model", str(model), "--data-dir", str(data)),
            *("--output-dir", str(tmp_path / "out"), "--max-steps", "1"),
            *("--max-length", "64", "--doc-stride", "16"),
        ]
    )
    assert events == ["TrainingArguments", "load_base"]
    assert made[0].mixed_precision == "no" and not (made[0].bf16 or made[0].fp16)


WORKSPACE_PATH = (
    "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg"
    "/providers/Microsoft.MachineLearningServices/workspaces/ws"
)


def test_an_azure_ml_job_logs_into_the_flow_s_workspace_run_with_the_job_s_token(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With the workspace's tracking, the job opens it through azureml-mlflow (the real plugin)
    with the run token Azure ML gives the job, and logs into the flow's run, not the job's: every
    request goes to the workspace's MLflow API with that token. Only HTTP is answered here."""
    import requests
    from azureml.mlflow._internal.service_context_loader import _AzureMLServiceContextLoader

    from tests.azureml.fake_http import _unsigned_jwt
    from trainer.tracking import attached_run

    job_token = _unsigned_jwt({"exp": 4102444800})  # a run token (the plugin reads its expiry)
    monkeypatch.setattr(_AzureMLServiceContextLoader, "_tracking_uri_to_service_context", {})
    monkeypatch.setenv("AZUREML_CURRENT_CLOUD", "AzureCloud")
    # what Azure ML sets on the job's node (its own run), and what the flow handed it
    job_uri = f"azureml://eastus.api.azureml.ms/mlflow/v1.0{WORKSPACE_PATH}?job=1"
    flow_uri = f"azureml://eastus.api.azureml.ms/mlflow/v1.0{WORKSPACE_PATH.lower()}"
    monkeypatch.setenv("MLFLOW_TRACKING_URI", job_uri)
    monkeypatch.setenv("MLFLOW_TRACKING_TOKEN", job_token)
    monkeypatch.setenv("MLFLOW_RUN_ID", "job-run")
    monkeypatch.setenv("MLFLOW_EXPERIMENT_NAME", "tunegate")
    for name, value in job_variables(flow_uri, "flow-run").items():
        monkeypatch.setenv(name, value)
    sent: list[requests.PreparedRequest] = []

    def answer(adapter, request, **kwargs):  # in place of HTTPAdapter.send
        if "mlflow-telemetry" in request.url:  # MLflow's own usage pings, when not in CI
            raise requests.ConnectionError(request.url)
        sent.append(request)
        info = {"run_id": "flow-run", "run_uuid": "flow-run", "experiment_id": "7"}
        info |= {"status": "RUNNING", "lifecycle_stage": "active", "user_id": "u"}
        body = {"run": {"info": info, "data": {}}, "run_info": info}
        response = requests.Response()
        response.status_code, response.url, response.request = 200, request.url, request
        response._content = json.dumps(body).encode()
        return response

    monkeypatch.setattr(requests.adapters.HTTPAdapter, "send", answer)

    with attached_run({"epochs": 2}, rank=0) as run_id:
        assert run_id == "flow-run"
        assert os.environ["MLFLOW_TRACKING_URI"] == job_uri  # transformers' callback logs there
        assert "MLFLOW_RUN_ID" not in os.environ
    assert sent, "nothing reached the workspace"
    api = f"https://eastus.api.azureml.ms/mlflow/v2.0{WORKSPACE_PATH}/api/2.0/mlflow/"
    assert all(r.url.startswith(api) for r in sent), [r.url for r in sent]
    assert {r.headers["Authorization"] for r in sent} == {f"Bearer {job_token}"}
    assert "job-run" not in " ".join(f"{r.url} {r.body}" for r in sent)
    batches = [json.loads(r.body) for r in sent if r.url.endswith("runs/log-batch")]
    assert [p["key"] for b in batches for p in b.get("params", [])] == ["trainer.epochs"]
    assert os.environ["MLFLOW_RUN_ID"] == "job-run"  # the variables are as they were
