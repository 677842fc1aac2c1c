"""A registered model folder as an MLflow model answers as the endpoint does: loaded in-process by
`mlflow.pyfunc.load_model`, and served by `mlflow models serve --env-manager local`."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from mlflow.exceptions import MlflowException

from serving import runtimes
from serving.client import EndpointClient
from serving.mlflow_model import model_files, requests_of, write_mlflow_model
from serving.payloads import parse_record
from serving.runtimes import sha256_path
from serving.scoring import Scorer
from tests.prefect_server import SERVE_START_SECONDS, free_port, stop, wait_until
from trainer.modeling import MODEL_INFO
from trainer.taskspec import TASK_SPECS, task_spec

# The README's request (the task's request example) and two more: one context longer than a
# window (the QA stride), one question the context does not answer.
EXAMPLE = task_spec("extractive-qa").request_example
RECORDS: list[dict[str, Any]] = [
    EXAMPLE,
    {
        "question": "Which courier delivered the replacement?",
        "context": " ".join(["The warehouse logged the parcel at the depot."] * 60)
        + " The replacement was delivered by Northwind Couriers on Friday.",
    },
    {"question": "What colour is the kettle?", "context": "The ticket was closed on Monday."},
]


NAME = "tunegate-extractive-qa"


@pytest.fixture(scope="module")
def store(qa_model_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store whose registry holds qa_model_dir as NAME@champion (registered as a run does)."""
    from platforms.lineage import Lineage
    from platforms.registry import MlflowRegistry

    root = tmp_path_factory.mktemp("store")
    registry = MlflowRegistry.local(root)
    version = registry.register(NAME, qa_model_dir, {"f1": 1.0}, Lineage())
    registry.set_alias(NAME, "champion", version.version)
    return root


@pytest.fixture(scope="module")
def mlflow_dir(store: Path) -> Path:
    """The champion's files: the MLflow model the registry wrote (serving/mlflow_model.py)."""
    from platforms.registry import MlflowRegistry

    champion = MlflowRegistry.local(store).alias(NAME, "champion")
    assert champion is not None and champion.model_subdir
    return Path(champion.root)


def test_mlflow_model_holds_the_model_folder_unchanged_and_answers_as_the_scorer(
    mlflow_dir: Path, qa_model_dir: Path
) -> None:
    import mlflow.pyfunc

    files = model_files(mlflow_dir)
    assert sha256_path(files) == sha256_path(qa_model_dir)
    model = mlflow.pyfunc.load_model(str(mlflow_dir))
    signature = model.metadata.signature
    assert signature.inputs.input_names() == ["question", "context"]
    assert signature.outputs.input_names() == ["answer", "score", "start", "end"]
    assert json.loads((mlflow_dir / "input_example.json").read_text()) == [EXAMPLE]
    requirements = (mlflow_dir / "requirements.txt").read_text().split()
    assert {r.split("==")[0] for r in requirements} >= {"mlflow", "torch", "onnxruntime"}
    assert all("==" in r and "+" not in r for r in requirements)  # pinned, installable from PyPI

    expected = Scorer(qa_model_dir).score(RECORDS)
    assert model.predict(RECORDS) == expected
    assert all(list(answer) == signature.outputs.input_names() for answer in expected)
    shown = task_spec("extractive-qa").response_example  # the docs' answer to the example
    assert EXAMPLE["context"][shown["start"] : shown["end"]] == shown["answer"]
    with pytest.raises(MlflowException, match="missing inputs \\['context'\\]"):
        model.predict([{"question": "no context"}])


def test_mlflow_is_pinned_at_mlflow_skinny_s_version_where_only_that_is_installed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The Azure ML job's image has mlflow-skinny (MLflow's code) and no `mlflow`: the MLflow
    model its evaluation job writes still pins the MLflow it was written with."""
    from importlib.metadata import PackageNotFoundError, version

    from serving import mlflow_model

    def installed(name: str) -> str:
        if name == "mlflow":
            raise PackageNotFoundError(name)
        return version(name)

    monkeypatch.setattr(mlflow_model, "version", installed)
    pins = mlflow_model.requirements()
    assert f"mlflow=={version('mlflow-skinny')}" in pins
    assert not any(pin.startswith("mlflow-skinny") for pin in pins)


def test_serving_files_changed_since_registration_are_refused(
    qa_model_dir: Path, tmp_path: Path
) -> None:
    """A folder whose exported runtime no longer matches `serving.json`'s hash is never written
    as an MLflow model (the endpoint refuses it too)."""
    folder = tmp_path / "model"
    folder.mkdir()
    shutil.copy(qa_model_dir / MODEL_INFO, folder)
    graph = folder / runtimes.FOLDER / "onnx" / runtimes.SPAN_GRAPH
    graph.parent.mkdir(parents=True)
    graph.write_bytes(b"graph as registered")
    record = {"runtime": "onnx", "path": "serving/onnx", "sha256": sha256_path(graph.parent)}
    (folder / runtimes.SERVING_FILE).write_text(json.dumps(record))
    graph.write_bytes(b"graph changed since")
    with pytest.raises(ValueError, match="does not match the hash"):
        write_mlflow_model(folder, tmp_path / "mlflow")
    assert not (tmp_path / "mlflow").exists()


@pytest.mark.parametrize("task", [spec.name for spec in TASK_SPECS.values()])
def test_every_tasks_request_passes_its_mlflow_signature_unchanged(task: str) -> None:
    """What MLflow makes of a task's requests under the signature written from its example
    (a DataFrame; chat's messages nested) reaches the scoring code as the requests sent."""
    from mlflow.models import infer_signature
    from mlflow.models.utils import _enforce_schema

    spec = task_spec(task)
    assert next(iter(spec.response_example)) == spec.response_key  # as every kind responds
    requests = [spec.request_example, spec.request_example]
    enforced = _enforce_schema(requests, infer_signature(requests[:1]).inputs)
    assert requests_of(enforced) == requests
    assert [parse_record(spec.trainer_task, r) for r in requests_of(enforced)] == requests


@pytest.mark.slow
def test_mlflow_models_serve_answers_the_readme_request_as_the_endpoint(
    store: Path, client: EndpointClient, tmp_path: Path
) -> None:
    """`mlflow models serve -m models:/NAME@champion` on the store's registry (this venv's
    mlflow, tunegate's code from the model) answers the endpoint's batch request with the
    endpoint's answers."""
    from platforms import tracking

    body = {"inputs": RECORDS}
    endpoint = client.score(body, deployment="blue").body  # blue serves qa_model_dir
    port, log = free_port(), tmp_path / "serve.log"
    bin_dir = Path(sys.executable).parent  # mlflow starts `uvicorn` from PATH: the venv's
    command = [str(bin_dir / "mlflow"), "models", "serve"]
    command += ["-m", f"models:/{NAME}@champion", "--env-manager", "local", "--workers", "1"]
    command += ["--port", str(port), "--host", "127.0.0.1"]
    with log.open("wb") as out:
        server = subprocess.Popen(
            command,
            env={
                **os.environ,
                "HF_HUB_OFFLINE": "1",
                "PATH": f"{bin_dir}:{os.environ['PATH']}",
                "MLFLOW_TRACKING_URI": tracking.local_tracking_uri(store),
            },
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # stop() ends its process group: the server and its worker
        )
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60) as http:
            wait_until(lambda: _pings(http), server, log, SERVE_START_SECONDS)
            served = http.post("/invocations", json=body)
            refused = http.post("/invocations", json={"inputs": [{"question": "no context"}]})
    finally:
        stop(server)
    assert served.status_code == 200, served.text
    assert served.json() == {"predictions": endpoint["outputs"]}
    assert refused.status_code == 400
    assert "context" in refused.text


def _pings(http: httpx.Client) -> bool:
    try:
        return http.get("/ping").status_code == 200
    except httpx.TransportError:
        return False
