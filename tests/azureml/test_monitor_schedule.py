"""`tunegate azureml export`'s `monitor-schedule.yml`: Azure ML's model-monitoring schedule of the
exported deployment, loaded back with the SDK's own `load_schedule` (what `az ml schedule create`
reads; in azure-ai-ml 1.35 it lives in `entities._load_functions`)."""

from __future__ import annotations

from pathlib import Path

from azure.ai.ml.entities import (
    CronTrigger,
    DataDriftSignal,
    DataQualitySignal,
    MonitorSchedule,
    PredictionDriftSignal,
)
from azure.ai.ml.entities._load_functions import load_schedule

from tests.azureml.test_export import SCENARIOS, _export, _run_export, _steps

SIGNALS = [
    "--set",
    "monitor.signals.input_length={method: wasserstein, threshold: 0.42}",
    "--set",
    "monitor.signals.score={method: psi, threshold: 0.25}",
    "--set",
    "monitor.signals.malformed_requests={method: rate, threshold: 0.07}",
]


def _schedule(out: Path) -> MonitorSchedule:
    schedule = load_schedule(out / "monitor-schedule.yml")
    assert isinstance(schedule, MonitorSchedule)
    return schedule


def test_the_monitor_schedule_loads_with_the_sdk_and_says_what_the_config_says(
    tmp_path: Path,
) -> None:
    result = _run_export(
        tmp_path,
        SCENARIOS[0],
        "--data",
        "azureml:tunegate-split:7",
        "--set",
        "monitor.schedule=30 2 * * *",
        "--set",
        "monitor.window_hours=36",
        "--set",
        "monitor.alert_emails=[ops@example.com, ml-team@example.org]",
        *SIGNALS,
    )
    assert result.exit_code == 0, result.output
    schedule = _schedule(tmp_path / "export")
    assert isinstance(schedule.trigger, CronTrigger)
    assert schedule.trigger.expression == "30 2 * * *"
    monitor = schedule.create_monitor
    assert monitor.monitoring_target.endpoint_deployment_id == "azureml:tunegate-phi35:blue"
    assert monitor.alert_notification.emails == ["ops@example.com", "ml-team@example.org"]
    signals = monitor.monitoring_signals
    assert {name: type(s) for name, s in signals.items()} == {
        "data_drift": DataDriftSignal,
        "prediction_drift": PredictionDriftSignal,
        "data_quality": DataQualitySignal,
    }
    assert all(s.alert_enabled for s in signals.values())
    # production data: what the deployment's data collector writes, over 36 h in whole days
    collected = {
        name: (s.production_data.input_data.path, s.production_data.data_context)
        for name, s in signals.items()
    }
    assert collected == {
        "data_drift": ("tunegate-phi35-blue-model_inputs:1", "model_inputs"),
        "prediction_drift": ("tunegate-phi35-blue-model_outputs:1", "model_outputs"),
        "data_quality": ("tunegate-phi35-blue-model_inputs:1", "model_inputs"),
    }
    assert {s.production_data.data_window.lookback_window_size for s in signals.values()} == {"P2D"}
    # requests against the training data the jobs read; answers against their earlier windows
    for name in ("data_drift", "data_quality"):
        reference = signals[name].reference_data
        assert (reference.input_data.path, reference.data_context) == (
            "tunegate-split:7",
            "training",
        )
    earlier = signals["prediction_drift"].reference_data
    assert earlier.input_data.path == "tunegate-phi35-blue-model_outputs:1"
    window = earlier.data_window
    assert (window.lookback_window_size, window.lookback_window_offset) == ("P4D", "P2D")
    # thresholds: tunegate's where Azure has the same test, Azure's defaults otherwise
    drift = signals["data_drift"].metric_thresholds
    assert drift.numerical.normalized_wasserstein_distance == 0.42
    assert drift.categorical.jensen_shannon_distance == 0.1  # Azure's default
    prediction = signals["prediction_drift"].metric_thresholds
    assert prediction.numerical.population_stability_index == 0.25
    assert prediction.numerical.normalized_wasserstein_distance is None
    quality = signals["data_quality"].metric_thresholds
    assert quality.numerical.data_type_error_rate == 0.07
    assert (quality.numerical.null_value_rate, quality.numerical.out_of_bounds_rate) == (0.0, 0.0)
    # created once the deployment exists (its collected data assets come with it)
    verbs = [" ".join(step[2:4]) for step in _steps(result.output)]
    assert verbs[-2:] == ["online-deployment create", "schedule create"]
    assert "monitor-schedule.yml" in result.output.splitlines()[-2]


def test_without_alert_emails_the_schedule_sends_none_and_keeps_the_default_thresholds(
    tmp_path: Path,
) -> None:
    out = _export(
        tmp_path,
        SCENARIOS[0],
        "--set",
        "monitor.signals.score={method: wasserstein, threshold: 0.3, enabled: false}",
    )
    schedule = _schedule(out)
    assert schedule.create_monitor.alert_notification is None
    signals = schedule.create_monitor.monitoring_signals
    assert signals["data_drift"].metric_thresholds.numerical.normalized_wasserstein_distance == 0.3
    # a signal turned off locally leaves Azure's default (normalized Wasserstein 0.1)
    prediction = signals["prediction_drift"].metric_thresholds.numerical
    assert prediction.normalized_wasserstein_distance == 0.1
    assert schedule.trigger.expression == "0 * * * *"  # monitor.schedule's default
    # no --data: the jobs read the data asset's latest version, and so does the monitor
    assert signals["data_drift"].reference_data.input_data.path == "tunegate-split@latest"


def test_a_deployment_that_collects_nothing_gets_no_monitor_schedule(tmp_path: Path) -> None:
    for name, extra in {
        "mlflow": ["--set", "azureml.model_type=mlflow_model"],
        "no-collect": ["--set", "azureml.endpoint.collect=false"],
    }.items():
        result = _run_export(tmp_path / name, SCENARIOS[0], *extra)
        assert result.exit_code == 0, result.output
        assert not (tmp_path / name / "export" / "monitor-schedule.yml").exists()
        assert "schedule create" not in result.output


def test_a_bad_alert_email_exits_2_naming_the_field(tmp_path: Path) -> None:
    result = _run_export(
        tmp_path, SCENARIOS[0], "--set", "monitor.alert_emails=[ops@example.com, ops-at-example]"
    )
    assert result.exit_code == 2, result.output
    assert "monitor.alert_emails" in result.output and "ops-at-example" in result.output
    assert not (tmp_path / "export").exists()
