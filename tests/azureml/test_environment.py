"""The Azure ML environment is the trainer's environment: every pin is constraints.txt's, and
every package the trainer and the scoring code import is listed."""

from __future__ import annotations

import ast
import importlib.metadata
import re
import sys
from pathlib import Path

import pytest
from azure.ai.ml import load_environment, load_job, load_online_deployment
from typer.testing import CliRunner

from cli.main import app
from platforms.azureml.config import EndpointConfig
from platforms.azureml.environment import (
    ENV_NAME,
    SERVING,
    SERVING_GPU,
    TRAINING,
    EnvSpec,
    context_version,
    lock_file,
    normalize,
    pins,
    write_context,
)
from screening.finder_table import FINDERS

ROOT = Path(__file__).resolve().parents[2]
FIRST_PARTY = {"trainer", "serving", "screening", "tasks", "platforms", "flows", "cli", "samples"}
# installed in the serving image by the inference server, at its own pin (environment.py says why)
SERVER_PROVIDED = {"pydantic"}
# imported only by screening/data/build/update_person_names.py and update_iban_formats.py,
# which build data files of the repository
BUILD_ONLY = {"names_dataset", "schwifty"}
# imported where installed and left where not: the person reader runs in ONNX Runtime where it
# can and in torch where not, as in the jobs' environment (screening.persons.person_model;
# tests/screening/test_person_model.py::test_without_onnx_runtime_torch_reads_the_same_spans)
OPTIONAL = {"onnxruntime"}
# The modules the table of finders names by string (screening.detectors loads them on first use):
# an import scan that starts from screening.outputs reaches them only through the table.
FINDER_MODULES = tuple(
    sorted({ref.partition(":")[0] for f in FINDERS for ref in (f.find, f.surrogate) if ref})
)
LOCK_LINE = re.compile(r"^([a-z0-9][a-z0-9-]*)==(\S+) --hash=sha256:[0-9a-f]{64}$")


def _constraints() -> dict[str, str]:
    lines = (ROOT / "constraints.txt").read_text().splitlines()
    return {normalize(n): v for n, _, v in (line.partition("==") for line in lines) if v}


def _third_party_imports(*entry_modules: str) -> set[str]:
    """Top-level third-party modules imported by the entry modules and every first-party module
    they import, transitively (what runs in the job and the deployment)."""
    seen: set[str] = set()
    found: set[str] = set()
    todo = list(entry_modules)
    while todo:
        module = todo.pop()
        if module in seen:
            continue
        seen.add(module)
        path = ROOT / Path(*module.split("."))
        file = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
        if not file.exists():
            continue
        for node in ast.walk(ast.parse(file.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            for name in names:
                top = name.split(".")[0]
                if top in FIRST_PARTY:
                    todo.append(name)
                elif top not in sys.stdlib_module_names and top != "__future__":
                    found.add(top)
    return found


@pytest.mark.parametrize(
    "spec", [TRAINING, SERVING, SERVING_GPU], ids=["training", "serving", "serving-gpu"]
)
def test_every_package_the_image_installs_is_locked(tmp_path: Path, spec: EnvSpec) -> None:
    """The image installs its lock and nothing else: every line one package at one version and
    hash, the CUDA wheels torch pulls among them, every listed package at constraints.txt's pin,
    and the lock resolved from today's pins (else: python -m platforms.azureml.lock)."""
    from platforms.azureml.lock import inputs_hash

    context = write_context(tmp_path / spec.folder, spec)
    text = (context / "requirements.txt").read_text()
    assert text == lock_file(spec).read_text()
    lines = text.splitlines()
    assert f"# inputs: {inputs_hash(pins(packages=spec.packages))}" in lines, (
        f"{lock_file(spec)} was resolved from other pins: run python -m platforms.azureml.lock"
    )
    requirements = [line for line in lines if line and not line.startswith("#")]
    locked = {}
    for line in requirements:
        match = LOCK_LINE.match(line)
        assert match, f"not one exact pin with its hash: {line!r}"
        locked[match[1]] = match[2]
    assert len(locked) == len(requirements)  # one version of each package
    constraints = _constraints()
    for package in spec.packages:
        name = normalize(package)
        assert locked[name] == constraints[name], f"{name} differs from constraints.txt"
    assert {"triton", "nvidia-cudnn-cu13", "nvidia-nccl-cu13", "nvidia-cublas"} <= set(locked)
    dockerfile = (context / "Dockerfile").read_text()
    assert "FROM mcr.microsoft.com/azureml/" in dockerfile and ":latest" not in dockerfile
    install = re.search(r"RUN .*?pip install (.*?)(?:\n\S|$)", dockerfile, re.S)
    assert install and "pip install" not in install[1], "one pip install, of the lock only"
    words = install[1].replace("\\", " ").split()
    assert {"--require-hashes", "--no-deps", "-r", "/tmp/tunegate-requirements.txt"} <= set(words)
    assert "pip check" in dockerfile
    # the serving container starts Azure ML's inference server; the training one runs the job
    assert ("exec azmlinfsrv --entry_script" in dockerfile) is spec.serves


@pytest.mark.parametrize(
    ("spec", "entry_modules"),
    [
        # the jobs' code: the trainer and hub_token.py, staged beside it; the evaluation job's
        # also the screen of the candidate's outputs
        (
            TRAINING,
            (
                "trainer.train",
                "trainer.evaluate",
                "screening.outputs",
                "platforms.azureml.hub_token",
            ),
        ),
        # the deployment's: score.py imports serving.scoring and the masker
        (SERVING, ("serving.scoring", "screening.outputs")),
    ],
    ids=["training", "serving"],
)
def test_the_code_each_environment_runs_imports_only_packages_it_lists(
    spec: EnvSpec, entry_modules: tuple[str, ...]
) -> None:
    distributions = importlib.metadata.packages_distributions()
    # what the image installs: the packages listed and what its lock resolved for them (the
    # trainer's mlflow is mlflow-skinny, listed at constraints.txt's MLflow version)
    locked = {
        normalize(line.split("==")[0])
        for line in lock_file(spec).read_text().splitlines()
        if "==" in line and not line.startswith("#")
    }
    listed = {normalize(p) for p in spec.packages} | locked
    imported = _third_party_imports(*entry_modules, *FINDER_MODULES) - SERVER_PROVIDED - BUILD_ONLY
    imported -= OPTIONAL
    assert {"torch", "transformers", "peft"} <= imported  # the scan sees the trainer's imports
    unlisted = {
        module: distributions.get(module)
        for module in imported
        # a module of a package not installed here (the inference server) by its own name
        if not any(normalize(d) in listed for d in distributions.get(module, [module]))
    }
    assert not unlisted, f"imported but not in the {spec.name} environment: {unlisted}"


def test_gpu_instances_serve_with_onnxruntime_gpu_of_the_same_release() -> None:
    """The GPU serving environment is the CPU one with onnxruntime-gpu (the same `onnxruntime`
    module, with a CUDA provider) in place of onnxruntime, at the same version."""
    swapped = [p for p in SERVING_GPU.packages if p not in SERVING.packages]
    assert swapped == ["onnxruntime-gpu"]
    assert [p for p in SERVING.packages if p not in SERVING_GPU.packages] == ["onnxruntime"]
    constraints = _constraints()
    assert constraints["onnxruntime-gpu"] == constraints["onnxruntime"]
    assert constraints["onnxruntime"] == importlib.metadata.version("onnxruntime")
    gpu_sizes = ["Standard_NC24ads_A100_v4", "Standard_NC4as_T4_v3", "Standard_ND96isr_H100_v5"]
    cpu_sizes = ["Standard_DS3_v2", "Standard_F8s_v2", "Standard_NV32as_v4", "Standard_E4s_v3"]
    for size in [*gpu_sizes, "Standard_NV36ads_A10_v5"]:
        assert EndpointConfig(instance_type=size).gpu, size
    for size in cpu_sizes:  # NVv4 is an AMD GPU: neither CUDA torch nor onnxruntime-gpu
        assert not EndpointConfig(instance_type=size).gpu, size


def test_export_builds_the_job_and_the_deployment_on_their_environments(tmp_path: Path) -> None:
    out = tmp_path / "export"
    config = ROOT / "configs" / "azureml" / "llama3-8b-zero3.yaml"
    result = CliRunner().invoke(app, ["azureml", "export", "-c", str(config), "--out", str(out)])
    assert result.exit_code == 0, result.output
    found = {}
    # its endpoint runs on Standard_NC24ads_A100_v4: the GPU serving environment
    assert not (out / SERVING.folder).exists()
    for spec in (TRAINING, SERVING_GPU):
        version = context_version(out / spec.folder)
        environment = load_environment(out / f"{spec.folder}.yml")
        assert (environment.name, environment.version) == (spec.name, version)
        assert (out / environment.build.path).resolve() == (out / spec.folder).resolve()
        found[spec.name] = (environment, f"{spec.name}:{version}")
    job, deployment = load_job(out / "job.yml"), load_online_deployment(out / "deployment.yml")
    assert job.environment.removeprefix("azureml:") == found[ENV_NAME][1]
    assert deployment.environment.removeprefix("azureml:") == found[SERVING_GPU.name][1]
    assert "onnxruntime-gpu==" in (out / SERVING_GPU.folder / "requirements.txt").read_text()
    # Azure ML probes and scores the server the serving container starts, on its port
    routes = found[SERVING_GPU.name][0].inference_config
    assert routes["scoringRoute"] == {"path": "/score", "port": 5001}, routes
    assert routes["livenessRoute"] == {"path": "/", "port": 5001}, routes
    assert deployment.environment_variables["TUNEGATE_DTYPE"] == "auto"
    exported = "".join(p.read_text() for p in out.glob("*.yml"))
    assert "acft-hf-nlp-gpu" not in exported  # a curated image only when a config names it
