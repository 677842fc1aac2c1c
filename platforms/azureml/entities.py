"""The Azure ML entities a run needs, built from tunegate's specs: pure functions, no service calls.

The same builders feed the live backends and `tunegate azureml export`, so what is exported is
exactly what would be submitted.

The datastore jobs read through: platforms/azureml/datastores.py; the online endpoint and its
deployments: platforms/azureml/online_entities.py.
"""

from __future__ import annotations

import json
import shlex
import shutil
from pathlib import Path
from typing import Any

from azure.ai.ml import Input, Output, PyTorchDistribution, command
from azure.ai.ml.constants import AssetTypes, InputOutputModes
from azure.ai.ml.entities import (
    AmlCompute,
    BuildContext,
    Command,
    Data,
    Environment,
    Model,
)

from platforms.azureml import base_model
from platforms.azureml.config import (
    AzureMLConfig,
    ComputeConfig,
    EnvironmentConfig,
    LaunchConfig,
    ModelType,
)
from platforms.azureml.environment import (
    SERVER_PORT,
    TRAINING,
    EnvSpec,
    context_version,
    staged_context,
)
from platforms.azureml.job_config import JobConfig
from platforms.training import TrainSpec, trainer_arguments
from trainer.args import MIXED_PRECISION, TrainArgs
from trainer.tracking import job_variables

_ROOT = Path(__file__).resolve().parents[2]
TRAINING_PACKAGES = ("trainer",)
# The evaluation job screens the candidate's outputs after predicting (python -m screening.outputs)
EVALUATION_PACKAGES = ("trainer", "screening")
# ... and, for an MLflow model's export, writes the candidate as one (python -m serving.mlflow_model)
MLFLOW_PACKAGES = ("serving",)
SCREEN_CONFIG = "screen.json"  # the run's screen config in the evaluation job's code
PERSON_READER = "person_reader"  # screen.person_model_dir's folder in the evaluation job's code
SERVING_PACKAGES = ("serving", "trainer", "screening")  # screening: masks collected traffic
SCORE_SCRIPT = "score.py"
_SCORE_SOURCE = '''"""Azure ML scoring entry point: tunegate's serving code, the same as the local endpoint's.

Requests and answers are collected masked by the screen's recognizers (serving/collect.py); the
request's headers (the inference server passes them to a `run` that takes `request_headers`)
tell a request that named this deployment from the users' traffic.
"""

from serving import scoring


def init() -> None:
    scoring.init("screening.outputs:traffic_masker")  # the writer process imports it


def run(raw_json: str, request_headers: dict[str, str]) -> object:
    return scoring.run(raw_json, routed=scoring.routed_by(request_headers))
'''
MODEL_OUTPUT = "model"
EVAL_OUTPUT = "evaluation"
MLFLOW_OUTPUT = "mlflow_model"  # the evaluation job's MLflow model of the candidate (export only)
CHECKPOINT_OUTPUT = "checkpoints"


def checkpoint_path(spec_name: str) -> str:
    """Where a training spec's checkpoints live: one folder per spec on the workspace's default
    datastore, the same for Azure ML's rerun of a preempted job and for tunegate's resubmission
    of a failed one (`<name>-r2`), so either resumes where the last one stopped."""
    return f"azureml://datastores/workspaceblobstore/paths/tunegate/checkpoints/{spec_name}/"


def stage_code(dest: Path, packages: tuple[str, ...], score_script: bool = False) -> Path:
    """Copy only the packages a job or deployment runs into `dest` (never .venv or the store)."""
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    for package in packages:
        shutil.copytree(
            _ROOT / package, dest / package, ignore=shutil.ignore_patterns("__pycache__", "*.pyc")
        )
    if score_script:
        (dest / SCORE_SCRIPT).write_text(_SCORE_SOURCE)
    return dest


def stage_training_code(dest: Path, packages: tuple[str, ...] = TRAINING_PACKAGES) -> Path:
    """The training job's code: `trainer/` (or `packages`) and the hub token's reader
    (`hub_token.py`)."""
    stage_code(dest, packages)
    shutil.copyfile(Path(__file__).with_name("hub_token.py"), dest / base_model.HUB_TOKEN_SCRIPT)
    return dest


def stage_evaluation_code(
    dest: Path, screen: dict[str, Any] | None = None, mlflow_output: bool = False
) -> Path:
    """The evaluation job's code: `trainer/`, `screening/` (the candidate's outputs are screened
    on the node), with `mlflow_output` `serving/` too (the job writes the candidate as an MLflow
    model: `evaluation_job`), the hub token's reader, and `screen.json`, the run's screen config
    (`screen`, a `ScreenConfig` as JSON; None: the screen's defaults), which the job screens
    under. A person
    reader of the run's own (`person_model_dir`, a folder here) goes up with the code, as
    `PERSON_READER`, and the job's config names it there; a toxicity classifier of its own
    (`toxicity.model_dir`) stays here: the job screens outputs for personal data only."""
    packages = EVALUATION_PACKAGES + (MLFLOW_PACKAGES if mlflow_output else ())
    stage_training_code(dest, packages)
    screen = dict(screen or {})
    if screen.get("person_model_dir"):
        shutil.copytree(Path(screen["person_model_dir"]).expanduser(), dest / PERSON_READER)
        screen["person_model_dir"] = PERSON_READER  # the job runs in its code folder
    if (screen.get("toxicity") or {}).get("model_dir"):  # outputs are screened for PII only
        screen["toxicity"] = {**screen["toxicity"], "model_dir": None}
    (dest / SCREEN_CONFIG).write_text(json.dumps(screen, indent=2, sort_keys=True))
    return dest


def training_command(spec: TrainSpec, launch: LaunchConfig, job: JobConfig | None = None) -> str:
    """The shell command each node runs; rank and rendezvous come from Azure ML's variables.
    Before the launcher: where a model asset is mounted, and the hub token's reader
    (platforms/azureml/base_model.py)."""
    prefix = base_model.command_prefix(spec.args.get("model"), job or JobConfig())
    return prefix + _launch_command(spec, launch)


def hyperparameters(args: dict[str, Any]) -> dict[str, int | float | str]:
    """The job's literal inputs: every number or string among the trainer's arguments except the
    base model (an input of its own when it is a model asset), so Azure ML's studio shows and
    compares them per job; the command reads each as `${{inputs.NAME}}`. Booleans and lists stay
    flags of the command."""
    return {
        k: v
        for k, v in args.items()
        if k != "model" and isinstance(v, int | float | str) and not isinstance(v, bool)
    }


def _launch_command(spec: TrainSpec, launch: LaunchConfig) -> str:
    bound = {k: "${{inputs." + k + "}}" for k in hyperparameters(spec.args)}
    # A LoRA job also writes its merged weights: the deployment loads those, never the base
    # model (a hub id or a catalog asset the endpoint cannot reach); unless the config says no.
    args = {"merge_adapter": True, **spec.args, **bound}
    args["checkpoint_dir"] = "${{outputs." + CHECKPOINT_OUTPUT + "}}"
    flags = trainer_arguments("${{inputs.data}}", "${{outputs." + MODEL_OUTPUT + "}}", args)
    train = ["-m", "trainer.train", *flags]
    if launch.launcher == "torchrun":
        return shlex.join(["python", *train])
    nodes = launch.instance_count
    head = [
        "accelerate",
        "launch",
        "--config_file",
        f"trainer/configs/{launch.accelerate_config}.yaml",
        "--num_machines",
        str(nodes),
        "--num_processes",
        str(nodes * launch.gpus_per_node),
    ]
    # The config's precision, not the accelerate config's mixed_precision (bf16 in every one):
    # a T4 has no native bf16. `auto` is the trainer's to resolve on the node (it also overrides it).
    precision = spec.args.get("precision", TrainArgs.precision)
    if precision != "auto":
        head += ["--mixed_precision", MIXED_PRECISION[precision]]
    # Unquoted so the node's shell expands them: every node reporting rank 0 is the known
    # failure when machine_rank is not taken from $NODE_RANK.
    # One node: a free port of accelerate's choosing (`0`), never its fixed 29500, which a second
    # launch on the same machine would share, each rank then joining the other's rendezvous.
    rendezvous = (
        " --machine_rank $NODE_RANK --main_process_ip $MASTER_ADDR --main_process_port $MASTER_PORT"
        if nodes > 1
        else " --main_process_port 0"
    )
    return shlex.join(head) + rendezvous + " " + shlex.join(train)


def environment(
    config: EnvironmentConfig, context: Path | None = None, spec: EnvSpec = TRAINING
) -> Environment | str:
    """A registered environment's reference, an anonymous one from an image or build context, or
    (none configured) the tunegate environment `spec`: `context` (default: staged in the local
    cache), named `spec.name` and versioned by the context's hash, so Azure ML builds it once per
    pin set and registers it when the first job or deployment using that version is created.
    The serving one starts Azure ML's inference server itself, so it says where it listens."""
    if config.image:
        return Environment(image=config.image, conda_file=config.conda_file)
    if config.build_context:
        return Environment(build=BuildContext(path=config.build_context))
    if config.asset:
        return config.asset
    context = context or staged_context(spec)
    routes = None
    if spec.serves:
        routes = {
            "liveness_route": {"path": "/", "port": SERVER_PORT},
            "readiness_route": {"path": "/", "port": SERVER_PORT},
            "scoring_route": {"path": "/score", "port": SERVER_PORT},
        }
    return Environment(
        name=spec.name,
        version=context_version(context),
        build=BuildContext(path=str(context)),
        description=spec.description,
        inference_config=routes,
    )


def training_job(
    spec: TrainSpec,
    config: AzureMLConfig,
    code_dir: Path,
    data: str,
    name: str | None = None,
    env_context: Path | None = None,
    model_type: base_model.ModelType | None = None,
) -> Command:
    """The command job for one training spec: same `trainer/` code, model output uploaded,
    checkpoints written through a mount to the spec's own folder (`checkpoint_path`: kept
    across a rerun, unlike the node's disk); a model asset as base model is mounted as the
    `base_model` input (of `model_type`, default from azureml.job.model_input_type)."""
    launch = config.launch
    processes = 1 if launch.launcher == "accelerate" else launch.gpus_per_node
    model = spec.args.get("model")
    base_model.check_model(model)
    inputs: dict[str, Any] = {
        "data": Input(type=AssetTypes.URI_FOLDER, path=data, mode=InputOutputModes.RO_MOUNT),
        **hyperparameters(spec.args),
    }
    if model is not None and base_model.is_model_asset(model):
        kind = model_type or base_model.default_type(model, config.job.model_input_type)
        inputs[base_model.MODEL_INPUT] = base_model.model_input(model, kind)
    return command(
        name=name or spec.name,
        display_name=spec.name,
        experiment_name=config.experiment,
        description="tunegate fine-tuning of " + str(model or "the base model"),
        code=str(code_dir),
        command=training_command(spec, launch, config.job),
        environment=environment(config.environment, env_context),
        environment_variables={
            **base_model.environment_variables(model, config.job),
            **job_variables(spec.tracking_uri, spec.tracking_run_id),  # the flow's MLflow run
        },
        compute=config.compute.name,
        instance_count=launch.instance_count,
        distribution=PyTorchDistribution(process_count_per_instance=processes),
        inputs=inputs,
        # The model is uploaded: rw_mount outputs fail at the end of long jobs ("Transport
        # endpoint is not connected"). The checkpoints must outlive the node (a preempted
        # node's disk is gone, an upload output with it), so they are mounted; the trainer
        # removes them once the model is saved, best effort: a mount dropped then fails nothing.
        outputs={
            MODEL_OUTPUT: Output(type=AssetTypes.URI_FOLDER, mode=InputOutputModes.UPLOAD),
            CHECKPOINT_OUTPUT: Output(
                type=AssetTypes.URI_FOLDER,
                path=checkpoint_path(spec.name),
                mode=InputOutputModes.RW_MOUNT,
            ),
        },
        timeout=launch.timeout_minutes * 60,
        tags={"tunegate.spec": spec.name},
    )


def evaluation_job(
    config: AzureMLConfig,
    code_dir: Path,
    data: str,
    candidate: str,
    champion: str | None,
    base: str | None,
    *,
    name: str,
    max_test_records: int = 0,
    batch_size: int = 32,
    env_context: Path | None = None,
    model_type: base_model.ModelType | None = None,
    mlflow_output: bool = False,
) -> Command:
    """The evaluation command job: `trainer.evaluate` predicts the test split of `data` with the
    base model, the candidate (a training job's output) and the champion (a model asset or a
    folder to upload) on one node of the training cluster, where they fit, and scores them; then
    `screening.outputs` screens the candidate's predictions under the run's screen config
    (`code_dir` is `stage_evaluation_code`'s). Its `evaluation` output holds
    `trainer.args.EVALUATION_FILES` (predictions, scores, the screen's findings) and nothing
    else. The base model is mounted and reached as in the training job. The models predict on
    the node's GPU in the endpoint's dtype (azureml.endpoint.dtype), spread over its GPUs and
    in 4 bits as the endpoint's are (device_map, load_in_4bit), one at a time, so the
    predictions are the answers the endpoint will give.

    `mlflow_output` (an export with azureml.model_type mlflow_model, which has no tunegate
    process between the jobs to build it): the job then also writes the candidate as an MLflow
    pyfunc model (`python -m serving.mlflow_model`: the folder the registry would build and
    upload) to its `mlflow_model` output, of type `mlflow_model`, which the export registers as
    is; `code_dir` then holds `serving/` (`stage_evaluation_code`). A run's own evaluation job
    does not: its registry builds the MLflow model after the gate (platforms/azureml/registry.py)."""
    base_model.check_model(base)
    inputs: dict[str, Any] = {
        "data": Input(type=AssetTypes.URI_FOLDER, path=data, mode=InputOutputModes.RO_MOUNT),
        "candidate": Input(
            type=AssetTypes.URI_FOLDER, path=candidate, mode=InputOutputModes.RO_MOUNT
        ),
        "max_test_records": max_test_records,
        "batch_size": batch_size,
        "dtype": config.endpoint.dtype,
        "device_map": config.endpoint.device_map,
    }
    flags = [
        *("--data-dir", "${{inputs.data}}", "--candidate", "${{inputs.candidate}}"),
        *("--max-test-records", "${{inputs.max_test_records}}"),
        *("--batch-size", "${{inputs.batch_size}}"),
        # the endpoint's dtype: the smoke check compares the endpoint's answers with these
        *("--dtype", "${{inputs.dtype}}"),
        # and its spread over the node's GPUs, and 4 bits (trainer/spread.py)
        *("--device-map", "${{inputs.device_map}}"),
        *(["--load-in-4bit"] if config.endpoint.load_in_4bit else []),
        *("--output-dir", "${{outputs." + EVAL_OUTPUT + "}}"),
    ]
    screen_flags = [
        *("--evaluation-dir", "${{outputs." + EVAL_OUTPUT + "}}", "--data-dir", "${{inputs.data}}"),
        *("--max-test-records", "${{inputs.max_test_records}}"),
        *("--screen-config", SCREEN_CONFIG),  # in the job's code: the run's screen config
    ]
    if champion is not None:
        inputs["champion"] = Input(
            type=AssetTypes.CUSTOM_MODEL, path=champion, mode=InputOutputModes.RO_MOUNT
        )
        flags += ["--champion", "${{inputs.champion}}"]
    if base is not None and base_model.is_model_asset(base):
        kind = model_type or base_model.default_type(base, config.job.model_input_type)
        inputs[base_model.MODEL_INPUT] = base_model.model_input(base, kind)
    steps = [
        ["python", "-m", "trainer.evaluate", *flags],
        ["python", "-m", "screening.outputs", *screen_flags],
    ]
    outputs = {EVAL_OUTPUT: Output(type=AssetTypes.URI_FOLDER, mode=InputOutputModes.UPLOAD)}
    if mlflow_output:
        target = "${{outputs." + MLFLOW_OUTPUT + "}}"
        writer = ["python", "-m", "serving.mlflow_model", "--model-dir", "${{inputs.candidate}}"]
        steps.append([*writer, "--output-dir", target])
        outputs[MLFLOW_OUTPUT] = Output(type=AssetTypes.MLFLOW_MODEL, mode=InputOutputModes.UPLOAD)
    return command(
        name=name,
        display_name=name,
        experiment_name=config.experiment,
        description="tunegate evaluation: base, candidate and champion on the test split",
        code=str(code_dir),
        command=base_model.command_prefix(base, config.job)
        + " && ".join(shlex.join(step) for step in steps),
        environment=environment(config.environment, env_context),
        environment_variables=base_model.environment_variables(base, config.job),
        compute=config.compute.name,
        instance_count=1,
        inputs=inputs,
        outputs=outputs,
        timeout=config.launch.timeout_minutes * 60,
        tags={"tunegate.evaluates": candidate},
    )


def compute_cluster(config: ComputeConfig) -> AmlCompute:
    return AmlCompute(
        name=config.name,
        size=config.size,
        min_instances=config.min_nodes,
        max_instances=config.max_nodes,
        tier="low_priority" if config.tier == "low_priority" else "dedicated",
        idle_time_before_scale_down=config.idle_seconds,
    )


def data_version(content_hash: str) -> str:
    """The data asset version of a split dataset: its content hash (cut to what a version holds),
    so the same split is the same version, whoever registers it."""
    return content_hash[:32]


def data_asset(name: str, version: str, path: str, description: str) -> Data:
    return Data(
        name=name,
        version=version,
        path=path,
        type=AssetTypes.URI_FOLDER,
        description=description,
    )


def job_output(job_name: str, output: str = MODEL_OUTPUT) -> str:
    """The URI of a job's uploaded output: by default a training job's model folder."""
    return f"azureml://jobs/{job_name}/outputs/{output}"


def model_asset(
    name: str,
    path: str,
    tags: dict[str, str],
    properties: dict[str, str],
    model_type: ModelType = "custom_model",
) -> Model:
    """A model from a job output (`job_output()`) or a local folder the SDK uploads: a custom
    model, or (`mlflow_model`) an MLflow model folder (`serving.mlflow_model`)."""
    return Model(
        name=name,
        path=path,
        type=AssetTypes.MLFLOW_MODEL if model_type == "mlflow_model" else AssetTypes.CUSTOM_MODEL,
        tags=tags,
        properties=properties,
        description=f"tunegate model from {path}",
    )
