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
from flows.retrain import retrain
from flows.summary import RunSummary
from platforms.approvals import ApprovalRecord
from platforms.endpoint import stop_local_endpoint
from platforms.registry import MlflowRegistry
from tests.tickets import qa_tickets

pytestmark = pytest.mark.slow

TRAIN = {
    "epochs": 1,
    "max_length": 96,
    "batch_size": 8,
    "args": {"doc_stride": 32, "logging_steps": 1},
}


def _config(make_config, tmp_path: Path, **evaluate):
    return make_config(
        until="register",
        ingest={"inputs": [str(qa_tickets(tmp_path, n_contexts=16))]},
        approval={"mode": "auto"},
        train=TRAIN,
        evaluate=evaluate,
    )


def test_a_passing_candidate_is_registered_with_its_lineage(
    prefect_api, make_config, webhook, tmp_path: Path
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
    assert lineage.evaluation["candidate"] == evaluation["candidate"]
    assert lineage.flow_run_id == summary.flow_run_id and len(lineage.config_hash or "") == 64
    assert lineage.code_version and lineage.training_job == summary.stages["train"].details["job"]
    assert (Path(champion.path) / "adapter_model.safetensors").exists()
    # serving.runtime auto: the runtimes were scored, the choice registered with its file's hash
    serving = lineage.evaluation["serving"]
    assert serving["scores"]["onnx"] == serving["scores"]["torch"]  # the same graph, the same F1
    assert serving["runtime"] in ("onnx-int8", "onnx")
    record = json.loads((Path(champion.path) / "serving.json").read_text())
    assert (record["runtime"], record["sha256"]) == (serving["runtime"], serving["sha256"])
    assert (Path(champion.path) / record["path"] / "model.onnx").is_file()
    metrics = json.loads((Path(champion.path) / "metrics.json").read_text())
    assert metrics["loss_curve"] and metrics["train_records"] > 0

    # Same data and training config, a stricter gate: the finished job is reused, the champion is
    # scored beside the candidate, and a gate no model can pass stops before registration.
    strict = _config(make_config, tmp_path, thresholds={"f1": 101.0})
    strict = strict.model_copy(
        update={"notify": strict.notify.model_copy(update={"webhook_url": webhook.url})}
    )
    state = retrain(strict, return_state=True)
    assert webhook.events() == ["gate-failed"]
    assert "f1 >= 101.0" in webhook.received[0]["message"]
    assert webhook.received[0]["flow_run_id"] == str(state.state_details.flow_run_id)
    assert state.is_failed()
    assert "f1 >= 101.0" in state.message and "nothing was registered" in state.message
    failed: RunSummary = state.result(raise_on_failure=False)
    assert failed.stages["train"].details["reused"] is True
    assert failed.stages["evaluate"].status == "gate-failed"
    assert failed.evaluation["champion"] == evaluation["candidate"]
    assert "register" not in failed.stages
    assert [v.version for v in registry.versions("tunegate-extractive-qa")] == [1]

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
        example = endpoint["example"]
        assert example["response"]["answer"] in example["request"]["context"]
        assert oct(Path(endpoint["key_file"]).stat().st_mode)[-3:] == "600"
        assert served.result().stages["rollout"].details["outcome"] == "promoted"
    finally:
        stop_local_endpoint(Path(cfg.store) / "endpoints" / "tunegate-extractive-qa")

    listed = CliRunner().invoke(app, ["models", "list", "--set", f"store={cfg.store}"])
    assert listed.exit_code == 0 and "champion" in listed.output
