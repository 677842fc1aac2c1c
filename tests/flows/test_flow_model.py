"""The retrain flow through train → evaluate → register, with the packaged pretrained MiniLM.

Real training on this machine (a short one), real scoring of base, candidate and champion, a real
registry; under the session's temporary Prefect API.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli.main import app
from flows.retrain import retrain, run_name
from flows.summary import RunSummary
from platforms import tracking
from platforms.approvals import ApprovalRecord
from platforms.endpoint import stop_local_endpoint
from platforms.registry import MlflowRegistry
from tests.prefect_server import events_named
from tests.tickets import qa_tickets
from trainer.taskspec import task_spec

pytestmark = pytest.mark.slow

TRAIN = {
    "epochs": 1,
    "max_length": 96,
    "batch_size": 2,  # a step per two windows: a loss curve of 10+ points in one short epoch
    "args": {"doc_stride": 32, "logging_steps": 1},
}


def _mlflow_run(client, flow_run_id: str | None):
    """The MLflow run of a Prefect flow run (found by its tag)."""
    [found] = client.search_runs(
        [e.experiment_id for e in client.search_experiments()],
        f"tags.`{tracking.FLOW_RUN_TAG}` = '{flow_run_id}'",
    )
    return found


def _config(make_config, tmp_path: Path, **evaluate):
    return make_config(
        until="register",
        ingest={"inputs": [str(qa_tickets(tmp_path, n_contexts=16))]},
        approval={"mode": "auto"},
        train=TRAIN,
        evaluate=evaluate,
    )


def test_a_passing_candidate_is_registered_with_its_lineage(
    prefect_api, make_config, tmp_path: Path
) -> None:
    cfg = _config(make_config, tmp_path, min_gain_over_base=-100.0)
    state = retrain(cfg, return_state=True)
    assert state.is_completed(), state.message
    summary: RunSummary = state.result()
    assert list(summary.stages) == [
        "ingest",
        "screen",
        "approve",
        "split",
        "train",
        "evaluate",
        "register",
    ]
    evaluation = summary.evaluation
    assert set(evaluation["base"]) == {"exact_match", "f1"} == set(evaluation["candidate"])
    assert evaluation["champion"] is None
    assert evaluation["gate"] == {"passed": True, "verdict": "passed", "reasons": []}
    assert summary.model_version == "tunegate-extractive-qa:1"

    registry = MlflowRegistry.local(Path(cfg.store))
    champion = registry.alias("tunegate-extractive-qa", "champion")
    assert champion is not None and champion.version == 1
    lineage = champion.lineage
    assert lineage.datasets["split"] == summary.stages["split"].details["content_hash"]
    assert lineage.approval is not None and lineage.approval.decision == "approved"
    assert lineage.approval.reviewer == "policy"
    [audit_file] = (Path(cfg.store) / "approvals").glob("*/*.json")  # the signed record's hash
    stored = ApprovalRecord.model_validate_json(audit_file.read_text())
    assert lineage.approval_hash == stored.record_hash and stored.signature
    assert lineage.evaluation is not None  # the EvalReport itself, typed
    assert lineage.evaluation.candidate == evaluation["candidate"]
    assert lineage.flow_run_id == summary.flow_run_id and len(lineage.config_hash or "") == 64
    assert lineage.code_version and lineage.training_job == summary.stages["train"].details["job"]
    assert (Path(champion.path) / "adapter_model.safetensors").exists()
    card = (Path(champion.path) / "README.md").read_text()  # its model card, not PEFT's template
    base_line = next(line for line in card.splitlines() if line.startswith("base_model: "))
    assert "/" not in base_line and "## Screening" in card and "records in" in card
    assert lineage.datasets["split"] in card and "Records per split: train" in card
    # serving.runtime auto: the runtimes were scored, the choice registered with its file's hash
    serving = lineage.evaluation.serving
    assert serving is not None
    assert serving.scores["onnx"] == serving.scores["torch"]  # the same graph, the same F1
    assert serving.runtime in ("onnx-int8", "onnx")
    record = json.loads((Path(champion.path) / "serving.json").read_text())
    assert (record["runtime"], record["sha256"]) == (serving.runtime, serving.sha256)
    assert (Path(champion.path) / record["path"] / "model.onnx").is_file()
    metrics = json.loads((Path(champion.path) / "metrics.json").read_text())
    assert metrics["loss_curve"] and metrics["train_records"] > 0
    # The run is an MLflow run in the store's database: parameters, the trainer's live loss
    # curve, base/candidate metrics, the gate's decision, the reports and the loss plot.
    client = tracking.client(tracking.local_tracking_uri(Path(cfg.store)))
    run = client.get_run(lineage.tracking_run_id)
    assert _mlflow_run(client, summary.flow_run_id).info.run_id == run.info.run_id
    assert run.info.status == "FINISHED" and run.info.run_name == run_name(cfg)  # model · data
    assert client.get_experiment(run.info.experiment_id).name == "tunegate-extractive-qa"
    assert (
        run.data.params["train.max_length"] == "96" and run.data.params["task"] == "extractive-qa"
    )
    assert run.data.params["trainer.logging_steps"] == "1"  # resolved trainer arguments too
    # the trainer subprocess logged into this run itself (only it knows its output folder)
    assert run.data.params["trainer.output_dir"] == summary.stages["train"].details["output_dir"]
    losses = client.get_metric_history(run.info.run_id, "loss")
    assert len(losses) >= 10 and len(losses) == len(metrics["loss_curve"])
    assert run.data.metrics["base.f1"] == evaluation["base"]["f1"]
    assert run.data.metrics["candidate.f1"] == evaluation["candidate"]["f1"]
    assert run.data.metrics["gate.passed"] == 1.0 and run.data.tags["tunegate.gate"] == "passed"
    assert run.data.tags["tunegate.dataset.split"] == lineage.datasets["split"]
    assert run.data.tags["tunegate.approval_hash"] == lineage.approval_hash
    assert run.data.tags["mlflow.source.git.commit"] == lineage.code_version
    assert {"training/loss-curve.png", "evaluation/report.md", "screening/report.md"} <= {
        a.path
        for top in ("training", "evaluation", "screening")
        for a in client.list_artifacts(run.info.run_id, top)
    }

    # Same data and training config, a stricter gate: the finished job is reused, the champion is
    # scored beside the candidate, and a gate no model can pass stops before registration.
    strict = _config(make_config, tmp_path, thresholds={"f1": 101.0})
    state = retrain(strict, return_state=True)
    strict_run = f"prefect.flow-run.{state.state_details.flow_run_id}"
    # the event the gate-failed automation waits for
    [gate_failed] = events_named("tunegate.gate.failed", related_to=strict_run)
    assert gate_failed.resource.id == "tunegate.model.tunegate-extractive-qa"
    assert gate_failed.payload["verdict"] == "failed"
    assert any("f1 >= 101.0" in reason for reason in gate_failed.payload["reasons"])
    assert state.is_failed() and state.name == "GateFailed"
    assert "f1 >= 101.0" in state.message and "nothing was registered" in state.message
    failed: RunSummary = state.result(raise_on_failure=False)
    assert failed.stages["train"].details["reused"] is True
    assert failed.stages["evaluate"].status == "gate-failed"
    assert failed.evaluation["champion"] == evaluation["candidate"]
    assert "register" not in failed.stages
    assert [v.version for v in registry.versions("tunegate-extractive-qa")] == [1]
    # its own MLflow run, FAILED: the champion's metrics beside the candidate's, the gate's
    # decision, and the reused job's loss curve (from its files: it trained in the first run)
    failed_run = _mlflow_run(client, failed.flow_run_id)
    assert failed_run.info.status == "FAILED" and failed_run.info.run_id != run.info.run_id
    assert failed_run.data.metrics["champion.f1"] == evaluation["candidate"]["f1"]
    assert failed_run.data.metrics["gate.passed"] == 0.0
    assert failed_run.data.tags["tunegate.gate"] == "failed"
    assert len(client.get_metric_history(failed_run.info.run_id, "loss")) == len(losses)

    # The original config again: the same finished job was registered already, so the run
    # reuses version 1 instead of registering a copy.
    again = retrain(cfg, return_state=True)
    assert again.is_completed(), again.message
    assert again.result().model_version == "tunegate-extractive-qa:1"
    assert again.result().stages["register"].details["reused"] is True
    assert [v.version for v in registry.versions("tunegate-extractive-qa")] == [1]

    # All eight stages: the same model goes to a fresh local endpoint (its first deployment),
    # which keeps serving after the run; the summary says where and how to call it.
    served = retrain(cfg.model_copy(update={"until": "rollout"}), return_state=True)
    try:
        assert served.is_completed(), served.message
        endpoint = served.result().endpoint
        assert endpoint["traffic"] == {"blue": 100}
        assert endpoint["deployments"] == {"blue": "tunegate-extractive-qa:1"}
        example = endpoint["example"]  # the curl example: the task's documented request
        assert example["request"] == task_spec("extractive-qa").request_example
        assert example["response"]["answer"] in example["request"]["context"]
        assert oct(Path(endpoint["key_file"]).stat().st_mode)[-3:] == "600"
        assert served.result().stages["rollout"].details["outcome"] == "promoted"
        stop = f"`tunegate endpoint stop --model tunegate-extractive-qa --store {cfg.store}`"
        assert endpoint["stays_up"] == (
            f"the endpoint stays up after this run; {stop} stops it and its traffic collector"
        )
        assert served.message.endswith(endpoint["stays_up"])  # the run's last word says it
        served_run = f"prefect.flow-run.{served.state_details.flow_run_id}"
        [promoted] = events_named("tunegate.model.promoted", related_to=served_run)
        assert promoted.payload == {
            "model": "tunegate-extractive-qa",
            "version": 1,
            "endpoint": endpoint["url"],
        }
    finally:
        stop_local_endpoint(Path(cfg.store) / "endpoints" / "tunegate-extractive-qa")

    listed = CliRunner().invoke(app, ["models", "list", "--set", f"store={cfg.store}"])
    assert listed.exit_code == 0 and "champion" in listed.output
