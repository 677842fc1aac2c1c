"""Where runs and registered models are tracked: MLflow, on a database.

A local store keeps MLflow's tracking and model-registry database at `{store}/mlflow/mlflow.db`
(SQLite: nothing to start, works offline) and run artifacts under `{store}/mlflow/artifacts`;
`tracking.uri` points anywhere else (an MLflow server, a database URL, Azure ML's
`azureml://` tracking URI, which MLflow opens through the azureml-mlflow plugin, a dependency:
it pins mlflow-skinny<=3.15.0, hence tunegate's MLflow 3.15.0). Unset with Azure ML training,
runs are tracked in the workspace's own MLflow (platforms/backends.py). `mlflow ui --backend-store-uri sqlite:///{store}/mlflow/mlflow.db`
(or `tunegate ui`) browses it.

A `retrain` run is one `TrackedRun` (`start_run`: found again by its flow run's id when that flow
run is retried or resumed): parameters (the config, `flat_params`), metrics and curves, tags,
text and file artifacts, a loss plot (`loss_curve_png`, matplotlib's Agg canvas: no display),
and its end status; flows/run_tracking.py says what goes in. The trainer logs into the same run
(trainer/tracking.py).

A new SQLite database is a copy of an empty one migrated once per MLflow version and kept in the
user's cache (`trainer.cache.user_cache`, `~/.cache/tunegate/`): MLflow's own migrations take
seconds, a copy milliseconds.
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import os
import re
import shutil
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import quote

from pydantic import BaseModel, ConfigDict, Field, field_validator

from trainer.cache import user_cache

if TYPE_CHECKING:
    from mlflow import MlflowClient

DB_FILE = "mlflow.db"
TRACKING_DIR = "mlflow"


def local_tracking_dir(store: Path) -> Path:
    return Path(store) / TRACKING_DIR


def local_tracking_uri(store: Path) -> str:
    """The SQLite URI of a local store's MLflow database (created on first use)."""
    return f"sqlite:///{(local_tracking_dir(store) / DB_FILE).resolve()}"


def local_artifact_root(store: Path) -> Path:
    """Where runs and registered versions of a local store keep their files."""
    return (local_tracking_dir(store) / "artifacts").resolve()


def _quiet_mlflow() -> None:
    """MLflow's INFO lines about creating tables and alembic's migration steps are noise here
    (set after the import: importing mlflow configures its logger)."""
    import mlflow  # noqa: F401

    for name in ("mlflow", "alembic"):
        logging.getLogger(name).setLevel(logging.WARNING)


def _empty_database() -> Path:
    """A migrated, empty MLflow database of the installed MLflow version (made once)."""
    import mlflow
    from mlflow import MlflowClient

    template = user_cache() / f"mlflow-empty-{mlflow.__version__}.db"
    if template.exists():
        return template
    template.parent.mkdir(parents=True, exist_ok=True)
    scratch = template.with_name(f".{template.name}.{uuid.uuid4().hex[:8]}")
    try:
        MlflowClient(tracking_uri=f"sqlite:///{scratch}").search_experiments()
        # the store opened above keeps SQLAlchemy engines; the file is complete once created
        os.replace(scratch, template)
    finally:
        scratch.unlink(missing_ok=True)
    return template


def ensure_local_database(store: Path) -> str:
    """The local store's tracking URI, its database created (from the migrated template) when
    missing."""
    _quiet_mlflow()
    db = local_tracking_dir(store) / DB_FILE
    if not db.exists():
        db.parent.mkdir(parents=True, exist_ok=True)
        scratch = db.with_name(f".{DB_FILE}.{uuid.uuid4().hex[:8]}")
        shutil.copyfile(_empty_database(), scratch)
        try:
            os.link(scratch, db)  # atomic, and never replaces one another process created
        except FileExistsError:
            pass
        finally:
            scratch.unlink(missing_ok=True)
    else:
        _check_schema(db)
    return local_tracking_uri(store)


def _check_schema(db: Path) -> None:
    """Refuse, naming the fix, a database whose schema the installed MLflow does not know: one
    a newer MLflow migrated (tunegate had MLflow 3.17 before it took 3.15.0 for azureml-mlflow),
    which MLflow would ask to "upgrade", though no migration of this version leads back."""
    import sqlite3

    import mlflow

    try:
        with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as connection:
            [(revision,)] = connection.execute("SELECT version_num FROM alembic_version")
    except (sqlite3.Error, ValueError):
        return  # not an MLflow database yet (or locked): MLflow says what is wrong with it
    migrations = Path(mlflow.__file__).parent / "store" / "db_migrations" / "versions"
    if not any(migrations.glob(f"{revision}_*.py")):
        raise ValueError(
            f"{db} was written by a newer MLflow than this one ({mlflow.__version__}; its schema "
            f"revision {revision} is unknown here): move {db.parent} aside (its runs and "
            "registered versions stay readable with that MLflow) and run again, or set "
            "tracking.uri to an MLflow server"
        )


def client(uri: str) -> MlflowClient:
    """An MLflow client whose tracking and registry are both at `uri`."""
    from mlflow import MlflowClient

    _quiet_mlflow()
    return MlflowClient(tracking_uri=uri, registry_uri=uri)


def experiment_id(mlflow_client: MlflowClient, name: str, artifact_root: Path | None) -> str:
    """The id of experiment `name` (one per model name), created when missing; on a local store
    its artifacts live under `artifact_root/{name}` (MLflow's own default is `./mlruns` of
    whatever folder the process started in)."""
    from mlflow.exceptions import MlflowException

    found = mlflow_client.get_experiment_by_name(name)
    if found is not None:
        if found.tags.get(EXPERIMENT_KIND) is None:  # made before tunegate said its kind
            with contextlib.suppress(MlflowException):  # a store that takes no tags: its view
                mlflow_client.set_experiment_tag(found.experiment_id, EXPERIMENT_KIND, TRAINING)
        return found.experiment_id
    location = None if artifact_root is None else (Path(artifact_root) / name).as_uri()
    try:
        return mlflow_client.create_experiment(
            name, artifact_location=location, tags={EXPERIMENT_KIND: TRAINING}
        )
    except MlflowException:  # created meanwhile by another run
        found = mlflow_client.get_experiment_by_name(name)
        if found is None:
            raise
        return found.experiment_id


# MLflow 3's UI opens an experiment by its kind: without this tag on GenAI's traces overview, with
# it on the runs of a model being trained ("Machine learning": runs, parameters, metrics).
EXPERIMENT_KIND = "mlflow.experimentKind"
TRAINING = "custom_model_development"
LOCAL_UI = "http://127.0.0.1:5000"  # where `tunegate ui` serves a local store's runs


def ui_base(tracking_uri: str, ui_url: str | None = None) -> str | None:
    """The address of the MLflow UI that shows runs tracked at `tracking_uri`: `ui_url` when
    set, an MLflow server's own, `LOCAL_UI` for a local database; None for an Azure ML
    workspace (its runs are seen in Azure ML studio)."""
    if ui_url:
        return ui_url.rstrip("/")
    if tracking_uri.startswith(("http://", "https://")):
        return tracking_uri.rstrip("/")
    if tracking_uri.startswith("azureml:"):
        return None
    return LOCAL_UI


def experiment_url(base: str, experiment: str) -> str:
    """An experiment's runs in the MLflow UI, in its training view."""
    return f"{base}/#/experiments/{experiment}/runs?workflowType=machine_learning"


def run_url(base: str, experiment: str, run_id: str) -> str:
    return f"{base}/#/experiments/{experiment}/runs/{run_id}"


def model_version_url(base: str, name: str, version: int | str) -> str:
    return f"{base}/#/models/{quote(name, safe='')}/versions/{version}"


class TrackingConfig(BaseModel):
    """Where runs are tracked (and, with the local registry, models registered)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    uri: str | None = Field(
        None,
        description="An MLflow tracking URI (http://host:5000, a database URL, an azureml:// "
        "URI). Unset: the local store's SQLite database ({store}/mlflow/mlflow.db), or the Azure "
        "ML workspace's own MLflow tracking when train.backend is azureml.",
    )
    ui_url: str | None = Field(
        None,
        description="The address people open the MLflow UI at, for the links a run prints and "
        "puts in Prefect (its MLflow run, its model version). Unset: the tracking server's own "
        "(an http(s) tracking.uri), else http://127.0.0.1:5000, where `tunegate ui` serves a "
        "local store.",
    )

    @field_validator("ui_url")
    @classmethod
    def _an_address(cls, url: str | None) -> str | None:
        if url is not None and not url.startswith(("http://", "https://")):
            raise ValueError(f"tracking.ui_url must be an http(s) address, got {url!r}")
        return url


# the tag that finds the MLflow run of a Prefect flow run again (a retried or resumed flow run)
FLOW_RUN_TAG = "tunegate.flow_run_id"
RunStatus = Literal["FINISHED", "FAILED", "KILLED"]


@dataclass(frozen=True)
class TrackedRun:
    """One MLflow run: a `retrain` flow run's parameters, curves, metrics, tags and reports."""

    client: MlflowClient
    uri: str
    experiment_id: str
    run_id: str
    ui: str | None = None  # the MLflow UI's address (`ui_base`), None: Azure ML studio's

    def log_params(self, params: Mapping[str, Any]) -> None:
        """Log parameters not logged yet (a resumed run keeps those it has: MLflow refuses to
        change a logged one); values longer than MLflow takes are cut."""
        from mlflow.entities import Param

        logged = self.client.get_run(self.run_id).data.params
        fresh = [
            Param(key, _param_value(value)) for key, value in params.items() if key not in logged
        ]
        for start in range(0, len(fresh), _BATCH):
            self.client.log_batch(self.run_id, params=fresh[start : start + _BATCH])

    def log_metrics(self, metrics: Mapping[str, float | int | bool], step: int = 0) -> None:
        """Numbers at `step` (booleans as 0/1); a metric logged again adds a point to its curve."""
        from mlflow.entities import Metric

        now = int(time.time() * 1000)
        points = [
            Metric(key, float(value), now, step)
            for key, value in metrics.items()
            if isinstance(value, int | float) and math.isfinite(value)
        ]
        for start in range(0, len(points), _BATCH):
            self.client.log_batch(self.run_id, metrics=points[start : start + _BATCH])

    def log_curve(self, key: str, points: Sequence[tuple[int, float]]) -> None:
        """A metric's whole curve: (step, value) pairs."""
        from mlflow.entities import Metric

        now = int(time.time() * 1000)
        metrics = [Metric(key, float(value), now, int(step)) for step, value in points]
        for start in range(0, len(metrics), _BATCH):
            self.client.log_batch(self.run_id, metrics=metrics[start : start + _BATCH])

    def history(self, key: str) -> list[tuple[int, float]]:
        """The (step, value) points of a logged metric (empty when it was never logged)."""
        return [(m.step, m.value) for m in self.client.get_metric_history(self.run_id, key)]

    def set_tags(self, tags: Mapping[str, Any]) -> None:
        from mlflow.entities import RunTag

        found = [RunTag(key, str(value)) for key, value in tags.items() if value is not None]
        if found:
            self.client.log_batch(self.run_id, tags=found)

    def log_text(self, text: str, artifact_file: str) -> None:
        """A text artifact (a report's markdown or JSON) at `artifact_file` in the run."""
        self.client.log_text(self.run_id, text, artifact_file)

    def log_file(self, path: Path, artifact_path: str | None = None) -> None:
        """A file of this machine copied into the run's artifacts (under `artifact_path`)."""
        self.client.log_artifact(self.run_id, str(path), artifact_path)

    def end(self, status: RunStatus) -> None:
        """The run ends: FINISHED, FAILED or KILLED (never left RUNNING)."""
        self.client.set_terminated(self.run_id, status)

    @property
    def link(self) -> str:
        """The run's page: in the MLflow UI (a local store's is served by `tunegate ui`), or in
        Azure ML studio for a workspace's tracking."""
        if self.ui is not None:
            return run_url(self.ui, self.experiment_id, self.run_id)
        from trainer.tracking import workspace_id

        workspace = workspace_id(self.uri)
        if workspace:  # the workspace's tracking: the run's page in Azure ML studio
            return f"https://ml.azure.com/runs/{self.run_id}?wsid={workspace}"
        return f"MLflow run {self.run_id} (experiment {self.experiment_id})"

    @property
    def served_by_tunegate_ui(self) -> bool:
        """Whether its address is the local UI's, which is up only while `tunegate ui` runs."""
        return self.ui == LOCAL_UI


_BATCH = 100  # MLflow takes at most 100 params or tags and 1000 metrics in one batch


def start_run(
    uri: str,
    experiment: str,
    run_name: str | None,
    flow_run_id: str | None,
    tags: Mapping[str, Any],
    artifact_root: Path | None = None,
    ui_url: str | None = None,
) -> TrackedRun:
    """The MLflow run of a flow run in experiment `experiment` (one per model name): the one
    tagged with `flow_run_id` when that flow run already has one (a retried or resumed flow run
    goes on in it, RUNNING again), else a new run named `run_name`, with `tags`."""
    mlflow_client = client(uri)
    experiment_key = experiment_id(mlflow_client, experiment, artifact_root)
    found = []
    if flow_run_id:
        found = mlflow_client.search_runs(
            [experiment_key], f"tags.`{FLOW_RUN_TAG}` = '{flow_run_id}'", max_results=1
        )
    if found:
        run_id = found[0].info.run_id
        mlflow_client.update_run(run_id, "RUNNING")
    else:
        run_id = mlflow_client.create_run(experiment_key, run_name=run_name).info.run_id
    run = TrackedRun(mlflow_client, uri, experiment_key, run_id, ui_base(uri, ui_url))
    run.set_tags({**tags, FLOW_RUN_TAG: flow_run_id})
    return run


_FIELD_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_\-]*")


def flat_params(data: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """A nested mapping (a validated config) as `section.field` keys; lists stay one value, and
    so does a mapping keyed by what a user names (inputs: `ingest.datasheets`,
    `screen.profiles`), whose keys MLflow would refuse in a parameter's name (`books/`,
    `data/*.jsonl`)."""
    flat: dict[str, Any] = {}
    for key, value in data.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping) and value and all(_FIELD_NAME.fullmatch(k) for k in value):
            flat.update(flat_params(value, f"{name}."))
        else:
            flat[name] = value
    return flat


def _param_value(value: Any) -> str:
    from mlflow.utils.validation import MAX_PARAM_VAL_LENGTH

    # as MLflow writes a value (str()), a list or mapping as JSON
    text = json.dumps(value, default=str) if isinstance(value, list | dict) else str(value)
    return text if len(text) <= MAX_PARAM_VAL_LENGTH else text[: MAX_PARAM_VAL_LENGTH - 1] + "…"


def loss_curve_png(history: Sequence[Mapping[str, Any]], path: Path) -> Path | None:
    """A plot of the training loss (and the evaluation loss, when logged) by step, from a
    trainer's log history (`trainer_state.json`'s `log_history`, or metrics.json's
    `loss_curve`); None when the history holds no loss."""
    curves = {
        name: [(h["step"], h[key]) for h in history if key in h and "step" in h]
        for name, key in (("training loss", "loss"), ("evaluation loss", "eval_loss"))
    }
    if not curves["training loss"]:
        return None
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(7, 4), dpi=100)
    FigureCanvasAgg(figure)  # a figure of its own: no pyplot state, no display
    axes = figure.add_subplot()
    for (name, points), style in zip(curves.items(), ("-", "o--"), strict=True):
        if points:
            steps, values = zip(*points, strict=True)
            axes.plot(steps, values, style, label=name)
    axes.set_xlabel("step")
    axes.set_ylabel("loss")
    axes.set_title("Training loss")
    axes.grid(alpha=0.3)
    axes.legend()
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, format="png")
    return path
