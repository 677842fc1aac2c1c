"""Where runs and registered models are tracked: MLflow, on a database.

A local store keeps MLflow's tracking and model-registry database at `{store}/mlflow/mlflow.db`
(SQLite: nothing to start, works offline) and run artifacts under `{store}/mlflow/artifacts`;
`tracking.uri` points anywhere else (an MLflow server, a database URL, Azure ML's
`azureml://` tracking URI). `mlflow ui --backend-store-uri sqlite:///{store}/mlflow/mlflow.db`
(or `tunegate ui`) browses it.

A new SQLite database is a copy of an empty one migrated once per MLflow version and kept in the
user's cache (`~/.cache/tunegate/`): MLflow's own migrations take seconds, a copy milliseconds.
"""

from __future__ import annotations

import logging
import os
import shutil
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

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


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "tunegate"


def _empty_database() -> Path:
    """A migrated, empty MLflow database of the installed MLflow version (made once)."""
    import mlflow
    from mlflow import MlflowClient

    template = _cache_dir() / f"mlflow-empty-{mlflow.__version__}.db"
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
    return local_tracking_uri(store)


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
        return found.experiment_id
    location = None if artifact_root is None else (Path(artifact_root) / name).as_uri()
    try:
        return mlflow_client.create_experiment(name, artifact_location=location)
    except MlflowException:  # created meanwhile by another run
        found = mlflow_client.get_experiment_by_name(name)
        if found is None:
            raise
        return found.experiment_id
