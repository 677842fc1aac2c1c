"""Azure ML's model monitoring of an exported online deployment: a `MonitorSchedule` built from the
SDK's own entities, pure, no service calls (`az ml schedule create -f monitor-schedule.yml`).

It watches what the deployment's data collector writes (the `model_inputs` and `model_outputs`
collections, which Azure ML registers as the data assets `<endpoint>-<deployment>-model_inputs`
and `...-model_outputs` when the deployment is created) with Azure's three built-in signals:

- data drift: the collected requests against the training data asset (the split the jobs read);
- prediction drift: the collected answers against the same deployment's answers of the windows
  before (Azure's out-of-box reference, and the local monitor's for answer scores);
- data quality: the collected requests against the training data asset.

Which of tunegate's own thresholds (`monitor.signals`) carry over is `MonitorSpec`'s to say; every
other metric keeps Azure's default (the SDK's `_get_default_thresholds`).
"""

from __future__ import annotations

from math import ceil

from azure.ai.ml import Input
from azure.ai.ml.constants import AssetTypes, MonitorDatasetContext
from azure.ai.ml.entities import (
    AlertNotification,
    CronTrigger,
    DataDriftMetricThreshold,
    DataDriftSignal,
    DataQualityMetricThreshold,
    DataQualitySignal,
    MonitorDefinition,
    MonitoringTarget,
    MonitorSchedule,
    NumericalDriftMetrics,
    PredictionDriftMetricThreshold,
    PredictionDriftSignal,
    ProductionData,
    ReferenceData,
    ServerlessSparkCompute,
)
from azure.ai.ml.entities._monitoring.signals import BaselineDataRange
from pydantic import BaseModel, ConfigDict, Field

from serving.collect import INPUTS, OUTPUTS

# Serverless Spark runs the monitoring jobs: the smallest instance type Azure ML supports for
# them, and the newest runtime the SDK accepts.
SPARK_INSTANCE_TYPE = "standard_e4s_v3"
SPARK_RUNTIME = "3.4"
# The local monitor's column drift methods and Azure's numerical drift metric of the same test
# (`tasks/drift_signals.py`'s `Method`); its text, embedding and rate signals have no Azure
# counterpart.
AZURE_DRIFT_METRICS = {
    "wasserstein": "normalized_wasserstein_distance",
    "jensenshannon": "jensen_shannon_distance",
    "psi": "population_stability_index",
    "ks": "two_sample_kolmogorov_smirnov_test",  # a p-value in both: drift below it
}


class DriftMetric(BaseModel):
    """One of Azure's numerical drift metrics and the value at which it alerts."""

    model_config = ConfigDict(frozen=True)
    metric: str = Field(description="A key of AZURE_DRIFT_METRICS' values.")
    threshold: float


class MonitorSpec(BaseModel):
    """What the exported monitoring schedule says: when it runs, over what window, who is told,
    and the thresholds carried over from tunegate's own signals (None: Azure's default)."""

    model_config = ConfigDict(frozen=True)
    schedule: str = Field("0 3 * * *", description="Cron, UTC.")
    window_days: int = Field(1, ge=1, description="Days of collected data each run reads.")
    alert_emails: tuple[str, ...] = ()
    input_drift: DriftMetric | None = Field(
        None, description="Data drift of the requests' numerical features."
    )
    prediction_drift: DriftMetric | None = Field(
        None, description="Prediction drift of the answers' numerical fields."
    )
    data_type_error_rate: float | None = Field(
        None, description="Data quality: the share of requests with a field of the wrong type."
    )


def drift_metric(method: str, threshold: float, enabled: bool = True) -> DriftMetric | None:
    """Azure's metric for a local signal measured by `method` at `threshold`; None when the signal
    is off or Azure has no such test (the threshold then stays Azure's default)."""
    metric = AZURE_DRIFT_METRICS.get(method)
    if not enabled or metric is None:
        return None
    return DriftMetric(metric=metric, threshold=threshold)


def window_days(hours: float) -> int:
    """Azure's monitoring windows are whole days: the days that cover `hours`."""
    return max(1, ceil(hours / 24))


def collected_asset(endpoint: str, deployment: str, collection: str) -> str:
    """The data asset Azure ML registers for a deployment's data collection."""
    return f"azureml:{endpoint}-{deployment}-{collection}:1"


def monitor_schedule(
    spec: MonitorSpec, endpoint: str, deployment: str, training_data: str, model: str
) -> MonitorSchedule:
    """The monitoring schedule of `endpoint`'s `deployment` (serving `model`): data drift and
    data quality of its collected requests against `training_data` (a data asset or datastore
    path), prediction drift of its collected answers against its earlier answers."""
    days = spec.window_days
    window = BaselineDataRange(lookback_window_size=f"P{days}D", lookback_window_offset="P0D")
    requests = ProductionData(
        input_data=Input(
            type=AssetTypes.URI_FOLDER, path=collected_asset(endpoint, deployment, INPUTS)
        ),
        data_context=MonitorDatasetContext.MODEL_INPUTS,
        data_window=window,
    )
    answers_asset = collected_asset(endpoint, deployment, OUTPUTS)
    answers = ProductionData(
        input_data=Input(type=AssetTypes.URI_FOLDER, path=answers_asset),
        data_context=MonitorDatasetContext.MODEL_OUTPUTS,
        data_window=window,
    )
    training = ReferenceData(
        input_data=Input(type=AssetTypes.URI_FOLDER, path=training_data),
        data_context=MonitorDatasetContext.TRAINING,
    )
    # the answers of the two windows before this one: Azure's out-of-box reference window
    earlier_answers = ReferenceData(
        input_data=Input(type=AssetTypes.URI_FOLDER, path=answers_asset),
        data_context=MonitorDatasetContext.MODEL_OUTPUTS,
        data_window=BaselineDataRange(
            lookback_window_size=f"P{2 * days}D", lookback_window_offset=f"P{days}D"
        ),
    )
    data_drift = DataDriftMetricThreshold._get_default_thresholds()
    if spec.input_drift is not None:
        data_drift.numerical = _numerical(spec.input_drift)
    prediction_drift = PredictionDriftMetricThreshold._get_default_thresholds()
    if spec.prediction_drift is not None:
        prediction_drift.numerical = _numerical(spec.prediction_drift)
    quality = DataQualityMetricThreshold._get_default_thresholds()
    if spec.data_type_error_rate is not None:
        quality.numerical.data_type_error_rate = spec.data_type_error_rate
        quality.categorical.data_type_error_rate = spec.data_type_error_rate
    signals = {
        "data_drift": DataDriftSignal(
            production_data=requests,
            reference_data=training,
            metric_thresholds=data_drift,
            alert_enabled=True,
        ),
        "prediction_drift": PredictionDriftSignal(
            production_data=answers,
            reference_data=earlier_answers,
            metric_thresholds=prediction_drift,
            alert_enabled=True,
        ),
        "data_quality": DataQualitySignal(
            production_data=requests,
            reference_data=training,
            metric_thresholds=quality,
            alert_enabled=True,
        ),
    }
    return MonitorSchedule(
        name=f"{endpoint}-{deployment}-monitor",
        display_name=f"tunegate monitor of {endpoint}:{deployment}",
        description="Data drift, prediction drift and data quality of the masked requests and "
        "answers the deployment collects (tunegate azureml export)",
        trigger=CronTrigger(expression=spec.schedule),
        create_monitor=MonitorDefinition(
            compute=ServerlessSparkCompute(
                instance_type=SPARK_INSTANCE_TYPE, runtime_version=SPARK_RUNTIME
            ),
            # no ml_task: Azure's task types are tabular ones (classification, regression)
            monitoring_target=MonitoringTarget(
                endpoint_deployment_id=f"azureml:{endpoint}:{deployment}"
            ),
            monitoring_signals=signals,
            alert_notification=(
                AlertNotification(emails=list(spec.alert_emails)) if spec.alert_emails else None
            ),
        ),
        tags={"tunegate.model": model},
    )


def _numerical(metric: DriftMetric) -> NumericalDriftMetrics:
    return NumericalDriftMetrics(**{metric.metric: metric.threshold})
