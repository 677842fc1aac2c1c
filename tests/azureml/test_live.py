"""Opt-in: a tiny training job on a real Azure ML workspace (`pytest -m azure`).

Skipped unless AZURE_SUBSCRIPTION_ID, AZURE_RESOURCE_GROUP and AZURE_ML_WORKSPACE are set and a
credential is available to `DefaultAzureCredential` (`az login`, a managed identity, or
AZURE_CLIENT_ID / AZURE_TENANT_ID / AZURE_CLIENT_SECRET). It creates (or reuses) a one-node CPU
cluster that scales to zero (TUNEGATE_AZURE_COMPUTE, default tunegate-cpu), trains a tiny
random BERT for two steps, registers it, and checks that a second submit reattaches.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from platforms.azureml import client
from platforms.azureml.config import (
    AzureMLConfig,
    ComputeConfig,
    LaunchConfig,
    WorkspaceConfig,
)
from platforms.azureml.entities import job_output
from platforms.azureml.registry import AzureMLRegistry
from platforms.azureml.training import AzureMLTrainingBackend
from platforms.training import TrainSpec
from trainer.args import EVALUATION_FILES, PACKAGED_MODEL

REQUIRED = ("AZURE_SUBSCRIPTION_ID", "AZURE_RESOURCE_GROUP", "AZURE_ML_WORKSPACE")
pytestmark = [
    pytest.mark.azure,
    pytest.mark.skipif(
        not all(os.environ.get(v) for v in REQUIRED),
        reason="live Azure ML test: set " + ", ".join(REQUIRED),
    ),
]


def _tiny_split(root: Path) -> Path:
    rows = [
        {
            "id": f"q{i}",
            "question": "Who wrote it?",
            "context": f"Report {i} was written by Ada.",
            "answers": {"text": ["Ada"], "answer_start": [len(f"Report {i} was written by ")]},
        }
        for i in range(16)
    ]
    for split in ("train", "validation", "test"):
        (root / split).mkdir(parents=True)
        pq.write_table(pa.Table.from_pylist(rows), root / split / "part-00000.parquet")
    return root


def test_tiny_job_trains_registers_and_a_second_submit_reattaches(tmp_path: Path) -> None:
    config = AzureMLConfig(
        workspace=WorkspaceConfig(
            subscription_id=os.environ["AZURE_SUBSCRIPTION_ID"],
            resource_group=os.environ["AZURE_RESOURCE_GROUP"],
            workspace_name=os.environ["AZURE_ML_WORKSPACE"],
        ),
        experiment="tunegate-live-test",
        compute=ComputeConfig(
            name=os.environ.get("TUNEGATE_AZURE_COMPUTE", "tunegate-cpu"),
            size="Standard_DS3_v2",
            max_nodes=1,
            tier="low_priority",
        ),
        launch=LaunchConfig(launcher="torchrun", timeout_minutes=60),
        data_asset="tunegate-live-test",
        model_name="tunegate-live-test",
    )
    ml_client = client.connect(config.workspace)
    backend = AzureMLTrainingBackend(ml_client, config, tmp_path / "jobs", poll_seconds=20)
    spec = TrainSpec(
        name=f"tunegate-live-{os.environ.get('GITHUB_RUN_ID', os.getpid())}",
        data_dir=str(_tiny_split(tmp_path / "split")),
        args={
            "task": "extractive-qa",
            "model": PACKAGED_MODEL,  # in the environment: nothing comes from the hub
            "max_steps": 2,
            "batch_size": 4,
            "max_length": 64,
        },
    )
    lines: list[str] = []
    job = backend.wait(backend.submit(spec), lines.append)
    assert job.status == "completed", "\n".join(lines[-40:])
    assert backend.submit(spec).reused  # same name: reattached, not submitted twice
    model_dir = backend.fetch_outputs(job)  # what the stages read: the weights stay there
    assert (model_dir / "model_info.json").is_file() and not any(model_dir.rglob("*.safetensors"))
    assert any(backend.fetch_model(job).rglob("*.safetensors"))  # all of it, when asked

    # the evaluation job predicts the test split with the base model and the job's model
    folder = backend.evaluation_job(spec.data_dir, job, None, PACKAGED_MODEL, lines.append)
    made = json.loads((folder / "predictions.json").read_text())
    assert len(made["predictions"]["candidate"]) == made["test_records"] > 0, made
    # scored and screened on the node: only the predictions and those reports came back
    assert sorted(p.name for p in folder.iterdir()) == sorted(EVALUATION_FILES)

    registry = AzureMLRegistry(ml_client, tmp_path / "models")
    version = registry.register(
        config.model_name, job_output(job.name), {"f1": 0.0}, {"training_job": job.name}
    )
    registry.set_alias(config.model_name, "challenger", version.version)
    assert registry.alias(config.model_name, "challenger") == version
