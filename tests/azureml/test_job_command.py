"""The exported job's command runs here as Azure ML runs it on a node (tests/azureml/job_runner.py):
from the staged `train-code/`, with the job's inputs and outputs as local folders and the
variables Azure ML sets; the model it writes loads and answers.

On CPU: gloo instead of NCCL, the packaged MiniLM, 24 records, one epoch.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import torch
import yaml
from safetensors.torch import load_file
from typer.testing import CliRunner

from cli.main import app
from platforms.azureml.config import AzureMLConfig
from platforms.azureml.entities import training_job
from platforms.training import TrainSpec
from tasks.records import TaskType
from tests.azureml.job_runner import JobRun, run_job
from tests.trainer.tiny import qa_record, write_dataset
from trainer.args import PACKAGED_MODEL
from trainer.modeling import load_trained
from trainer.predict import predict

MAX_LENGTH, DOC_STRIDE = 96, 32


def _export(tmp_path: Path, launch: dict) -> Path:
    """`tunegate azureml export` of a tiny extractive-QA LoRA run with `launch`; the job.yml."""
    config = {
        "task": "extractive-qa",
        "store": str(tmp_path / "store"),
        "train": {
            "backend": "azureml",
            "model": PACKAGED_MODEL,
            "epochs": 1,
            "batch_size": 8,
            "max_length": MAX_LENGTH,
            "lora": True,
            "args": {"doc_stride": DOC_STRIDE, "logging_steps": 1},
        },
        "azureml": {
            "experiment": "tunegate-job-command",
            "compute": {"size": "Standard_NC96ads_A100_v4"},  # 4 GPUs: room for each launch
            "launch": launch,
        },
    }
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    out = tmp_path / "export"
    result = CliRunner().invoke(
        app, ["azureml", "export", "--config", str(path), "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    return out / "job.yml"


def _run_job(tmp_path: Path, job_yml: Path, record_writes: bool = False) -> JobRun:
    """The job on 24 training records (and 6 validation ones); its model in tmp_path/model."""
    data = write_dataset(tmp_path, TaskType.extractive_qa, qa_record, n=24)
    return run_job(
        job_yml,
        inputs={"data": data},
        outputs={"model": tmp_path / "model", "checkpoints": tmp_path / "checkpoints"},
        workdir=tmp_path / "job",
        timeout=300,
        record_writes=record_writes,
    )


def _run(tmp_path: Path, job_yml: Path, record_writes: bool = False) -> JobRun:
    run = _run_job(tmp_path, job_yml, record_writes)
    assert run.ok, run.tails()
    return run


def _assert_the_model_loads_and_answers(model_dir: Path) -> None:
    model, tokenizer, info = load_trained(model_dir)
    assert info == {
        "task": "extractive-qa",
        "base_model": PACKAGED_MODEL,
        "adapter": True,
        "max_length": 96,  # what prediction cuts windows to, as training did
    }
    # LoRA's B matrices start at zero: non-zero ones were trained and saved whole.
    adapter = load_file(model_dir / "adapter_model.safetensors")
    lora_b = [t for name, t in adapter.items() if "lora_B" in name]
    assert lora_b and all(t.abs().sum() > 0 for t in lora_b)
    # A job also writes the merged weights, which load_trained (and the deployment) load
    assert (model_dir / "merged" / "config.json").is_file()
    assert not any("lora" in name for name, _ in model.named_parameters())
    record = qa_record(100)
    [answer] = predict(
        model, tokenizer, "extractive-qa", [record], max_length=MAX_LENGTH, doc_stride=DOC_STRIDE
    )
    assert answer and answer in record["context"]


def test_the_node_runs_the_staged_code_with_azure_ml_s_variables(tmp_path: Path) -> None:
    """The runner itself: cwd, imports, bindings, read-only input and per-process variables are
    what the slow tests below rely on (a probe in place of the trainer)."""
    job_yml = _export(tmp_path, {"launcher": "torchrun", "gpus_per_node": 2})
    job = yaml.safe_load(job_yml.read_text())
    # what the training backend adds for a flow's MLflow run (entities.training_job)
    flow_run = ("http://mlflow.example:5000", "0123456789abcdef0123456789abcdef")
    job["environment_variables"].update(_tracked_job_variables(tmp_path, *flow_run))
    probe = (
        "import json, os, pathlib, trainer, trainer.tracking; "
        "data = pathlib.Path(os.environ['AZURE_ML_INPUT_data']); "
        "out = pathlib.Path(os.environ['AZURE_ML_OUTPUT_model']); "
        "(out / ('rank-' + os.environ['RANK'])).write_text(os.environ['LOCAL_RANK']); "
        "os.environ['RANK'] == '1' and (data / 'stray').write_text('x'); "
        "print(json.dumps({'trainer': trainer.__file__, 'cwd': os.getcwd(), "
        "'argv': __import__('sys').argv[1:], 'env': dict(os.environ), "
        "'run': trainer.tracking.given_run()}))"
    )
    job["command"] = (
        shlex.join(["python", "-c", probe, "${{inputs.data}}", "${{outputs.model}}"])
        + " $NODE_RANK"  # unquoted: the node's shell expands it
    )
    job_yml.write_text(yaml.safe_dump(job))

    run = _run_job(tmp_path, job_yml, record_writes=True)

    # Rank 1 wrote into the read-only input: fine as root here, a failed job on a mount.
    assert run.returncodes == [0, 0], run.tails()
    assert not run.ok and run.input_changes == {"data@node-0": ["stray"]}
    seen = [json.loads(run.log(i).strip().splitlines()[-1]) for i in range(2)]
    for rank, probe_out in enumerate(seen):
        env = probe_out["env"]
        code = Path(probe_out["cwd"])
        # The code snapshot is the working directory and the only tunegate code importable.
        assert Path(probe_out["trainer"]) == code / "trainer" / "__init__.py"
        assert env["AZUREML_CR_EXECUTION_WORKING_DIR_PATH"] == str(code)
        # ${{inputs.data}} / ${{outputs.model}} are the mounted folders; $NODE_RANK expanded.
        assert probe_out["argv"] == [env["AZURE_ML_INPUT_data"], env["AZURE_ML_OUTPUT_model"], "0"]
        assert (env["RANK"], env["LOCAL_RANK"], env["WORLD_SIZE"]) == (str(rank), str(rank), "2")
        assert env["MASTER_ADDR"] == "127.0.0.1" and env["NODE_RANK"] == "0"
        assert env["PYTHONUNBUFFERED"] == "1"  # the job's environment_variables
        assert env["AZUREML_ARM_PROJECT_NAME"] == "tunegate-job-command"
        assert env["AZUREML_RUN_ID"].startswith(job["name"])
        # the job is an MLflow run of its own (Azure ML's MLFLOW_RUN_ID wins over the job's);
        # the trainer logs into the flow's run all the same
        assert probe_out["run"] == list(flow_run) and env["MLFLOW_RUN_ID"] != flow_run[1]
    assert seen[0]["env"]["MASTER_PORT"] == seen[1]["env"]["MASTER_PORT"]
    # Both processes' files were uploaded to the job's output; each is seen writing its own.
    assert sorted(p.name for p in (tmp_path / "model").iterdir()) == ["rank-0", "rank-1"]
    assert run.writes == {"0": ["rank-0"], "1": ["rank-1"]}


def _tracked_job_variables(tmp_path: Path, uri: str, run_id: str) -> dict[str, str]:
    """The variables `training_job` gives a job whose spec names the flow's MLflow run."""
    spec = TrainSpec(
        name="train-0123",
        data_dir=str(tmp_path),
        args={"task": "extractive-qa", "model": PACKAGED_MODEL},
        tracking_uri=uri,
        tracking_run_id=run_id,
    )
    config = AzureMLConfig.model_validate({})
    job = training_job(spec, config, tmp_path, "azureml:tunegate-split:1")
    return {k: v for k, v in job.environment_variables.items() if "MLFLOW" in k}


@pytest.mark.slow
def test_torchrun_launcher_two_processes_train_one_model(tmp_path: Path) -> None:
    """`launcher: torchrun`: Azure ML's PyTorch distribution starts the command twice on the
    node, with RANK 0 and 1; they train together (gloo) and only rank 0 writes the model."""
    job_yml = _export(tmp_path, {"launcher": "torchrun", "gpus_per_node": 2})

    run = _run(tmp_path, job_yml, record_writes=True)

    for rank in (0, 1):
        assert f"process {rank} of 2 (local {rank}) on cpu" in run.log(rank), run.tails()
        assert "distributed backend gloo" in run.log(rank)
    # Rank 1 opened no output file for writing; rank 0 wrote the adapter and the model's info.
    assert set(run.writes) == {"0"}, run.writes
    assert {"adapter_config.json", "model_info.json", "metrics.json"} <= set(run.writes["0"])
    metrics = json.loads((tmp_path / "model" / "metrics.json").read_text())
    assert metrics["world_size"] == 2 and metrics["train_records"] == 24
    _assert_the_model_loads_and_answers(tmp_path / "model")


@pytest.mark.slow
def test_accelerate_launcher_one_process_trains_at_the_configured_precision(
    tmp_path: Path,
) -> None:
    """`launcher: accelerate` with the ddp config (mixed_precision bf16) on one CPU process: the
    trainer's precision (auto: fp32 on CPU) wins over the accelerate config's."""
    job_yml = _export(tmp_path, {"launcher": "accelerate", "gpus_per_node": 1})
    assert yaml.safe_load(job_yml.read_text())["command"].startswith("accelerate launch")

    run = _run(tmp_path, job_yml)

    assert "process 0 of 1 (local 0) on cpu" in run.log(), run.tails()
    saved = torch.load(tmp_path / "model" / "training_args.bin", weights_only=False)
    assert saved.mixed_precision == "no" and not saved.bf16
    _assert_the_model_loads_and_answers(tmp_path / "model")


@pytest.mark.slow
def test_multi_node_accelerate_takes_its_machine_rank_from_the_node(tmp_path: Path) -> None:
    """Two nodes, one process each, `accelerate launch --machine_rank $NODE_RANK ...`: the nodes
    join one job of world size 2, and only node 0 uploads a model."""
    job_yml = _export(tmp_path, {"launcher": "accelerate", "gpus_per_node": 1, "instance_count": 2})

    run = _run(tmp_path, job_yml)

    for node in (0, 1):
        assert f"process {node} of 2 (local 0) on cpu" in run.log(node), run.tails()
    assert run.node_outputs[1] == {"model": []}
    assert "adapter_model.safetensors" in run.node_outputs[0]["model"]
    _assert_the_model_loads_and_answers(tmp_path / "model")


@pytest.mark.slow
def test_the_evaluation_job_scores_and_screens_what_it_predicted(tmp_path: Path) -> None:
    """The exported `evaluate-job.yml` of a chat run on a node: base, candidate and champion
    predict the test split as the evaluate stage would here; the job scores each with the
    metric code the stage scores with (each record's score too: the bootstrap's) and screens the
    candidate's replies under the run's screen config, which staged it: a candidate that writes
    an e-mail address no input held is found leaking in the job's report. Its output holds the
    predictions and those two reports, nothing else."""
    from screening.config import ScreenConfig
    from screening.outputs import OutputScreen
    from tests.trainer.tiny import chat_model, chat_record
    from trainer.args import EVALUATION_FILES
    from trainer.evaluate import predict_models
    from trainer.metrics import score_records

    address = "jorge.pereira@contoso.com"
    config = {
        "task": "chat",
        "store": str(tmp_path / "store"),
        "train": {"backend": "azureml", "epochs": 1},
        "screen": {"max_samples": 5},  # the run's screen config: the job screens under it
        "azureml": {"compute": {"size": "Standard_NC24ads_A100_v4"}},
    }
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
    out = tmp_path / "export"
    exported = CliRunner().invoke(
        app, ["azureml", "export", "-c", str(tmp_path / "config.yaml"), "--out", str(out)]
    )
    assert exported.exit_code == 0, exported.output
    data = write_dataset(tmp_path, TaskType.chat, chat_record, n=2)
    test = [chat_record(i) for i in range(100, 103)]
    (data / "test").mkdir()
    pq.write_table(pa.Table.from_pylist(test), data / "test" / "part-00000.parquet")
    base = chat_model(tmp_path / "base", "packaged:minilm-decoder")
    candidate = chat_model(tmp_path / "candidate", str(base), writes=address)
    champion = chat_model(tmp_path / "champion", str(base))
    job = yaml.safe_load((out / "evaluate-job.yml").read_text())
    assert job["inputs"]["candidate"]["path"].endswith("/outputs/model")  # the training job's
    # as `tunegate run` submits it when there is a champion
    job["inputs"]["champion"] = {"type": "custom_model", "mode": "ro_mount", "path": "x"}
    predicting, screening = job["command"].split(" && ")
    job["command"] = f"{predicting} --champion '${{{{inputs.champion}}}}' && {screening}"
    (out / "evaluate-job.yml").write_text(yaml.safe_dump(job))

    run = run_job(
        out / "evaluate-job.yml",
        inputs={"data": data, "candidate": candidate, "champion": champion},
        outputs={"evaluation": tmp_path / "evaluation"},
        workdir=tmp_path / "eval-job",
        timeout=300,
    )

    assert run.ok, run.tails()
    assert run.node_outputs[0]["evaluation"] == sorted(EVALUATION_FILES)
    made = json.loads((tmp_path / "evaluation" / "predictions.json").read_text())
    assert made["predictions"] == predict_models(test, candidate, champion)
    scores = json.loads((tmp_path / "evaluation" / "scores.json").read_text())
    assert scores["metric"] == "rouge" and scores["test_records"] == 3
    for name in ("base", "candidate", "champion"):
        metrics, per_example = score_records("chat", made["predictions"][name], test)
        assert scores["models"][name] == {"metrics": metrics, "per_example": per_example}
    screen = OutputScreen.model_validate_json(
        (tmp_path / "evaluation" / "output-screen.json").read_text()
    )
    assert screen.applies(ScreenConfig(max_samples=5), 3)  # the run's config, not the defaults
    assert not screen.applies(ScreenConfig(), 3)
    assert screen.leaks == 3
    replies = made["predictions"]["candidate"]
    emails = [f for f in screen.findings if f.entity == "EMAIL_ADDRESS"]
    assert {f.prediction for f in emails} == {0, 1, 2} and not any(f.in_input for f in emails)
    assert all(replies[f.prediction][f.start : f.end] == address for f in emails)
    assert address not in " ".join(screen.masked)


@pytest.mark.slow  # 10 s in-process
def test_the_evaluation_job_writes_the_mlflow_model_an_export_registers(tmp_path: Path) -> None:
    """With azureml.model_type mlflow_model, the exported evaluation job's last step on a node,
    from its staged code alone: the candidate as an MLflow model in its `mlflow_model` output,
    which `mlflow.pyfunc` loads and which answers as the scoring code does."""
    import mlflow.pyfunc

    from serving.mlflow_model import model_files
    from serving.runtimes import sha256_path
    from serving.scoring import Scorer
    from tests.trainer.tiny import chat_model
    from trainer.taskspec import task_spec

    config = {
        "task": "chat",
        "store": str(tmp_path / "store"),
        "train": {"backend": "azureml", "epochs": 1},
        "azureml": {"model_type": "mlflow_model"},
    }
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
    out = tmp_path / "export"
    exported = CliRunner().invoke(
        app, ["azureml", "export", "-c", str(tmp_path / "config.yaml"), "--out", str(out)]
    )
    assert exported.exit_code == 0, exported.output
    job = yaml.safe_load((out / "evaluate-job.yml").read_text())
    job["command"] = job["command"].split(" && ")[-1]  # the MLflow model's step, as exported
    job["inputs"] = {"candidate": job["inputs"]["candidate"]}
    job["outputs"] = {"mlflow_model": job["outputs"]["mlflow_model"]}
    (out / "evaluate-job.yml").write_text(yaml.safe_dump(job))
    candidate = chat_model(tmp_path / "candidate", "packaged:minilm-decoder")

    run = run_job(
        out / "evaluate-job.yml",
        inputs={"candidate": candidate},
        outputs={"mlflow_model": tmp_path / "mlflow"},
        workdir=tmp_path / "eval-job",
        timeout=120,
    )

    assert run.ok, run.tails()
    assert "MLmodel" in run.node_outputs[0]["mlflow_model"]
    assert sha256_path(model_files(tmp_path / "mlflow")) == sha256_path(candidate)
    requirements = (tmp_path / "mlflow" / "requirements.txt").read_text().split()
    assert any(r.startswith("mlflow==") for r in requirements)
    model = mlflow.pyfunc.load_model(str(tmp_path / "mlflow"))
    requests = [task_spec("chat").request_example]
    assert model.predict(requests) == Scorer(candidate).score(requests)


@pytest.mark.slow
def test_deepspeed_zero3_on_two_cpu_processes(tmp_path: Path, deepspeed_cpu_ops: None) -> None:
    """`accelerate_config: deepspeed_zero3` on a node with 2 processes (DeepSpeed's CPU
    accelerator, gloo): each rank loads only its shard of the model (zero3_init_flag: the model
    is created after TrainingArguments), and the model the job writes, its adapter and its
    merged weights, is whole. (ZeRO-2 on two processes, killed and resumed: the local training
    backend's tests.)"""
    job_yml = _export(
        tmp_path,
        {"launcher": "accelerate", "gpus_per_node": 2, "accelerate_config": "deepspeed_zero3"},
    )

    run = _run(tmp_path, job_yml)

    for rank in (0, 1):
        assert f"process {rank} of 2 (local {rank}) on cpu" in run.log(), run.tails()
    line = next(x for x in run.log().splitlines() if "DeepSpeed ZeRO stage" in x)
    held, total = map(int, re.search(r"holds (\d+) of the model's (\d+)", line).groups())
    assert "partitioned at load: yes" in line and held < 0.6 * total, line
    _assert_the_model_loads_and_answers(tmp_path / "model")
