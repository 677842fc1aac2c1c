"""Azure ML's inference server runs the exported deployment here, as a managed online deployment
runs it.

`azmlinfsrv` is the pip package azureml-inference-server-http at constraints.txt's version, in
the serving environment's own venv (`.venv-serving`, made by `make test`: the server pins older
pydantic and OpenTelemetry than Prefect's). As on an Azure ML instance: the deployment's
`code_configuration` folder (`serve-code/` of `tunegate azureml export`) is the app root
(`AML_APP_ROOT`) and the only tunegate code the server can import, its `scoring_script` is
`AZUREML_ENTRY_SCRIPT`, the registered model is mounted under `AZUREML_MODEL_DIR` (one folder
down), and the deployment's `environment_variables` are set.

The model is a LoRA model whose base model is gone (as a hub id is, offline): what the deployment
loads is the adapter merged at training time (`--merge-adapter`, which Azure ML jobs pass), in
torch, or the ONNX int8 graph its `serving.json` names (served by ONNX Runtime in the server).
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import yaml
from typer.testing import CliRunner

from cli.main import app
from flows.config import load_config
from platforms.azureml.environment import SERVER_PORT, serving_spec
from platforms.lineage import Lineage
from platforms.registry import MlflowRegistry
from serving import runtimes
from serving.scoring import Scorer
from tasks.records import TaskType
from tests.prefect_server import background, free_port, wait_until
from tests.trainer.tiny import qa_record, tiny_model, write_dataset
from trainer.train import main as train

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]
SERVER = ROOT / ".venv-serving" / "bin" / "azmlinfsrv"
CONFIG = ROOT / "configs" / "azureml" / "llama3-8b-zero3.yaml"


@pytest.fixture(scope="module", params=["torch", "onnx-int8"])
def registered(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Path:
    """A LoRA QA model trained here with merged weights, registered; its base model deleted.
    Served in torch, or (as the evaluate stage chooses for a QA model) exported to ONNX, int8,
    with its `serving.json`."""
    tmp = tmp_path_factory.mktemp("lora")
    data = write_dataset(tmp, TaskType.extractive_qa, qa_record)
    base = tiny_model(tmp, "bert")
    out = tmp / "out"
    train(
        [
            *("--task", "extractive-qa", "--model", str(base), "--data-dir", str(data)),
            *("--output-dir", str(out), "--epochs", "1", "--max-length", "64"),
            *("--doc-stride", "16", "--lora", "--merge-adapter"),
        ]
    )
    shutil.rmtree(base)
    if request.param != "torch":
        exported = runtimes.export(out, tmp / "exported")[request.param]
        choice = runtimes.ServingChoice(request.param, {}, [])
        out = tmp / "staged"
        runtimes.stage(tmp / "out", exported, choice, out)
    version = MlflowRegistry.local(tmp / "store").register("tunegate-qa", out, {}, Lineage())
    assert Scorer(Path(version.path)).runtime == request.param
    return Path(version.path)


@pytest.fixture(scope="module")
def server(registered: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    assert SERVER.is_file(), f"{SERVER} is missing: `make test` creates .venv-serving"
    tmp = tmp_path_factory.mktemp("azmlinfsrv")
    result = CliRunner().invoke(
        app, ["azureml", "export", "-c", str(CONFIG), "--out", str(tmp / "export")]
    )
    assert result.exit_code == 0, result.output
    deployment = yaml.safe_load((tmp / "export" / "deployment.yml").read_text())
    app_root = tmp / "var" / "azureml-app" / "serve-code"
    shutil.copytree(tmp / "export" / deployment["code_configuration"]["code"], app_root)
    # Azure ML mounts the model version at azureml-models/<name>/<version>/<its folder>
    model_dir = tmp / "var" / "azureml-app" / "azureml-models" / "tunegate-qa" / "1"
    shutil.copytree(registered, model_dir / registered.name)
    port = free_port()
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONPATH", "VIRTUAL_ENV") and not k.startswith("AZUREML_")
    }
    env |= {k: str(v) for k, v in deployment["environment_variables"].items()}
    env |= {
        "AML_APP_ROOT": str(app_root),
        "AZUREML_ENTRY_SCRIPT": deployment["code_configuration"]["scoring_script"],
        "AZUREML_MODEL_DIR": str(model_dir),
        "HF_HUB_OFFLINE": "1",
    }
    # the serving container's own command (its Dockerfile's CMD), on the serving venv's PATH
    spec = serving_spec(load_config(CONFIG).azureml.endpoint.gpu)  # its instance type's
    dockerfile = (tmp / "export" / spec.folder / "Dockerfile").read_text()
    command = json.loads(re.search(r"^CMD (.+)$", dockerfile, re.MULTILINE).group(1))
    command[-1] = command[-1].replace(f"--port {SERVER_PORT}", f"--port {port}")
    env["PATH"] = f"{SERVER.parent}{os.pathsep}{env['PATH']}"
    log = tmp / "server.log"
    url = f"http://127.0.0.1:{port}"
    with background(command, env, log) as process:
        wait_until(lambda: _live(url), process, log, 120)
        yield url


def _live(url: str) -> bool:
    try:
        return httpx.get(url + "/", timeout=2).status_code == 200
    except httpx.TransportError:
        return False


def test_the_deployment_answers_as_the_model_does_offline(server: str, registered: Path) -> None:
    record = qa_record(3)
    body = {"question": record["question"], "context": record["context"]}
    response = httpx.post(server + "/score", json=body, timeout=60)
    assert response.status_code == 200, response.text
    answer = response.json()
    expected = Scorer(registered).run(json.dumps(body))
    assert answer["answer"] == expected["answer"] and answer["answer"] in record["context"]
    assert answer["start"] == expected["start"]
    batch = httpx.post(server + "/score", json={"inputs": [body, body]}, timeout=60)
    assert batch.status_code == 200 and len(batch.json()["outputs"]) == 2, batch.text


@pytest.mark.parametrize(
    ("body", "says"),
    [
        (b"{not json", "JSON"),
        (json.dumps({"context": "a question is missing"}).encode(), "question"),
    ],
)
def test_a_bad_request_is_the_client_s_error_naming_what_is_wrong(
    server: str, body: bytes, says: str
) -> None:
    response = httpx.post(
        server + "/score", content=body, headers={"Content-Type": "application/json"}, timeout=30
    )
    assert response.status_code == 400, response.text
    assert says in response.json()["error"]


def test_the_liveness_and_readiness_route_the_environment_names(server: str) -> None:
    response = httpx.get(server + "/", timeout=10)  # environment.inference_config's routes
    assert response.status_code == 200 and "Healthy" in response.text, response.text
