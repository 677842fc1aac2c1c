"""The MLflow run the trainer logs into: the flow run's own, when the training backend names one.

A `retrain` run is one MLflow run (platforms/tracking.py); its training backend hands the
trainer that run's tracking URI and id in the job's variables (`job_variables`):
`TUNEGATE_MLFLOW_TRACKING_URI` and `TUNEGATE_MLFLOW_RUN_ID`, not MLflow's own `MLFLOW_RUN_ID`:
an Azure ML job is an MLflow run of its own, and Azure ML sets `MLFLOW_TRACKING_URI` and
`MLFLOW_RUN_ID` to the job's run over any variable the job declares. The trainer's loss and
evaluation curves then go live into the flow's run, beside its parameters and metrics, from a
local subprocess and an Azure ML job alike. Without them the trainer logs as transformers does
(to `MLFLOW_TRACKING_URI`, when set: on Azure ML, the job's own run).

On Azure ML with the workspace's own tracking (the default there), the URI handed is the
workspace's `azureml://` one, which the azureml-mlflow plugin opens: the job then logs through
its own `MLFLOW_TRACKING_URI` (the same workspace's, `same_workspace`) and the run token Azure ML
gives it (`MLFLOW_TRACKING_TOKEN`, read by the plugin while Azure ML's `MLFLOW_RUN_ID` is still
set): no credential of the job's own is needed. Any other URI (an MLflow server, the store's
database on this machine) is used as handed.

`attached_run()` opens that run before the `Trainer` exists, so transformers' `MLflowCallback`
finds it active: it logs the curves into it, starts no run of its own and ends none (MLflow's
`MLFLOW_RUN_ID` would make the callback end the run when training ends, and its evaluation
after training would then start a new run). The callback's own parameters (every
`TrainingArguments` field and the model's config) are not logged: names such as
`learning_rate` would say less than the flow's `train.learning_rate` and could never change on a
resumed run; the trainer's resolved arguments are logged as `trainer.<name>` instead. The run
is handed back RUNNING: the flow ends it once evaluation and registration are done.

Nothing here imports mlflow unless a run is attached (a job without mlflow trains all the same).
"""

from __future__ import annotations

import importlib.util
import os
import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlsplit

URI_VARIABLE = "TUNEGATE_MLFLOW_TRACKING_URI"
RUN_VARIABLE = "TUNEGATE_MLFLOW_RUN_ID"
PARAM_PREFIX = "trainer."


def job_variables(uri: str | None, run_id: str | None) -> dict[str, str]:
    """The variables that hand the trainer a flow's MLflow run (none without one)."""
    if not uri or not run_id:
        return {}
    return {URI_VARIABLE: uri, RUN_VARIABLE: run_id}


def given_run() -> tuple[str, str] | None:
    """The (tracking URI, run id) a training backend handed this process, if any: the job's
    own URI where both are the same Azure ML workspace's (it carries the job's token)."""
    uri, run_id = os.environ.get(URI_VARIABLE), os.environ.get(RUN_VARIABLE)
    if not uri or not run_id:
        return None
    own = os.environ.get("MLFLOW_TRACKING_URI")
    return (own if own and same_workspace(own, uri) else uri), run_id


def same_workspace(first: str, second: str) -> bool:
    """Whether two `azureml://` tracking URIs are one workspace's (the same subscription,
    resource group and workspace; the host and query may differ)."""
    keys = [workspace_id(uri) for uri in (first, second)]
    return keys[0] is not None and keys[0].lower() == (keys[1] or "").lower()


def workspace_id(uri: str) -> str | None:
    """The workspace's ARM id (`/subscriptions/.../workspaces/NAME`) in an `azureml://`
    tracking URI; None for any other URI."""
    if not uri.startswith("azureml:"):
        return None
    found = _WORKSPACE_PATH.search(urlsplit(uri).path)
    return found[0] if found else None


_WORKSPACE_PATH = re.compile(
    r"/subscriptions/[^/]+/resourceGroups/[^/]+/providers/"
    r"Microsoft\.MachineLearningServices/workspaces/[^/?]+",
    re.IGNORECASE,
)


@contextmanager
def attached_run(params: Mapping[str, Any], rank: int) -> Iterator[str | None]:
    """Inside: the given run is MLflow's active run on rank 0 (its id yielded; None when no run
    was given, mlflow is not installed, or on another rank), with `params` logged as
    `trainer.<name>`; the callback's own parameters are off. On the way out the run is handed
    back to the flow, still RUNNING, and the variables are as they were."""
    given = given_run()
    if given is None or importlib.util.find_spec("mlflow") is None:
        yield None
        return
    uri, run_id = given
    if uri.startswith("azureml:"):
        _open_store(uri)  # before MLFLOW_RUN_ID goes: the plugin reads the job's token with it
    saved = {name: os.environ.get(name) for name in _SET}
    os.environ["MLFLOW_TRACKING_URI"] = uri  # where transformers' callback logs
    os.environ.pop("MLFLOW_RUN_ID", None)  # else the callback starts (and ends) a run itself
    os.environ["MLFLOW_MAX_LOG_PARAMS"] = "0"  # the callback's parameters: see the docstring
    try:
        if rank != 0:  # only the main process logs (the callback logs on rank 0 only)
            yield None
        else:
            with _active(uri, run_id, params):
                yield run_id
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


_SET = ("MLFLOW_TRACKING_URI", "MLFLOW_RUN_ID", "MLFLOW_MAX_LOG_PARAMS")


def _open_store(uri: str) -> None:
    """Open the tracking store of `uri` now (an MLflow client builds its store when created):
    azureml-mlflow keeps the workspace connection it makes first for each URI, from Azure ML's
    `MLFLOW_TRACKING_URI`, `MLFLOW_TRACKING_TOKEN` and `MLFLOW_RUN_ID` when a job has them all,
    else from the machine's Azure identity."""
    from mlflow import MlflowClient

    MlflowClient(tracking_uri=uri, registry_uri=uri)


@contextmanager
def _active(uri: str, run_id: str, params: Mapping[str, Any]) -> Iterator[None]:
    import mlflow

    mlflow.set_tracking_uri(uri)
    run = mlflow.start_run(run_id=run_id)
    try:
        logged = run.data.params  # a retried job logs nothing twice
        mlflow.log_params(
            {
                PARAM_PREFIX + name: value
                for name, value in params.items()
                if PARAM_PREFIX + name not in logged
            }
        )
        yield
    finally:
        mlflow.end_run(status="RUNNING")  # the flow ends it, not the trainer
