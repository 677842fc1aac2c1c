"""Base models from the Azure ML model catalog: the job mounts the asset, the trainer finds the
Hugging Face files in it and the trained model names the asset as its base.

The folder layouts are those of the catalog's models (azureml-assets `model_selector.py`
FLAVOR_MAP, and the `MLmodel` of each model's spec): MLflow's `transformers` flavor (t5-base:
`model/`, `components/tokenizer/`), Azure ML's `hftransformersv2` (Mistral, Phi-3.5, Llama:
`data/model/`, `data/tokenizer/`, `data/config/`), and a plain `save_pretrained` folder.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml
from azure.ai.ml import load_job
from transformers import AutoConfig
from typer.testing import CliRunner

from cli.main import app
from tasks.records import TaskType
from tests.azureml.job_runner import run_job
from tests.trainer.tiny import qa_record, tiny_model, write_dataset
from trainer import model_paths
from trainer.args import PACKAGED_MODEL
from trainer.model_paths import MOUNTS_VARIABLE
from trainer.modeling import load_tokenizer, load_trained, resolve_model
from trainer.predict import predict

ROOT = Path(__file__).resolve().parents[2]
CATALOG_T5 = "azureml://registries/azureml/models/t5-base/versions/18"
PACKAGED = Path(resolve_model(PACKAGED_MODEL))
MODEL_FILES = ("config.json", "model.safetensors")
TOKENIZER_FILES = (
    "tokenizer.json",
    "tokenizer_config.json",
    "vocab.txt",
    "special_tokens_map.json",
)
MLMODEL = "flavors:\n  python_function: {}\n"

# layout: ({folder: files in it}, the model's folder, the tokenizer's folder)
LAYOUTS = {
    "save_pretrained": ({".": MODEL_FILES + TOKENIZER_FILES}, ".", "."),
    "mlflow-transformers": (
        {".": ("MLmodel",), "model": MODEL_FILES, "components/tokenizer": TOKENIZER_FILES},
        "model",
        "components/tokenizer",
    ),
    "hftransformersv2": (
        {
            ".": ("MLmodel",),
            "data/config": ("config.json",),  # a config without weights: not the model
            "data/model": MODEL_FILES,
            "data/tokenizer": TOKENIZER_FILES,
        },
        "data/model",
        "data/tokenizer",
    ),
    "nested-model-dir": ({"model_dir": MODEL_FILES + TOKENIZER_FILES}, "model_dir", "model_dir"),
}


def _lay_out(root: Path, folders: dict[str, tuple[str, ...]], source: Path = PACKAGED) -> Path:
    """The model at `source` in `folders` under `root` (links, not copies; MLmodel a stub)."""
    for folder, names in folders.items():
        (root / folder).mkdir(parents=True, exist_ok=True)
        for name in names:
            if name == "MLmodel":
                (root / folder / name).write_text(MLMODEL)
            else:
                (root / folder / name).symlink_to(source / name)
    return root


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_the_model_and_its_tokenizer_are_found_in_each_catalog_layout(
    tmp_path: Path, layout: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    folders, model_at, tokenizer_at = LAYOUTS[layout]
    root = _lay_out(tmp_path / "mount", folders)
    assert model_paths.model_folder(root) == root / model_at
    monkeypatch.setenv(MOUNTS_VARIABLE, json.dumps({CATALOG_T5: str(root)}))
    # What the trainer loads: the reference resolves to the folders inside the mount.
    assert Path(resolve_model(CATALOG_T5)) == root / model_at
    assert Path(resolve_model(CATALOG_T5, "tokenizer")) == root / tokenizer_at
    assert AutoConfig.from_pretrained(resolve_model(CATALOG_T5)).model_type == "bert"
    assert load_tokenizer(CATALOG_T5)("a ticket")["input_ids"][0] == 101  # [CLS]
    # A local folder in the same layout resolves the same way.
    assert Path(resolve_model(str(root))) == root / model_at


def test_a_reference_the_job_did_not_mount_or_a_folder_without_a_model_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(MOUNTS_VARIABLE, raising=False)
    with pytest.raises(FileNotFoundError, match=f"{CATALOG_T5} is an Azure ML model asset"):
        resolve_model(CATALOG_T5)
    empty = tmp_path / "mount"
    (empty / "data").mkdir(parents=True)
    (empty / "MLmodel").write_text(MLMODEL)
    monkeypatch.setenv(MOUNTS_VARIABLE, json.dumps({CATALOG_T5: str(empty)}))
    with pytest.raises(FileNotFoundError, match=r"no config\.json in .*\['MLmodel', 'data'\]"):
        resolve_model(CATALOG_T5)
    # A local folder that holds no model (here a tokenizer's) is left to transformers, as before.
    tokenizer_only = _lay_out(tmp_path / "tokenizer", {".": TOKENIZER_FILES})
    assert resolve_model(str(tokenizer_only), "tokenizer") == str(tokenizer_only)
    # Hub ids and the packaged model are not folders here: unchanged.
    assert resolve_model("google-t5/t5-base") == "google-t5/t5-base"
    assert Path(resolve_model(PACKAGED_MODEL)) == PACKAGED


def _export(tmp_path: Path, model: str, **azureml: object) -> dict:
    config = {
        "task": "extractive-qa",
        "store": str(tmp_path / "store"),
        "train": {
            "backend": "azureml",
            "model": model,
            "epochs": 1,
            "batch_size": 8,
            "max_length": 96,
            "lora": True,
            "args": {"doc_stride": 32, "logging_steps": 1, "lora_target_modules": ["query"]},
        },
        "azureml": {"launch": {"launcher": "accelerate", "accelerate_config": "single"}, **azureml},
    }
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    out = tmp_path / "export"
    result = CliRunner().invoke(app, ["azureml", "export", "-c", str(path), "--out", str(out)])
    assert result.exit_code == 0, result.output
    return {"out": out, "yml": out / "job.yml", "job": load_job(out / "job.yml")}


@pytest.mark.parametrize(
    ("model", "input_type"),
    [
        (CATALOG_T5, "mlflow_model"),
        (
            "azureml://registries/azureml-meta/models/Meta-Llama-3-8B-Instruct/versions/9",
            "mlflow_model",
        ),
        ("azureml:our-base:3", "custom_model"),
    ],
)
def test_a_model_asset_is_a_mounted_input_and_the_hub_stays_offline(
    tmp_path: Path, model: str, input_type: str
) -> None:
    exported = _export(tmp_path, model)
    job = exported["job"]
    base = job.inputs["base_model"]
    assert (base.type, base.mode) == (input_type, "ro_mount")
    assert yaml.safe_load(exported["yml"].read_text())["inputs"]["base_model"]["path"] == model
    assert job.environment_variables["HF_HUB_OFFLINE"] == "1"
    # The trainer gets the reference; the command maps it to the mount.
    assert f"--model {model} " in job.command
    mounts = job.command.split(f"{MOUNTS_VARIABLE}=", 1)[1].split("' ", 1)[0].strip("'")
    assert json.loads(mounts) == {model: "${{inputs.base_model}}"}


def test_a_hub_id_goes_online_and_the_configured_type_wins(tmp_path: Path) -> None:
    job = _export(tmp_path / "hub", "meta-llama/Meta-Llama-3-8B-Instruct")["job"]
    assert "base_model" not in job.inputs and MOUNTS_VARIABLE not in job.command
    assert job.environment_variables["HF_HUB_OFFLINE"] == "0"
    packaged = _export(tmp_path / "packaged", PACKAGED_MODEL)["job"]
    assert packaged.environment_variables["HF_HUB_OFFLINE"] == "1"
    typed = _export(tmp_path / "typed", CATALOG_T5, job={"model_input_type": "custom_model"})
    assert typed["job"].inputs["base_model"].type == "custom_model"
    # Added variables reach the job; they win over tunegate's.
    tuned = _export(
        tmp_path / "vars",
        "meta-llama/Meta-Llama-3-8B-Instruct",
        job={"environment_variables": {"NCCL_DEBUG": "INFO", "HF_HUB_OFFLINE": 1}},
    )["job"]
    assert tuned.environment_variables["NCCL_DEBUG"] == "INFO"
    assert tuned.environment_variables["HF_HUB_OFFLINE"] == "1"


def test_a_local_folder_or_a_malformed_reference_is_refused_naming_train_model(
    tmp_path: Path,
) -> None:
    for model, message in [
        (str(PACKAGED), "is a folder on this machine"),
        ("azureml:no-version", "is not an Azure ML model reference"),
        ("azureml://registries/azureml/models/t5-base", "is not an Azure ML model reference"),
    ]:
        config = tmp_path / "config.yaml"
        config.write_text(
            yaml.safe_dump(
                {"task": "extractive-qa", "train": {"backend": "azureml", "model": model}}
            )
        )
        result = CliRunner().invoke(
            app, ["azureml", "export", "-c", str(config), "--out", str(tmp_path / "out")]
        )
        assert result.exit_code == 2, result.output
        assert f"train.model {model}" in result.output and message in result.output


@pytest.mark.slow
def test_the_job_trains_on_a_mounted_catalog_model_and_names_it_as_the_base(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The exported job's command, run as Azure ML runs it (tests/azureml/job_runner.py) with the
    `base_model` input a read-only folder in the hftransformersv2 layout (a tiny BERT): the
    trainer loads it from the mount, offline, and the trained model's base is the reference."""
    reference = "azureml://registries/azureml/models/tiny-bert/versions/1"
    tiny = tiny_model(tmp_path, "bert")
    catalog = tmp_path / "catalog"
    (catalog / "data").mkdir(parents=True)
    shutil.copytree(
        tiny,
        catalog / "data" / "model",
        ignore=shutil.ignore_patterns("tok*", "vocab*", "special*"),
    )
    shutil.copytree(
        tiny,
        catalog / "data" / "tokenizer",
        ignore=shutil.ignore_patterns("*.safetensors", "config.json"),
    )
    (catalog / "MLmodel").write_text(MLMODEL)
    exported = _export(tmp_path, reference)

    run = run_job(
        exported["yml"],
        inputs={
            "data": write_dataset(tmp_path, TaskType.extractive_qa, qa_record, n=24),
            "base_model": catalog,
        },
        outputs={"model": tmp_path / "model", "checkpoints": tmp_path / "checkpoints"},
        workdir=tmp_path / "job",
        timeout=300,
    )

    assert run.ok, run.tails()
    assert run.env[0]["HF_HUB_OFFLINE"] == "1"  # nothing from the hub
    # The command mapped the reference to the node's read-only copy of the input.
    assert json.dumps({reference: run.env[0]["AZURE_ML_INPUT_base_model"]}) in run.command
    info = json.loads((tmp_path / "model" / "model_info.json").read_text())
    assert info["base_model"] == reference
    # Wherever the asset is mounted next (evaluation, serving), the model loads from it.
    monkeypatch.setenv(MOUNTS_VARIABLE, json.dumps({reference: str(catalog)}))
    model, tokenizer, _ = load_trained(tmp_path / "model")
    [answer] = predict(
        model, tokenizer, "extractive-qa", [qa_record(100)], max_length=96, doc_stride=32
    )
    assert isinstance(answer, str)
