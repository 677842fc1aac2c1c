"""`tunegate ui`: the MLflow UI on the store's runs and registered models.

Every `retrain` run is an MLflow run (flows/run_tracking.py); a local store keeps them in
`{store}/mlflow/mlflow.db` with their files under `{store}/mlflow/artifacts`. This serves both
with MLflow's own server (`mlflow server`) on this machine until Ctrl-C, at the address the runs
print and link from Prefect (http://127.0.0.1:5000 unless `tracking.ui_url` says otherwise), and
prints the model's experiment in MLflow's "Machine learning" view: experiments (one per model
name, tagged `mlflow.experimentKind=custom_model_development`), runs side by side (parameters, loss curves, base/candidate/champion metrics, the
gate's decision), their reports and loss plots, and the registered models with their aliases.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from pathlib import Path
from typing import Annotated

import typer

from cli.common import ConfigOpt, SetOpt, console, fail, load_cli_config, run_stage
from platforms import tracking

PortOpt = Annotated[int, typer.Option(help="The port the UI listens on.", min=1, max=65535)]
HostOpt = Annotated[
    str,
    typer.Option(help="The interface it listens on: this machine only unless you say otherwise."),
]


def ui(
    config: ConfigOpt = None,
    set: SetOpt = None,
    port: PortOpt = 5000,
    host: HostOpt = "127.0.0.1",
) -> None:
    """Open the MLflow UI on the store's runs and registered models (experiments per model name,
    runs compared side by side, loss curves, reports, aliases); Ctrl-C stops it.

    With `tracking.uri` set to an MLflow server, that server is the UI: its address is printed.
    """
    cfg = load_cli_config(config, set)
    backends = cfg.backends()
    uri = run_stage(lambda: backends.tracking_uri)
    if uri.startswith(("http://", "https://")):
        console.print(f"runs are tracked by the MLflow server at {uri}: open it in a browser")
        return
    if uri.startswith("azureml:"):
        console.print(
            "runs are tracked in the Azure ML workspace "
            f"{cfg.azureml.workspace.workspace_name or ''}: open it in Azure ML studio "
            "(Jobs and Models)"
        )
        return
    if not _free(host, port):
        fail(f"port {port} on {host} is in use (another `tunegate ui`?): choose one with --port")
    command = server_command(uri, backends.tracking_artifact_root, host, port)
    experiment = run_stage(lambda: model_experiment(uri, cfg.registry.name_for(cfg.task.value)))
    address = ui_url(host, port, experiment)
    console.print(f"MLflow UI on {uri}: [link={address}]{address}[/link]", soft_wrap=True)
    console.print("(Ctrl-C stops it)")
    # MLflow's job runner (GenAI evaluation jobs) would start a dozen consumer processes
    environment = {**os.environ, "MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false"}
    server = subprocess.Popen(command, start_new_session=True, env=environment)
    signal.signal(signal.SIGTERM, _exit_on_sigterm)  # a SIGTERM stops the server too
    try:
        code = server.wait()
    except (KeyboardInterrupt, SystemExit):
        code = 0
    finally:
        _stop(server)
    if code:
        fail(f"mlflow server exited with {code}", 1)


def ui_url(host: str, port: int, experiment: str | None = None) -> str:
    """The model's experiment (else the experiments page), in MLflow's "Machine learning" view:
    runs, parameters, metrics (MLflow 3 otherwise opens an experiment on its GenAI overview; its
    `mlflow.experimentKind` tag, set by tunegate, keeps it on runs)."""
    base = f"http://{host}:{port}"
    if experiment is None:
        return f"{base}/#/experiments?workflowType=machine_learning"
    return tracking.experiment_url(base, experiment)


def model_experiment(uri: str, model: str) -> str | None:
    """The id of the model's experiment (None before its first run), its kind set to model
    training when an older tunegate made it without."""
    mlflow_client = tracking.client(uri)
    if mlflow_client.get_experiment_by_name(model) is None:
        return None
    return tracking.experiment_id(mlflow_client, model, None)


def server_command(uri: str, artifact_root: Path | None, host: str, port: int) -> list[str]:
    """`mlflow server` on the tracking database `uri` (and the artifact folder of a local store),
    one worker, listening on `host:port`."""
    command = [sys.executable, "-m", "mlflow", "server", "--backend-store-uri", uri]
    if artifact_root is not None:
        command += ["--default-artifact-root", artifact_root.as_uri()]
    return [*command, "--host", host, "--port", str(port), "--workers", "1"]


def _exit_on_sigterm(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)


def _free(host: str, port: int) -> bool:
    with socket.socket() as probe:
        try:
            probe.bind((host, port))
        except OSError:
            return False
    return True


def _stop(server: subprocess.Popen[bytes]) -> None:
    """The server and its workers (its own process group): SIGTERM, then SIGKILL."""
    if server.poll() is not None:
        return
    os.killpg(server.pid, signal.SIGTERM)
    try:
        server.wait(timeout=10)
    except subprocess.TimeoutExpired:
        os.killpg(server.pid, signal.SIGKILL)
        server.wait()
