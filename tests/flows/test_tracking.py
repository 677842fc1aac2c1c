"""Every run is an MLflow run: platforms/tracking.py and flows/run_tracking.py on a temp store.

The MLflow database is the store's own SQLite file (from the migrated template: milliseconds);
no Prefect API, no training: the trainer's side is in tests/trainer/test_train.py, a whole run's
in tests/flows/test_flow_model.py.
"""

from __future__ import annotations

import json
from contextlib import nullcontext
from pathlib import Path

import pytest
from prefect.exceptions import Pause

from flows.config import load_config
from flows.run_tracking import RunTracker, config_params, evaluation_metrics
from flows.summary import RunSummary
from platforms import tracking
from platforms.evaluation import EvalReport
from platforms.training import TrainingJob
from tasks.gate import GatePolicy, decide_gate


def test_a_flow_run_has_one_mlflow_run_resumed_by_its_id(tmp_path: Path) -> None:
    uri = tracking.ensure_local_database(tmp_path)
    root = tracking.local_artifact_root(tmp_path)
    run = tracking.start_run(uri, "tunegate-qa", "retrain-qa", "flow-1", {"a": 1}, root)
    run.log_params({"train.learning_rate": 0.002, "ingest.inputs": ["a.jsonl", "b.jsonl"]})
    run.log_metrics({"base.f1": 6.1, "gate.passed": True, "not-a-number": float("nan")})
    run.log_curve("loss", [(1, 3.0), (2, 2.5), (3, 2.0)])
    run.log_text("# report", "evaluation/report.md")
    run.end("FAILED")

    again = tracking.start_run(uri, "tunegate-qa", "retrain-qa", "flow-1", {"b": 2}, root)
    assert again.run_id == run.run_id  # a retried flow run goes on in its run, RUNNING again
    client = tracking.client(uri)
    assert client.get_run(run.run_id).info.status == "RUNNING"
    # a logged parameter is never changed (MLflow refuses to): the resumed run keeps it
    again.log_params({"train.learning_rate": 0.5, "train.epochs": 2})
    other = tracking.start_run(uri, "tunegate-qa", "retrain-qa", "flow-2", {}, root)
    assert other.run_id != run.run_id
    again.end("FINISHED")

    found = client.get_run(run.run_id)
    assert found.info.status == "FINISHED" and found.info.run_name == "retrain-qa"
    assert found.data.params == {
        "train.learning_rate": "0.002",
        "ingest.inputs": '["a.jsonl", "b.jsonl"]',
        "train.epochs": "2",
    }
    assert found.data.metrics == {"base.f1": 6.1, "gate.passed": 1.0, "loss": 2.0}
    assert again.history("loss") == [(1, 3.0), (2, 2.5), (3, 2.0)]
    assert found.data.tags[tracking.FLOW_RUN_TAG] == "flow-1"
    assert (found.data.tags["a"], found.data.tags["b"]) == ("1", "2")
    experiment = client.get_experiment(found.info.experiment_id)
    assert experiment.name == "tunegate-qa"
    assert (root / "tunegate-qa").is_dir()  # the store's artifacts, not ./mlruns
    assert [a.path for a in client.list_artifacts(run.run_id, "evaluation")] == [
        "evaluation/report.md"
    ]
    # a local store's run: its address in the MLflow UI `tunegate ui` serves
    assert (
        run.link
        == f"{tracking.LOCAL_UI}/#/experiments/{experiment.experiment_id}/runs/{run.run_id}"
    )
    assert experiment.tags[tracking.EXPERIMENT_KIND] == "custom_model_development"
    server = tracking.TrackedRun(client, "http://127.0.0.1:5000/", "7", "abc", "http://h:5000")
    assert server.link == "http://h:5000/#/experiments/7/runs/abc"
    assert tracking.ui_base("http://mlflow.example:5000/") == "http://mlflow.example:5000"
    assert tracking.ui_base("sqlite:///x.db", "https://mlflow.example/") == "https://mlflow.example"
    assert tracking.ui_base("azureml://westeurope.api.azureml.ms/mlflow/v1.0/x") is None
    assert (
        tracking.model_version_url("http://h:5000", "helpdesk qa", 3)
        == "http://h:5000/#/models/helpdesk%20qa/versions/3"
    )


def test_a_store_database_of_a_newer_mlflow_is_refused_naming_the_folder(tmp_path: Path) -> None:
    """A store whose database a newer MLflow migrated (tunegate before it took MLflow 3.15.0 for
    azureml-mlflow) is refused with what to do, not MLflow's "upgrade your database": no
    migration of this MLflow leads back."""
    import sqlite3

    uri = tracking.ensure_local_database(tmp_path)
    assert tracking.ensure_local_database(tmp_path) == uri  # its own: opened as it is
    db = tmp_path / "mlflow" / "mlflow.db"
    with sqlite3.connect(db) as connection:
        connection.execute("UPDATE alembic_version SET version_num = 'dc11669786a5'")
    with pytest.raises(ValueError, match=r"newer MLflow.*dc11669786a5.*move .*mlflow aside"):
        tracking.ensure_local_database(tmp_path)


def test_the_config_is_flattened_into_parameters_without_the_webhook_s_token(
    tmp_path: Path,
) -> None:
    config = load_config(
        None,
        [
            f"store={tmp_path}",
            "train.learning_rate=0.001",
            "notify.webhook_url=https://hooks.example/T0/B0/secret-token",
        ],
    )
    params = config_params(config)
    assert params["train.learning_rate"] == 0.001 and params["task"] == "extractive-qa"
    assert params["screen.toxicity.threshold"] == config.screen.toxicity.threshold
    assert params["notify.webhook_url"] == "(set)"
    assert not any("secret-token" in str(v) for v in params.values())
    # what the trainer runs with, the task's tuned defaults included (unset in the config)
    assert params["trainer.learning_rate"] == 0.001 and params["trainer.epochs"] == 4.0
    assert "trainer.output_dir" not in params  # the job's own folder: the trainer logs it


def test_inputs_named_in_the_config_are_one_parameter_mlflow_takes(tmp_path: Path) -> None:
    """Datasheets and profiles keyed by an input (`books/`, a glob) are logged as one parameter
    each: MLflow refuses those keys in a parameter's name (a run's setup failed on them)."""
    (tmp_path / "books").mkdir()
    inputs = [
        str(tmp_path / "data/*.jsonl"),
        {"path": "books/", "licence": "CC0-1.0", "profile": "literary"},
    ]
    config = load_config(
        None,
        [f"store={tmp_path / 'store'}", f"ingest.inputs={json.dumps(inputs)}",
         f'ingest.datasheets={{"{inputs[0]}": {{"licence": "MIT"}}}}'],
    )  # fmt: skip
    params = config_params(config)
    assert not [k for k in params if "books" in k or "*" in k]  # no input in a name
    run = tracking.start_run(
        tracking.ensure_local_database(tmp_path), "tunegate-qa", "retrain-qa", "flow-1", {},
        tracking.local_artifact_root(tmp_path),
    )  # fmt: skip
    run.log_params(params)
    logged = tracking.client(tracking.ensure_local_database(tmp_path)).get_run(run.run_id)
    assert json.loads(logged.data.params["screen.profiles"]) == {"books/": "literary"}
    assert json.loads(logged.data.params["ingest.datasheets"])[inputs[0]]["licence"] == "MIT"
    assert logged.data.params["screen.toxicity.threshold"]  # sections still flattened


def test_the_loss_plot_is_a_png_of_the_training_history(tmp_path: Path) -> None:
    history = [{"step": s, "loss": 3.0 / s} for s in range(1, 11)]
    history += [{"step": 10, "eval_loss": 0.5}, {"step": 10, "train_runtime": 1.0}]
    plot = tracking.loss_curve_png(history, tmp_path / "plots" / "loss.png")
    assert plot is not None and plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert tracking.loss_curve_png([{"step": 1, "eval_loss": 1.0}], tmp_path / "x.png") is None


def _tracker(tmp_path: Path, flow_run_id: str = "flow-1") -> RunTracker:
    config = load_config(None, [f"store={tmp_path / 'store'}", "registry.model_name=m"])
    return RunTracker(config, config.backends(), RunSummary(flow_run_id=flow_run_id))


@pytest.mark.parametrize(
    ("ending", "status"),
    [
        ("completed", "FINISHED"),
        ("gate-failed", "FAILED"),
        (ValueError("a stage failed"), "FAILED"),
        (KeyboardInterrupt(), "KILLED"),
        (SystemExit(143), "KILLED"),  # SIGTERM, as the CLI sees it
        (Pause(), "RUNNING"),  # a suspended flow run comes back to its run
    ],
)
def test_the_mlflow_run_ends_as_the_flow_ends(
    tmp_path: Path, ending: str | BaseException, status: str
) -> None:
    tracker = _tracker(tmp_path)
    expected = pytest.raises(type(ending)) if isinstance(ending, BaseException) else nullcontext()
    with expected, tracker:
        tracker.open("retrain-extractive-qa")
        if isinstance(ending, BaseException):
            raise ending
        tracker.summary.end(ending)
    client = tracking.client(tracker.backends.tracking_uri)
    assert client.get_run(tracker.run_id).info.status == status
    assert tracker.summary.tracking_run and tracker.run_id in tracker.summary.tracking_run


def test_a_reused_job_s_curves_plot_and_model_card_come_from_its_files(tmp_path: Path) -> None:
    """A job trained in an earlier run logged its curves there: this run gets them from the job's
    trainer_state.json, with the loss plot and the model card the trainer saved."""
    output = tmp_path / "job" / "outputs"
    output.mkdir(parents=True)
    history = [{"step": s, "loss": 3.0 - s / 10, "learning_rate": 1e-3} for s in range(1, 13)]
    history.append({"step": 12, "eval_loss": 2.0})
    (output / "trainer_state.json").write_text(json.dumps({"log_history": history}))
    (output / "metrics.json").write_text(json.dumps({"tokens_per_second": 99.5, "task": "x"}))
    (output / "README.md").write_text("# model card")
    job = TrainingJob(
        name="train-1",
        backend="local",
        status="completed",
        output_dir=str(output),
        log_path=str(tmp_path / "job" / "train.log"),
        reused=True,
    )
    tracker = _tracker(tmp_path)
    with tracker:
        tracker.open("retrain-extractive-qa")
        tracker.trained(job)
        tracker.trained(job)  # a retried flow run: the curves are not logged twice
        tracker.summary.end("completed")
    run = tracker.run
    assert run is not None
    assert run.history("loss") == [(s, pytest.approx(3.0 - s / 10)) for s in range(1, 13)]
    assert run.history("eval_loss") == [(12, 2.0)]
    data = run.client.get_run(run.run_id).data
    assert data.metrics["trainer.tokens_per_second"] == 99.5
    assert data.tags["tunegate.training_job"] == "train-1"
    artifacts = {
        a.path for top in ("training", "model") for a in run.client.list_artifacts(run.run_id, top)
    }
    assert artifacts == {"training/loss-curve.png", "model/README.md"}


def test_every_number_the_gate_compared_is_a_metric() -> None:
    policy = GatePolicy(thresholds={"f1": 50.0}, min_gain_over_base=20.0, max_regression=1.0)
    candidate, base, champion = {"f1": 71.2, "exact_match": 60.0}, {"f1": 6.1}, {"f1": 75.0}
    gate = decide_gate(candidate, base, champion, policy, "f1", test_records=40)
    report = EvalReport(
        task="extractive-qa",
        primary_metric="f1",
        test_records=40,
        base=base,
        candidate=candidate,
        champion=champion,
        champion_version=3,
        interval=(-5.5, -2.1),
        pii_leaks=0,
        gate=gate,
    )
    metrics = evaluation_metrics(report)
    assert not gate.passed and metrics["gate.passed"] is False  # logged as 0
    assert (metrics["base.f1"], metrics["candidate.f1"], metrics["champion.f1"]) == (6.1, 71.2, 75)
    assert metrics["candidate.exact_match"] == 60.0
    assert metrics["gate.f1_at_least_50.0.value"] == 71.2
    assert metrics["gate.f1_at_least_50.0.required"] == 50.0
    assert metrics["gate.f1_gain_over_base.passed"] is True
    assert metrics["gate.f1_change_vs_champion.passed"] is False
    assert (metrics["gate.interval.low"], metrics["gate.interval.high"]) == (-5.5, -2.1)
    assert (metrics["evaluation.test_records"], metrics["evaluation.pii_leaks"]) == (40, 0)
