"""The `tunegate` command: the root app and its command groups (console script `cli.main:app`).

    tunegate run | ingest | screen | split     cli/stages.py
    tunegate approve | reject, review show     cli/review.py
    tunegate erase                             cli/erase.py  (a record out of the store)
    tunegate metrics                           cli/metrics.py
    tunegate predict                           cli/predict.py
    tunegate rollback, tunegate models ...     cli/models.py
    tunegate data ...                          cli/data.py
    tunegate monitor                           cli/monitor.py  (drift of a served model)
    tunegate store verify                      cli/store.py
    tunegate ui                                cli/ui.py  (MLflow's UI on the tracked runs)
    tunegate config ...                        cli/config.py
    tunegate endpoint ...                      cli/endpoint.py  (model serving)
    tunegate endpoint list | stop              cli/endpoint_local.py  (its processes)
    tunegate azureml ...                       cli/azureml.py
    tunegate deployments ...                   cli/deployments.py  (Prefect deployments)

Shared options, the console and the error exits are in cli/common.py.
"""

from __future__ import annotations

import logging
import os

os.environ.setdefault("TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS", "")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")  # offline: no telemetry
# Without PREFECT_API_URL each run starts a temporary API server; on a busy machine (or beside
# another run starting its own) that takes longer than Prefect's 20 s default.
os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "180")
# The stages' own progress lines ("ingest: 595 accepted ...", "waiting for ... lock", the
# rollout's steps) go to the console and to the run's logs in the Prefect UI.
os.environ.setdefault("PREFECT_LOGGING_EXTRA_LOGGERS", "tasks,platforms,flows")
# Outside a flow run (`tunegate ingest`, `split`, ...) those lines have no run to go to: Prefect
# would print a UserWarning for each one instead of the line alone.
os.environ.setdefault("PREFECT_LOGGING_TO_API_WHEN_MISSING_FLOW", "ignore")

import typer

from cli import erase, metrics, models, monitor, predict, review, stages, ui
from cli.azureml import azureml_app
from cli.config import config_app
from cli.data import data_app
from cli.deployments import apply, deployments_app, deprecated_alias, serve
from cli.endpoint import endpoint_app
from cli.endpoint_local import endpoint_list, endpoint_stop
from cli.models import models_app
from cli.review import review_app
from cli.store import store_app

for _name in ("tasks", "platforms", "flows"):  # their INFO lines, not only warnings
    logging.getLogger(_name).setLevel(logging.INFO)

app = typer.Typer(
    help="tunegate: retrain language models safely (screened data, human approval, gates).",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
for command in (
    stages.run,
    stages.ingest,
    stages.screen,
    stages.split,
    review.approve,
    review.reject,
    erase.erase,
    metrics.metrics,
    predict.predict,
    models.rollback,
    monitor.monitor,
    ui.ui,
):
    app.command()(command)
app.add_typer(data_app, name="data")
app.add_typer(config_app, name="config")
app.add_typer(models_app, name="models")
app.add_typer(store_app, name="store")
app.add_typer(review_app, name="review")
endpoint_app.command("list")(endpoint_list)
endpoint_app.command("stop")(endpoint_stop)
app.add_typer(endpoint_app, name="endpoint")
app.add_typer(azureml_app, name="azureml")
app.add_typer(deployments_app, name="deployments")
# The names before `tunegate deployments`, for one release.
app.command("serve", hidden=True)(deprecated_alias("serve", "serve", serve))
app.command("deploy", hidden=True)(deprecated_alias("deploy", "apply", apply))


if __name__ == "__main__":
    app()
