"""Write the Azure ML entities of a run as YAML that `az ml ... create -f` accepts, without credentials.

The folder holds `compute.yml`, `job.yml`, `evaluate-job.yml` (the evaluation job of that
training job's model: base and candidate predicted on the test split), `endpoint.yml`,
`deployment.yml`, the code they
upload (`train-code/`, `eval-code/` (the trainer, the screen and the run's `screen.json`: the
evaluation job screens the candidate's outputs), `serve-code/`) and, unless the config names other containers, the
tunegate environments' build contexts (`environment/` for the job, `serving-environment/` for the
deployment, with Azure ML's inference server: each a `Dockerfile` and a `requirements.txt` at
constraints.txt's pins) with their YAML (`environment.yml`, `serving-environment.yml`), paths
relative to the YAML files, so it can be copied and submitted from anywhere. When the training data is in an `az://` store, `datastore.yml` is the
credential-less datastore over its container that the job reads it through (unless
azureml.create_datastore is false: then that datastore must exist). For a split dataset,
`data.yml` registers it as the data asset the jobs read (`<data_asset>:<content hash>`, as a run
registers it).

`model.yml` is the model version the deployment serves (`<model_name>:<version>`, the `model`
reference), registered from a job's output by reference: the training job's model folder as a
`custom_model`.

`next_steps` is the order a person runs them in (`steps.sh`): environments, datastore, data,
compute, the training job, its evaluation job, the model (`model.yml`), the endpoint and its
deployment; every command names the workspace (`--resource-group`,
`--workspace-name`), none relies on `az configure --defaults`. Run by hand, they skip the
approval and the gate that `tunegate run` applies (`BANNER`).

With `azureml.model_type: mlflow_model` the deployment names no code or environment (Azure ML's
no-code MLflow deployment of the model it names): no `serve-code/` or serving environment. Its
model must then be an MLflow model, which no tunegate process is there to build between the
jobs (a run's registry builds it from the downloaded model folder): the evaluation job writes
the candidate as one (`serving.mlflow_model`, its code staged with `serving/`) to its
`mlflow_model` output, of type `mlflow_model`, and `model.yml` registers that output as an
`mlflow_model`.

A deployment that collects its requests and answers also gets `monitor-schedule.yml`, Azure ML's
model-monitoring schedule over what it collects (platforms/azureml/monitoring.py), created after
the deployment.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

import yaml
from azure.ai.ml.entities import Environment, Model, Resource

from platforms.azureml import datastores, entities, online_entities
from platforms.azureml.config import AzureMLConfig, WorkspaceConfig
from platforms.azureml.environment import TRAINING, EnvSpec, serving_spec, write_context
from platforms.azureml.monitoring import MonitorSpec, monitor_schedule
from platforms.blob import is_azure
from platforms.training import TrainSpec

TRAIN_CODE = "train-code"
EVAL_CODE = "eval-code"
SERVE_CODE = "serve-code"


def export(
    config: AzureMLConfig,
    spec: TrainSpec,
    out_dir: Path,
    data: str,
    model: str,
    deployment: str = "blue",
    storage_account: str | None = None,
    data_version: str | None = None,
    screen: dict[str, Any] | None = None,
    monitor: MonitorSpec | None = None,
) -> dict[str, Path]:
    """Write the YAML files (and staged code) into `out_dir`; returns {kind: path}. `screen`:
    the run's screen config as JSON, which the evaluation job screens the candidate's outputs
    under (None: the screen's defaults). `monitor`: the monitoring schedule's settings, written
    to `monitor-schedule.yml` when the deployment collects its traffic (None: not written).

    `data` in an `az://` store is read through a datastore over its container: written to
    `datastore.yml` over `storage_account` (azureml.datastore_account wins; without either, a
    ValueError naming them), unless azureml.create_datastore is false. With `data_version` (the
    split's content hash), `data` is a split folder: `data.yml` registers it as
    `<data_asset>:<version>`, which the jobs read."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written: dict[str, Path] = {}
    if is_azure(data):
        name = datastores.datastore_name(data, config.datastore)
        if config.create_datastore:
            account = config.datastore_account or storage_account
            if account is None:
                raise ValueError(
                    f"{data} is read through a datastore over container "
                    f"{datastores.container_of(data)}, whose storage account is unknown: set "
                    "azure.account_name or azureml.datastore_account"
                )
            datastore = datastores.blob_datastore(name, account, datastores.container_of(data))
            written["datastore"] = _write(datastore, out_dir / "datastore.yml")
        data = datastores.datastore_uri(data, name)
    if data_version is not None:
        source = data if "://" in data else str(Path(data).resolve())
        asset = entities.data_asset(
            config.data_asset, data_version, source, f"tunegate split {data_version}"
        )
        written["data"] = _write(asset, out_dir / "data.yml")
        data = f"azureml:{config.data_asset}:{data_version}"
    train_code = entities.stage_training_code(out_dir / TRAIN_CODE)
    # an MLflow model's deployment has no scoring code or environment of its own; the evaluation
    # job writes the MLflow model it deploys
    custom = config.model_type == "custom_model"
    serve_code = None
    if custom:
        serve_code = entities.stage_code(
            out_dir / SERVE_CODE, entities.SERVING_PACKAGES, score_script=True
        )
    serving = serving_spec(config.endpoint.gpu)  # onnxruntime-gpu on GPU instance types
    specs = (TRAINING, serving) if custom else (TRAINING,)
    contexts = {e: write_context(out_dir / e.folder, e) for e in specs}
    environments = {}  # the tunegate environments: their own YAML, referenced by name:version
    kinds = [("job", config.environment, TRAINING)]
    if custom:
        kinds.append(("deployment", config.endpoint.environment, serving))
    for kind, env_config, env_spec in kinds:
        env = entities.environment(env_config, contexts[env_spec], env_spec)
        if isinstance(env, Environment) and env.name == env_spec.name:
            path = out_dir / f"{env_spec.folder}.yml"
            written[env_spec.folder] = _write(env, path, env_spec=env_spec)
            environments[kind] = f"azureml:{env.name}:{env.version}"
    job = entities.training_job(
        spec, config, train_code, data, env_context=contexts[TRAINING]
    )._to_job()
    written["compute"] = _write(entities.compute_cluster(config.compute), out_dir / "compute.yml")
    written["job"] = _write(job, out_dir / "job.yml", f"./{TRAIN_CODE}", environments.get("job"))
    # The evaluation job of that training job's output (no champion yet: `tunegate run` adds the
    # registered champion when there is one).
    evaluation = entities.evaluation_job(
        config,
        entities.stage_evaluation_code(out_dir / EVAL_CODE, screen, mlflow_output=not custom),
        data,
        entities.job_output(spec.name),
        None,
        spec.args.get("model"),
        name=evaluation_name(spec.name),
        env_context=contexts[TRAINING],
        mlflow_output=not custom,
    )._to_job()
    written["evaluate-job"] = _write(
        evaluation, out_dir / "evaluate-job.yml", f"./{EVAL_CODE}", environments.get("job")
    )
    written["model"] = _write(registered_model(config, spec.name, model), out_dir / "model.yml")
    written["endpoint"] = _write(
        online_entities.online_endpoint(config.endpoint), out_dir / "endpoint.yml"
    )
    online = online_entities.online_deployment(
        deployment,
        config.endpoint,
        model,
        serve_code,
        {"tunegate.model": model},
        contexts.get(serving),
    )
    written["deployment"] = _write(
        online,
        out_dir / "deployment.yml",
        f"./{SERVE_CODE}" if custom else None,
        environments.get("deployment"),
    )
    if monitor is not None and online.data_collector is not None:
        schedule = monitor_schedule(monitor, online.endpoint_name, deployment, data, model)
        written["monitor"] = _write(schedule, out_dir / "monitor-schedule.yml")
    return written


def evaluation_name(job_name: str) -> str:
    """The exported evaluation job of training job `job_name`."""
    return f"eval-{job_name}"


def registered_model(config: AzureMLConfig, job_name: str, model: str) -> Model:
    """The version `model` (`azureml:<name>:<version>`, what the deployment serves) from
    training job `job_name`: its model output as a custom model, or with
    azureml.model_type mlflow_model, its evaluation job's MLflow model output as an MLflow
    model (`entities.evaluation_job`)."""
    found = re.fullmatch(r"azureml:([^:@/]+):([^:@/]+)", model)
    if found is None:
        raise ValueError(f"the deployed model must be azureml:<name>:<version>, got {model}")
    source = entities.job_output(job_name)
    if config.model_type == "mlflow_model":
        source = entities.job_output(evaluation_name(job_name), entities.MLFLOW_OUTPUT)
    asset = entities.model_asset(
        found[1], source, {"training_job": job_name}, {}, config.model_type
    )
    asset.version = found[2]
    return asset


BANNER = (
    "Running these commands by hand skips tunegate's approval and gate: nothing checks that a "
    "person approved the data, nor that the model beats the base model and the champion before "
    "it is registered and deployed. `tunegate run` with train.backend: azureml submits the same "
    "jobs after the approval, and registers and deploys only a model that passed the gate."
)


def workspace_flags(workspace: WorkspaceConfig) -> tuple[list[str], str | None]:
    """The `az ml` flags naming the workspace (`--subscription`, `--resource-group`,
    `--workspace-name`), and what is missing when the config does not say (its placeholders then
    stand in the flags)."""
    try:
        subscription, group, name = workspace.resolved()
    except ValueError as error:
        return ["--resource-group", "<resource-group>", "--workspace-name", "<workspace>"], str(
            error
        )
    return [
        *("--subscription", subscription),
        *("--resource-group", group),
        *("--workspace-name", name),
    ], None


def next_steps(
    written: dict[str, Path], config: AzureMLConfig, job_name: str, workspace: list[str]
) -> list[str]:
    """The commands that take the exported files from an empty workspace to a serving
    deployment, in order, each naming the workspace; `#` lines say what a step waits for."""
    flags = shlex.join(workspace)
    evaluation = evaluation_name(job_name)
    steps = [
        f"az ml environment create -f {path.name} {flags}"
        for kind, path in written.items()
        if kind in ("environment", "serving-environment", "serving-environment-gpu")
    ]
    if "datastore" in written:
        steps.append(f"az ml datastore create -f datastore.yml {flags}")
    if "data" in written:
        steps.append(f"az ml data create -f data.yml {flags}")
    else:
        steps += [
            f"# the jobs read azureml:{config.data_asset}@latest: register a split folder first:",
            f"# az ml data create --name {config.data_asset} --version <its content hash> "
            f"--type uri_folder --path <split folder> {flags}",
        ]
    steps += [
        f"az ml compute create -f compute.yml {flags}",
        f"az ml job create -f job.yml {flags}",
        f"az ml job stream --name {job_name} {flags}  # until the training job ends",
        f"az ml job create -f evaluate-job.yml {flags}",
        f"az ml job stream --name {evaluation} {flags}",
        f"az ml job download --name {evaluation} --output-name {entities.EVAL_OUTPUT} "
        f"--download-path {evaluation} {flags}  # predictions, scores.json, "
        "output-screen.json: nothing gates them here",
        f"az ml model create -f model.yml {flags}  # {config.model_type}: {_source(written)}",
        f"az ml online-endpoint create -f endpoint.yml {flags}",
        f"az ml online-deployment create -f deployment.yml --all-traffic {flags}",
    ]
    if "monitor" in written:  # its data assets exist once the deployment collects
        steps.append(f"az ml schedule create -f {written['monitor'].name} {flags}")
    return steps


def _source(written: dict[str, Path]) -> str:
    """The job output `model.yml` registers."""
    return str(yaml.safe_load(written["model"].read_text())["path"])


def _write(
    entity: Resource,
    path: Path,
    code: str | None = None,
    environment: str | None = None,
    env_spec: EnvSpec | None = None,
) -> Path:
    """The entity's own YAML form, with its code folder made relative to the file."""
    # The SDK's own serialisation (what `dump()` writes); JSON turns its OrderedDicts into dicts.
    data: dict[str, Any] = json.loads(json.dumps(entity._to_dict()))
    if env_spec is not None:  # an environment's own YAML: its build context beside the file
        data["build"]["path"] = f"./{env_spec.folder}"
    if environment is not None:
        data["environment"] = environment
    if code is not None:
        target = data.get("code_configuration", data)
        target["code"] = code
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path
