"""`tunegate azureml export`: YAML the SDK's own loaders accept, holding what a run would submit."""

from __future__ import annotations

import ast
import itertools
import re
import shlex
from pathlib import Path

import pytest
import yaml
from accelerate.commands.launch import launch_command_parser
from azure.ai.ml import (
    load_compute,
    load_data,
    load_environment,
    load_job,
    load_model,
    load_online_deployment,
    load_online_endpoint,
)
from click.testing import Result
from typer.testing import CliRunner

from cli.main import app
from flows.config import ConfigError, load_config
from platforms.azureml.config import AzureMLConfig, EnvironmentConfig, WorkspaceConfig
from platforms.azureml.entities import checkpoint_path, training_command
from screening.finder_table import own_finders
from trainer.args import parse_args

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = [
    ROOT / "configs" / "azureml.yaml",
    *sorted((ROOT / "configs" / "azureml").glob("*.yaml")),
]


def _run_export(tmp_path: Path, config: Path, *extra: str) -> Result:
    """`tunegate azureml export` of `config` into `tmp_path / "export"`."""
    out = tmp_path / "export"
    return CliRunner().invoke(
        app, ["azureml", "export", "--config", str(config), "--out", str(out), *extra]
    )


def _export(tmp_path: Path, config: Path, *extra: str) -> Path:
    result = _run_export(tmp_path, config, *extra)
    assert result.exit_code == 0, result.output
    return tmp_path / "export"


def _launcher_words(command: str) -> list[str]:
    """The command's words from the launcher on: without the `VAR=value` assignments before it
    (the base model's mount)."""
    words = shlex.split(command)
    while words and "=" in words[0] and not words[0].startswith("-"):
        words.pop(0)
    return words


def _trainer_argv(command: str, literals: dict[str, object] | None = None) -> list[str]:
    """The trainer's own flags in a job command, with Azure ML's placeholders filled in: the
    data and model folders, and each hyperparameter by its literal input's value."""
    bound = {"inputs.data": "/data", "outputs.model": "/out", "outputs.checkpoints": "/ckpt"}
    bound |= {f"inputs.{k}": str(v) for k, v in (literals or {}).items()}
    words = shlex.split(
        re.sub(r"\$\{\{\s*([\w.]+)\s*\}\}", lambda m: bound.get(m.group(1), m.group(0)), command)
    )
    return words[words.index("trainer.train") + 1 :]


def _job_argv(job_yml: Path) -> list[str]:
    """The trainer's flags of an exported job.yml, its literal inputs substituted."""
    job = yaml.safe_load(job_yml.read_text())
    literals = {k: v for k, v in job["inputs"].items() if not isinstance(v, dict)}
    return _trainer_argv(job["command"], literals)


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda p: p.stem)
def test_every_scenario_exports_yaml_the_sdk_loads_back(tmp_path: Path, scenario: Path) -> None:
    cfg = load_config(scenario)
    out = _export(tmp_path, scenario)

    job = load_job(out / "job.yml")
    launch = cfg.azureml.launch
    assert job.type == "command"
    assert job.compute == cfg.azureml.compute.name
    assert job.resources.instance_count == launch.instance_count
    assert job.experiment_name == cfg.azureml.experiment
    assert job.outputs["model"].mode == "upload"  # rw_mount breaks at the end of long jobs
    # checkpoints outlive a preempted node: mounted, in the spec's own folder (same for a rerun)
    checkpoints = job.outputs["checkpoints"]
    assert (checkpoints.mode, checkpoints.path) == ("rw_mount", checkpoint_path(job.display_name))
    assert job.inputs["data"].path == f"{cfg.azureml.data_asset}@latest"
    assert job.limits.timeout == launch.timeout_minutes * 60
    # The trainer flags parse with the trainer's own parser into the configured values.
    args = parse_args(_job_argv(out / "job.yml"))
    resolved = cfg.train.resolved_args(cfg.task.value)
    assert args.model == cfg.train.model
    assert (args.lora, args.max_length) == (resolved.lora, resolved.max_length)
    assert (args.data_dir, args.output_dir, args.checkpoint_dir) == ("/data", "/out", "/ckpt")
    assert (args.save_steps, args.save_total_limit) == (200, 2)
    # The code folder is relative to the YAML and holds the trainer and its launcher configs.
    code = (out / job.code).resolve()
    assert (code / "trainer" / "train.py").is_file()
    if launch.launcher == "accelerate":
        assert (code / "trainer" / "configs" / f"{launch.accelerate_config}.yaml").is_file()
    assert not list(code.rglob("__pycache__"))

    endpoint = load_online_endpoint(out / "endpoint.yml")
    assert (endpoint.name, endpoint.auth_mode) == (cfg.azureml.endpoint.name, "key")

    deployment = load_online_deployment(out / "deployment.yml")
    assert deployment.endpoint_name == cfg.azureml.endpoint.name
    assert deployment.instance_type == cfg.azureml.endpoint.instance_type
    assert deployment.model == f"{cfg.azureml.model_name}:1"
    assert deployment.readiness_probe.initial_delay == cfg.azureml.endpoint.initial_delay_seconds
    assert deployment.liveness_probe.initial_delay >= 500  # slow-loading models are not killed
    assert deployment.request_settings.request_timeout_ms == cfg.azureml.endpoint.request_timeout_ms
    assert deployment.environment_variables["WORKER_COUNT"] == str(cfg.azureml.endpoint.workers)
    # what its data collector writes is labelled with the version (the monitor reads it)
    assert deployment.environment_variables["TUNEGATE_VERSION"] == f"{cfg.azureml.model_name}:1"
    serve_code = (out / deployment.code_configuration.code).resolve()
    score = serve_code / deployment.code_configuration.scoring_script
    imported = [
        n.module for n in ast.walk(ast.parse(score.read_text())) if isinstance(n, ast.ImportFrom)
    ]
    assert set(imported) == {"serving"}  # tunegate's serving code, nothing of its own
    assert '"screening.outputs:traffic_masker"' in score.read_text()  # what masks collection
    # watched: App Insights on, and the masked requests and answers collected (by default)
    assert deployment.app_insights_enabled is cfg.azureml.endpoint.app_insights is True
    collections = deployment.data_collector.collections
    assert {n: c.enabled for n, c in collections.items()} == {
        "model_inputs": "true",
        "model_outputs": "true",
    }
    assert (serve_code / "screening" / "outputs.py").is_file()
    # the masker's finders are named by the table of finders, loaded on first use: each of their
    # modules and the data files they read must go up with the code
    for finder in own_finders():
        assert (
            (serve_code / Path(*finder.find.partition(":")[0].split(".")))
            .with_suffix(".py")
            .is_file()
        )
    shipped = {p.name for p in (ROOT / "screening" / "data").iterdir() if p.is_file()}
    assert shipped <= {p.name for p in (serve_code / "screening" / "data").iterdir()}
    assert (serve_code / "serving" / "scoring.py").is_file()
    assert (serve_code / "trainer" / "modeling.py").is_file()

    compute = load_compute(out / "compute.yml")
    assert (compute.name, compute.size) == (cfg.azureml.compute.name, cfg.azureml.compute.size)
    assert compute.max_instances >= launch.instance_count
    evaluation = load_job(out / "evaluate-job.yml")
    assert evaluation.inputs["candidate"].path == f"azureml://jobs/{job.name}/outputs/model"
    model = load_model(out / "model.yml")  # the version the deployment serves
    assert (model.type, model.path) == ("custom_model", f"azureml://jobs/{job.name}/outputs/model")
    assert f"{model.name}:{model.version}" == deployment.model
    for environment in out.glob("*environment*.yml"):
        assert load_environment(environment).build is not None


def test_multi_node_accelerate_takes_rank_and_rendezvous_from_azure_ml(tmp_path: Path) -> None:
    out = _export(tmp_path, ROOT / "configs" / "azureml.yaml")
    job = load_job(out / "job.yml")
    assert job.distribution.process_count_per_instance == 1  # accelerate starts the GPU processes
    # The node's shell expands the variables Azure ML sets: quoted, every node would be rank 0.
    assert "--machine_rank $NODE_RANK" in job.command
    assert "--main_process_ip $MASTER_ADDR --main_process_port $MASTER_PORT" in job.command
    node = {"$NODE_RANK": "1", "$MASTER_ADDR": "10.0.0.4", "$MASTER_PORT": "6105"}
    words = [node.get(w, w) for w in _launcher_words(job.command)]
    assert words[:2] == ["accelerate", "launch"]
    launch = launch_command_parser().parse_args(words[2:])
    assert (launch.num_machines, launch.num_processes, launch.machine_rank) == (2, 8, 1)
    assert (launch.main_process_ip, launch.main_process_port) == ("10.0.0.4", 6105)
    assert launch.config_file == "trainer/configs/deepspeed_zero3.yaml"
    assert launch.module and launch.training_script == "trainer.train"
    ds = yaml.safe_load((out / "train-code" / launch.config_file).read_text())["deepspeed_config"]
    assert ds["zero3_save_16bit_model"] is True  # LoRA adapters are saved with their weights
    assert ds["deepspeed_multinode_launcher"] == "standard"  # not pdsh: nodes have no ssh


def test_torchrun_launcher_lets_azure_ml_start_one_process_per_gpu(tmp_path: Path) -> None:
    out = _export(tmp_path, ROOT / "configs" / "azureml" / "mistral-7b-ddp.yaml")
    job = load_job(out / "job.yml")
    assert job.distribution.process_count_per_instance == 4
    assert job.resources.instance_count == 2
    assert _launcher_words(job.command)[:3] == ["python", "-m", "trainer.train"]


def test_single_node_accelerate_rendezvouses_on_a_free_port() -> None:
    """No node rank or head address; the port accelerate's own free one, not its fixed 29500
    that a second launch on the machine would join (both jobs then hang)."""
    from platforms.training import TrainSpec

    launch = AzureMLConfig.model_validate(
        {"compute": {"size": "Standard_NC96ads_A100_v4"}, "launch": {"gpus_per_node": 4}}
    ).launch
    command = training_command(TrainSpec(name="t", data_dir="d", args={}), launch)
    assert "NODE_RANK" not in command and "--num_processes 4" in command
    assert "--main_process_port 0 " in command and "MASTER_ADDR" not in command


def test_an_image_environment_and_a_split_folder_export(tmp_path: Path) -> None:
    split = tmp_path / "split"
    split.mkdir()
    out = _export(
        tmp_path,
        ROOT / "configs" / "azureml.yaml",
        "--set",
        "azureml.environment={image: mcr.microsoft.com/azureml/curated/acft-hf-nlp-gpu:latest}",
        "--data",
        "azureml://datastores/workspaceblobstore/paths/datasets/split/abc/",
        "--model-version",
        "7",
        "--set",
        "azureml.endpoint.workers=3",
    )
    job = load_job(out / "job.yml")
    assert job.environment.image == "mcr.microsoft.com/azureml/curated/acft-hf-nlp-gpu:latest"
    assert (
        job.inputs["data"].path
        == "azureml://datastores/workspaceblobstore/paths/datasets/split/abc/"
    )
    deployment = load_online_deployment(out / "deployment.yml")
    assert deployment.model.endswith(":7")
    assert deployment.environment_variables["WORKER_COUNT"] == "3"


def test_an_mlflow_model_type_exports_a_deployment_without_code_or_environment(
    tmp_path: Path,
) -> None:
    """The deployment names no code or environment and serves the MLflow model the evaluation
    job writes of the candidate, registered as an `mlflow_model` (test_job_command.py runs that
    step of the job); training is unchanged."""
    result = _run_export(
        tmp_path,
        ROOT / "configs" / "azureml.yaml",
        "--set",
        "azureml.model_type=mlflow_model",
        "--model-version",
        "4",
    )
    assert result.exit_code == 0, result.output
    out = tmp_path / "export"
    job, evaluation = load_job(out / "job.yml"), load_job(out / "evaluate-job.yml")
    assert evaluation.inputs["candidate"].path == f"azureml://jobs/{job.name}/outputs/model"
    assert evaluation.outputs["mlflow_model"].type == "mlflow_model"
    assert evaluation.command.split(" && ")[-1] == (
        "python -m serving.mlflow_model --model-dir '${{inputs.candidate}}' "
        "--output-dir '${{outputs.mlflow_model}}'"
    )
    assert (out / "eval-code" / "serving" / "mlflow_model.py").is_file()  # what that runs
    model = load_model(out / "model.yml")
    assert model.type == "mlflow_model"
    assert model.path == f"azureml://jobs/{evaluation.name}/outputs/mlflow_model"
    [register] = [step for step in _steps(result.output) if step[2:4] == ["model", "create"]]
    assert register[4:6] == ["-f", "model.yml"]
    deployment = load_online_deployment(out / "deployment.yml")
    assert deployment.model == f"{model.name}:{model.version}" == "phi35-mini-tunegate:4"
    assert deployment.code_configuration is None
    assert deployment.environment is None
    # nothing of ours would mask what a no-code deployment collects: watched by App Insights only
    assert deployment.data_collector is None and deployment.app_insights_enabled
    assert not (out / "serve-code").exists()
    assert not list(out.glob("serving-environment*"))
    assert job.code and set(job.outputs) == {"model", "checkpoints"}  # training is unchanged
    assert job.outputs["model"].type == "uri_folder"


def test_bad_azureml_config_names_the_field() -> None:
    with pytest.raises(ConfigError, match=r"azureml\.environment"):
        load_config(
            ROOT / "configs" / "azureml.yaml",
            ["azureml.environment={asset: azureml:env:1, image: python:3.11}"],
        )
    with pytest.raises(ConfigError, match=r"azureml\.launch\.launcher"):
        load_config(ROOT / "configs" / "azureml.yaml", ["azureml.launch.launcher=mpi"])
    with pytest.raises(ValueError, match="conda_file needs image"):
        EnvironmentConfig(asset="azureml:env:1", conda_file="conda.yml")


def test_workspace_ids_come_from_config_json_and_missing_ones_are_named(tmp_path: Path) -> None:
    config_json = tmp_path / "config.json"
    config_json.write_text(
        '{"subscription_id": "sub", "resource_group": "rg", "workspace_name": "ws"}'
    )
    assert WorkspaceConfig(config_file=str(config_json), workspace_name="other").resolved() == (
        "sub",
        "rg",
        "other",
    )
    with pytest.raises(ValueError, match=r"azureml\.workspace\.resource_group"):
        WorkspaceConfig(subscription_id="sub", workspace_name="ws").resolved()


@pytest.mark.slow
def test_a_dry_run_splits_the_data_here_and_exports_the_job_for_that_split(
    tmp_path: Path, prefect_api: None
) -> None:
    from tests.tickets import qa_tickets

    out = tmp_path / "dry-run"
    store = tmp_path / "store"
    result = CliRunner().invoke(
        app,
        [
            "run",
            "--config",
            str(ROOT / "configs" / "azureml.yaml"),
            "--input",
            str(qa_tickets(tmp_path)),
            "--approval",
            "auto",
            "--set",
            f"store={store}",
            "--set",
            "task=extractive-qa",
            "--set",
            "dask.n_workers=1",
            "--dry-run",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    assert not (store / "jobs").exists()  # nothing trained, nothing submitted
    [split] = (store / "datasets" / "split").iterdir()
    job = load_job(out / "job.yml")
    data = load_data(out / "data.yml")  # `az ml data create` uploads this folder
    assert Path(data.path) == split
    assert job.inputs["data"].path == f"{data.name}:{data.version}"
    assert job.name.startswith("train-")  # named by data and config, as a real run would
    assert load_online_deployment(out / "deployment.yml").endpoint_name == "tunegate-phi35"


@pytest.mark.parametrize(
    ("precision", "flag"), [("fp32", "no"), ("bf16", "bf16"), ("fp16", "fp16"), (None, None)]
)
def test_accelerate_launch_takes_the_configured_precision(
    precision: str | None, flag: str | None
) -> None:
    """Every accelerate config in trainer/configs/ says bf16; `--mixed_precision` overrides it
    with the config's precision. `auto` (unset) is resolved by the trainer on the node."""
    from platforms.training import TrainSpec

    launch = AzureMLConfig.model_validate({"launch": {"accelerate_config": "ddp"}}).launch
    args = {} if precision is None else {"precision": precision}
    command = training_command(TrainSpec(name="t", data_dir="d", args=args), launch)
    parsed = launch_command_parser().parse_args(shlex.split(command)[2:])
    assert parsed.mixed_precision == flag
    literals = {"precision": precision} if precision else {}
    assert parse_args(_trainer_argv(command, literals)).precision == (precision or "auto")


def test_the_t4_scenario_trains_in_fp32_under_a_bf16_accelerate_config(tmp_path: Path) -> None:
    out = _export(tmp_path, ROOT / "configs" / "azureml" / "t5-summarization-t4.yaml")
    words = _launcher_words(load_job(out / "job.yml").command)
    launch = launch_command_parser().parse_args(words[2:])
    accelerate_config = yaml.safe_load((out / "train-code" / launch.config_file).read_text())
    assert accelerate_config["mixed_precision"] == "bf16"  # what the flag overrides
    assert launch.mixed_precision == "no"
    assert parse_args(_job_argv(out / "job.yml")).precision == "fp32"


def _split(store: Path, task: str, key: str = "c0ffee" * 10 + "abcd") -> Path:
    """A split dataset of `task` in a store at `store`, signed as the split stage signs it."""
    import pyarrow as pa

    from platforms.manifest import table_info
    from platforms.store import Store, write_table
    from tasks.approve import ApprovalConfig

    schema = pa.schema([("id", pa.string())])
    writer = Store(str(store), signing_key=ApprovalConfig().signing_key()).begin_dataset(
        "split", key
    )
    write_table(writer.store, writer.part_uri("train", 0), [{"id": "a"}], schema)
    ref = writer.commit(
        task=task,
        content_hash="f00d" * 16,
        parent_hashes=[],
        config_hash="x",
        counts={"train": 1},
        tables={"train": table_info(1, ["train/part-00000.parquet"], schema)},
    )
    return Path(ref.uri)


@pytest.mark.slow
def test_every_scenario_exports_its_own_job_names(tmp_path: Path) -> None:
    names = {}
    for scenario in SCENARIOS:
        out = _export(tmp_path / scenario.stem, scenario)
        job = load_job(out / "job.yml")
        evaluation = load_job(out / "evaluate-job.yml")
        # the evaluation job evaluates this training job's model, and says so by its name
        assert evaluation.inputs["candidate"].path == f"azureml://jobs/{job.name}/outputs/model"
        assert evaluation.name == f"eval-{job.name}"
        names[scenario.stem] = job.name
    assert len(set(names.values())) == len(SCENARIOS), names
    # the same scenario on other data is another job; exported again, the same one
    other = _export(tmp_path / "other", SCENARIOS[0], "--data", "azureml:tunegate-split:7")
    assert load_job(other / "job.yml").name not in names.values()
    again = _export(tmp_path / "again", SCENARIOS[0])
    assert load_job(again / "job.yml").name == names[SCENARIOS[0].stem]


def _steps(output: str) -> list[list[str]]:
    return [
        shlex.split(line.split("  #")[0]) for line in output.splitlines() if line[:5] == "az ml"
    ]


def test_the_printed_steps_go_from_an_empty_workspace_to_a_deployment(tmp_path: Path) -> None:
    config_json = tmp_path / "config.json"
    config_json.write_text(
        '{"subscription_id": "sub-1", "resource_group": "rg-1", "workspace_name": "ws-1"}'
    )
    split = _split(tmp_path / "store", "chat")
    out = tmp_path / "export"
    result = _run_export(
        tmp_path,
        SCENARIOS[0],
        "--data",
        str(split),
        "--set",
        f"azureml.workspace.config_file={config_json}",
        "--model-version",
        "3",
    )
    assert result.exit_code == 0, result.output
    assert "skips tunegate's approval and gate" in result.output
    steps = _steps(result.output)
    for step in steps:  # every command names the workspace: no `az configure --defaults`
        flags = dict(itertools.pairwise(step))
        assert (flags["--resource-group"], flags["--workspace-name"]) == ("rg-1", "ws-1"), step
        assert flags["--subscription"] == "sub-1"
    verbs = [" ".join(step[2:4]) for step in steps]
    assert verbs == [
        "environment create",
        "environment create",
        "data create",  # the split, uploaded from here (not in the az:// store: no datastore)
        "compute create",
        "job create",
        "job stream",
        "job create",
        "job stream",
        "job download",
        "model create",
        "online-endpoint create",
        "online-deployment create",
        "schedule create",  # the deployment's model monitoring (test_monitor_schedule.py)
    ]
    files = [step[step.index("-f") + 1] for step in steps if "-f" in step]
    assert all((out / name).is_file() for name in files)
    # the data asset is the split, versioned by its content hash as a run registers it
    data = load_data(out / "data.yml")
    assert (data.name, data.version, Path(data.path)) == ("tunegate-split", "f00d" * 8, split)
    job = load_job(out / "job.yml")
    assert job.inputs["data"].path == f"tunegate-split:{'f00d' * 8}"  # the SDK drops azureml:
    [register] = [step for step in steps if step[2:4] == ["model", "create"]]
    assert register[4:6] == ["-f", "model.yml"]
    model = load_model(out / "model.yml")  # the training job's model folder, as it wrote it
    assert (model.type, model.path) == ("custom_model", f"azureml://jobs/{job.name}/outputs/model")
    assert (model.name, model.version) == ("phi35-mini-tunegate", "3")
    assert load_online_deployment(out / "deployment.yml").model == "phi35-mini-tunegate:3"
    assert (out / "steps.sh").read_text().count("az ml") == len(steps)


def test_a_split_of_another_task_is_refused_naming_both(tmp_path: Path) -> None:
    split = _split(tmp_path / "store", "extractive-qa")
    result = _run_export(tmp_path, SCENARIOS[0], "--data", str(split))
    assert result.exit_code == 2
    [line] = result.output.strip().splitlines()
    assert "split of extractive-qa records" in line and "task is chat" in line


@pytest.mark.parametrize("account", [None, "someaccount"])
def test_an_unreadable_az_split_exits_2_with_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, account: str | None
) -> None:
    """No credentials at all, or an account but no sign-in that works (no Azure CLI login, no
    managed identity here): one line, and no authentication traceback."""
    for variable in ("AZURE_STORAGE_CONNECTION_STRING", "AZURE_CLIENT_ID", "AZURE_TENANT_ID"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))  # no `az`, `azd` or `pwsh` to sign in with
    monkeypatch.setenv("AZURE_TOKEN_CREDENTIALS", "dev")  # and no managed identity to probe
    extra = ["--set", f"azure.account_name={account}"] if account else []
    result = _run_export(
        tmp_path, SCENARIOS[0], "--data", "az://tunegate/runs/datasets/split/abc", *extra
    )
    assert result.exit_code == 2, result.output
    [line] = result.output.strip().splitlines()
    assert line.startswith("--data az://tunegate/runs/datasets/split/abc: cannot read the split")
    assert ("azure.account_name" in line) and (account is None or "no Azure sign-in" in line)
