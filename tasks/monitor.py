"""The monitor stage: one window of a served model's collected traffic against the champion's own
data, a typed `DriftResult`, and the report a person reads.

Where things come from:
- the traffic: the champion's collected records of the window (`--since`..now; default the
  last `monitor.window_hours`), masked by the collector as they were written: with
  `monitor.source: local`, the model's local endpoint folder (`{store}/endpoints/{model}/
  collected/`); with `azureml`, what Azure ML's data collector wrote for the model's managed
  online endpoint on Blob storage (tasks/monitor_azure.py);
- the reference: the champion's lineage names its split dataset by content hash; its test
  records' requests and reference answers are what its users were expected to send and get,
  its training records' words are the vocabulary it knows;
- the score reference: the same version's traffic before the window (Azure ML's default
  reference for prediction drift).

The signals and their thresholds: tasks/drift_signals.py. The `monitor` flow (flows/monitor.py)
runs this for each served model on a schedule and turns the result into Prefect events and
artifacts.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Literal

from prefect import task
from prefect.cache_policies import NONE
from pydantic import BaseModel, ConfigDict, Field, field_validator

from platforms.backends import Backends
from platforms.blob import AzureStorageConfig
from platforms.model_version import ModelRegistry, ModelVersion
from platforms.store import Store
from serving.collect import COLLECTED, answer_scores, answer_text
from tasks.chance import ChanceConfig
from tasks.collector_root import AzureCollectedConfig
from tasks.drift import measure_drift
from tasks.drift_features import Sample, stable_sample, strings, vocabulary
from tasks.drift_report import drift_report_html
from tasks.drift_signals import DriftResult, DriftSignals
from tasks.traffic_sources import TRAFFIC_SOURCES, CollectedTraffic, LocalCollected
from trainer.taskspec import task_spec

log = logging.getLogger(__name__)
EMAIL = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s.]+")
BASELINE_SCORES = 2000  # the version's latest answer scores before the window, at most


class MonitorConfig(BaseModel):
    """What the monitor reads, how much of it, and when a window has drifted."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    source: Literal["local", "azureml"] = Field(
        "local",
        description="Where the collected traffic is read: local (the model's local endpoint's "
        "collected/ folder) or azureml (Azure ML's data collector output on Blob storage, "
        "monitor.azureml).",
    )
    azureml: AzureCollectedConfig = Field(
        default_factory=AzureCollectedConfig,
        description="Where Azure ML's data collector writes (monitor.source: azureml).",
    )
    window_hours: float = Field(
        24.0, gt=0, description="The window read when no --since is given: the last N hours."
    )
    min_requests: int = Field(
        30,
        ge=1,
        description="A window with fewer of the champion's requests is not judged (no drift, "
        "judged: false).",
    )
    reference_records: int = Field(
        2000, ge=10, description="Test records of the champion read as the reference, at most."
    )
    sample_size: int = Field(
        300,
        ge=20,
        description="Requests a side the text and embedding signals read (a stable sample).",
    )
    schedule: str = Field(
        "0 * * * *",
        description="Cron schedule of the monitor deployment (hourly), and of the Azure ML "
        "model-monitoring schedule `tunegate azureml export` writes.",
    )
    cooldown_hours: float = Field(
        6.0,
        gt=0,
        description="At most one retrain run a model starts from drift or new data within this "
        "many hours (the retrain deployment's triggers).",
    )
    signals: DriftSignals = Field(
        default_factory=DriftSignals, description="Each signal's method and threshold."
    )
    chance: ChanceConfig = Field(
        default_factory=ChanceConfig,
        description="What chance gives the classifier and distance signals at a window's size: "
        "they drift only above it.",
    )
    alert_emails: list[str] = Field(
        default_factory=list,
        description="Who Azure ML's model-monitoring schedule e-mails when a signal alerts "
        "(`tunegate azureml export`); empty: no e-mail.",
    )

    @field_validator("alert_emails")
    @classmethod
    def _emails(cls, emails: list[str]) -> list[str]:
        bad = [e for e in emails if not EMAIL.fullmatch(e)]
        if bad:
            raise ValueError(
                f"not an e-mail address: {', '.join(map(repr, bad))} (name@domain.tld)"
            )
        return emails


class MonitorRun(BaseModel):
    """What one monitor run produced: the result and where its report was written."""

    model_config = ConfigDict(frozen=True)
    result: DriftResult
    report: str | None = Field(None, description="The HTML report's path.")


def parse_time(value: str) -> datetime:
    """An ISO 8601 time, UTC when it names no zone; a clear error otherwise."""
    try:
        found = datetime.fromisoformat(value)
    except ValueError:
        raise ValueError(
            f"{value!r} is not an ISO 8601 time: give e.g. 2026-11-29T06:00 or "
            "2026-11-29T06:00:00+00:00"
        ) from None
    return found if found.tzinfo else found.replace(tzinfo=UTC)


def read_window(
    records: Iterator[dict[str, Any]],
    version: int | None,
    since: datetime,
    until: datetime,
    response_key: str,
    window: Sample,
) -> list[float]:
    """Add the `version`'s collected records of [since, until) to `window`, one request at a
    time; returns its answer scores before the window (the score reference, the latest
    BASELINE_SCORES). Records of other versions are skipped, and so are requests users did not
    send: a rollout's smoke and replayed requests (`routed: named`) and mirrored copies."""
    baseline: list[float] = []
    wanted = None if version is None else str(version)
    for record in records:
        if record.get("routed", "traffic") != "traffic":
            continue
        # the endpoint labels a deployment's version `name:version` (tasks/rollout.py `label`)
        if wanted is not None and str(record.get("version")).rpartition(":")[2] != wanted:
            continue
        try:
            at = parse_time(str(record.get("time")))
        except ValueError:
            continue
        outputs = record.get("outputs")
        if at < since:
            baseline.extend(answer_scores(outputs))
            del baseline[:-BASELINE_SCORES]
            continue
        if at >= until:
            continue
        status = int(record.get("status", 0))
        inputs = record.get("inputs") or [None]
        answers = outputs if isinstance(outputs, list) else [None] * len(inputs)
        for request, answer in zip(inputs, answers, strict=False):
            text = "\n".join(strings(request)) if request is not None else ""
            window.add(text, answer_text(answer, response_key), status)
        window.scores.extend(answer_scores(outputs))
    return baseline


def champion_reference(
    store: Store,
    version: ModelVersion,
    config: MonitorConfig,
    entities: frozenset[str],
    storage_options: dict[str, Any] | None,
) -> tuple[Sample, str]:
    """The champion's task, its test requests and reference answers (at most `limit`, a stable sample) and
    its training requests' vocabulary, from the split dataset its lineage names."""
    from trainer.data import read_split

    split_hash = version.lineage.datasets.get("split")
    if not split_hash:
        raise ValueError(
            f"{version.name} v{version.version} has no split dataset in its lineage: it was not "
            "registered by a tunegate run, so the monitor has no reference for it"
        )
    split = store.dataset_with_hash("split", split_hash)
    if split is None:
        raise ValueError(
            f"the split dataset {split_hash[:12]} of {version.name} v{version.version} is no "
            f"longer in the store {store.uri}: the monitor needs it as the reference"
        )
    spec = task_spec(split.task)
    train = read_split(split.uri, "train", 0, storage_options)
    known = vocabulary("\n".join(strings(spec.request_of(r))) for r in train)
    test = read_split(split.uri, "test", 0, storage_options)
    limit = config.reference_records
    test = stable_sample(test, limit, [str(r.get("id", i)) for i, r in enumerate(test)])
    reference = Sample(known, entities, config.sample_size)
    for record in test:
        answer = spec.reference_of(record)
        answer = answer[0] if isinstance(answer, list) and answer else answer
        reference.add("\n".join(strings(spec.request_of(record))), str(answer or ""))
    return reference, split.task


def monitor_model(
    store: Store,
    registry: ModelRegistry,
    model: str,
    config: MonitorConfig,
    entities: frozenset[str],
    since: datetime | None = None,
    until: datetime | None = None,
    endpoint_folder: Path | None = None,
    report_dir: Path | None = None,
    storage_options: dict[str, Any] | None = None,
    collected: CollectedTraffic | None = None,
) -> MonitorRun:
    """One window of `model`'s champion traffic against its reference; with `report_dir`, the
    HTML report is written there (`monitor-<model>-<until>.html`). The traffic: `collected`
    (tasks/traffic_sources.py) when given, else the local endpoint's folder."""
    champion = registry.alias(model, "champion")
    if champion is None:
        raise ValueError(f"{model} has no champion: nothing is served to monitor")
    until = until or datetime.now(UTC)
    since = since or until - timedelta(hours=config.window_hours)
    if collected is None:
        folder = endpoint_folder / COLLECTED if endpoint_folder else None
        collected = LocalCollected(folder, store.uri, model)
    records = collected.records(since, until)
    reference, task_name = champion_reference(store, champion, config, entities, storage_options)
    current = Sample(reference.known_words, entities, config.sample_size)
    baseline = read_window(
        records,
        champion.version,
        since,
        until,
        task_spec(task_name).response_key,
        current,
    )
    judged = len(current) >= config.min_requests
    signals, plots = (
        measure_drift(
            reference,
            current,
            config.signals,
            baseline,
            plots=report_dir is not None,
            chance=config.chance,
        )
        if judged
        else ([], "")
    )
    drifted = [s.name for s in signals if s.drift]
    if not judged:
        reason = (
            f"{len(current)} requests of v{champion.version} in the window, fewer than "
            f"monitor.min_requests ({config.min_requests}): not judged"
        )
        if unversioned := collected.read_counts().get("unversioned"):
            reason += (
                f" ({unversioned} collected requests carry no version label: their deployment "
                "predates it, deploy it again)"
            )
    else:
        reason = (
            f"drift in {', '.join(drifted)}" if drifted else "every signal within its threshold"
        )
    result = DriftResult(
        model=model,
        version=champion.version,
        since=since.isoformat(),
        until=until.isoformat(),
        requests=len(current),
        reference_records=len(reference),
        judged=judged,
        drift=bool(drifted),
        drifted=drifted,
        signals=signals,
        reason=reason,
        source=collected.source,
        read=collected.read_counts(),
    )
    return MonitorRun(result=result, report=_write(report_dir, result, plots))


def traffic_source(
    backends: Backends, model: str, config: MonitorConfig, azure: AzureStorageConfig
) -> CollectedTraffic:
    """Where `model`'s traffic is read (monitor.source)."""
    return TRAFFIC_SOURCES[config.source].traffic(backends, model, config.azureml, azure)


def served_models(backends: Backends, config: MonitorConfig, own_model: str) -> list[str]:
    """The models served where monitor.source reads that have a champion (`own_model`: the
    config's model, registry.model_name)."""
    names = TRAFFIC_SOURCES[config.source].served(backends, own_model)
    return [name for name in names if backends.registry.alias(name, "champion") is not None]


def _write(report_dir: Path | None, result: DriftResult, plots: str) -> str | None:
    if report_dir is None:
        return None
    report_dir.mkdir(parents=True, exist_ok=True)
    stamp = result.until.replace(":", "").replace("+0000", "Z")[:17]
    path = report_dir / f"monitor-{result.model}-{stamp}.html"
    path.write_text(drift_report_html(result, plots), encoding="utf-8")
    return str(path)


@task(name="monitor", task_run_name="monitor {model}", cache_policy=NONE)
def monitor_task(
    backends: Backends,
    model: str,
    config: MonitorConfig,
    entities: frozenset[str],
    since: datetime | None = None,
    report_dir: Path | None = None,
    azure: AzureStorageConfig | None = None,
) -> MonitorRun:
    """One window of one served model (its logic: `monitor_model`)."""
    store = backends.store
    collected = traffic_source(backends, model, config, azure or AzureStorageConfig())
    return monitor_model(
        store,
        backends.registry,
        model,
        config,
        entities,
        since=since,
        report_dir=report_dir,
        storage_options=store.storage_options,
        collected=collected,
    )
