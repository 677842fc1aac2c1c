"""The GPU check's steps that are not a command of their own (benchmarks/gpu_check.py runs each
in its own process, with its timeout):

    python benchmarks/gpu_check_steps.py data --out DIR
    python benchmarks/gpu_check_steps.py evaluate-job --model-dir M --data D --work W --result R
    python benchmarks/gpu_check_steps.py onnx --model-dir M --data D --work W --result R

`data`: a split dataset of generated sample tickets (samples/), 24 train, 6 validation and 6 test
records of extractive QA. `evaluate-job`: `tunegate azureml export` of a LoRA QA run, then its
`evaluate-job.yml` run here as Azure ML runs it on a node (tests/azureml/job_runner.py), with the
trained model as its candidate. `onnx`: the model exported as serving exports it
(serving/runtimes.py) and loaded with ONNX Runtime's providers; it answers the test records.
Each writes `--result`: {"status": ..., and what it found}.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

SPLITS = {"train": 24, "validation": 6, "test": 6}
MAX_LENGTH, DOC_STRIDE = 128, 32  # as benchmarks/gpu_check.py trains


def write_data(out: Path) -> None:
    """The generated sample's first valid QA records, split in order, one parquet file each."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from samples.generate import valid_records
    from trainer.taskspec import task_spec

    records = valid_records("extractive-qa", sum(SPLITS.values()), seed=40)
    schema = task_spec("extractive-qa").record_schema
    for split, n in SPLITS.items():
        (out / split).mkdir(parents=True, exist_ok=True)
        rows, records = records[:n], records[n:]
        pq.write_table(pa.Table.from_pylist(rows, schema=schema), out / split / "part-0.parquet")
    print(f"{SPLITS} records written to {out}")


def evaluate_job(
    model_dir: Path, data: Path, work: Path, model: str, timeout: float
) -> dict[str, Any]:
    """The exported evaluation job of `model_dir` on this machine, as a node runs it."""
    import yaml

    from tests.azureml.job_runner import run_job

    work.mkdir(parents=True, exist_ok=True)
    config = {
        "task": "extractive-qa",
        "store": str(work / "store"),
        "train": {"backend": "azureml", "epochs": 1, "lora": True}
        | ({"model": model} if model else {}),
        "azureml": {"compute": {"size": "Standard_NC24ads_A100_v4"}},
    }
    (work / "config.yaml").write_text(yaml.safe_dump(config))
    export = [
        sys.executable,
        "-m",
        "cli.main",
        "azureml",
        "export",
        "-c",
        str(work / "config.yaml"),
    ]
    exported = subprocess.run(
        [*export, "--out", str(work / "export")], cwd=ROOT, capture_output=True, text=True
    )
    if exported.returncode != 0:  # its steps' listing is long: printed only when it failed
        print(exported.stdout, exported.stderr)
        return {"status": "failed", "reason": f"the export exited {exported.returncode}"}
    started = time.perf_counter()
    run = run_job(
        work / "export" / "evaluate-job.yml",
        inputs={"data": data, "candidate": model_dir},
        outputs={"evaluation": work / "evaluation"},
        workdir=work / "job",
        timeout=timeout,
    )
    print(f"job command: {run.command}\n{run.tails(6000)}")
    result: dict[str, Any] = {
        "status": "passed" if run.ok else "failed",
        "job_seconds": round(time.perf_counter() - started, 1),
        "exit_codes": run.returncodes,
        "outputs": run.node_outputs[0]["evaluation"],
    }
    scores = work / "evaluation" / "scores.json"
    if scores.is_file():
        models = json.loads(scores.read_text())["models"]
        result["metrics"] = {name: m["metrics"] for name, m in models.items() if m}
    return result


def onnx_serving(model_dir: Path, data: Path, work: Path) -> dict[str, Any]:
    """The model exported to ONNX and loaded as the endpoint loads it; which providers ONNX
    Runtime has here and which the session runs on; its answers to the test records, timed."""
    import onnxruntime as ort
    import pyarrow.parquet as pq
    import torch

    from serving import runtimes
    from trainer.modeling import load_tokenizer
    from trainer.predict import predict

    started = time.perf_counter()
    folders = runtimes.export(model_dir, work)
    export_seconds = round(time.perf_counter() - started, 1)
    model = runtimes.load(folders["onnx"])
    used = model.session.get_providers()
    records = pq.read_table(data / "test").to_pylist()
    tokenizer = load_tokenizer(str(model_dir))
    started = time.perf_counter()
    answers = predict(
        model, tokenizer, "extractive-qa", records, max_length=MAX_LENGTH, doc_stride=DOC_STRIDE
    )
    result: dict[str, Any] = {
        "onnxruntime": ort.__version__,
        "available_providers": ort.get_available_providers(),
        "session_providers": used,
        "export_seconds": export_seconds,
        "predict_seconds": round(time.perf_counter() - started, 3),
        "answers_in_context": sum(a in r["context"] for a, r in zip(answers, records, strict=True)),
        "records": len(records),
    }
    print(json.dumps(result, indent=2))
    if not all(answers):
        return result | {"status": "failed", "reason": "an empty answer"}
    if "CUDAExecutionProvider" in used:
        return result | {"status": "passed"}
    if not torch.cuda.is_available():
        return result | {"status": "passed", "note": "a CPU run: the CPU provider is the path"}
    return result | {
        "status": "incomplete",
        "reason": "ONNX Runtime here has no CUDAExecutionProvider (the CPU onnxruntime package); "
        "the GPU serving image installs onnxruntime-gpu "
        "(platforms/azureml/locks/tunegate-serving-gpu.txt): carry its wheel to run this on CUDA",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("step", choices=["data", "evaluate-job", "onnx"])
    parser.add_argument("--out", type=Path, help="data: the dataset folder to write")
    parser.add_argument("--model-dir", type=Path, help="The trained model (train-lora's).")
    parser.add_argument("--data", type=Path, help="The split dataset folder.")
    parser.add_argument("--work", type=Path, help="A folder for the step's files.")
    parser.add_argument("--result", type=Path, help="Where the step's result JSON goes.")
    parser.add_argument("--model", default="", help="The base model the export names.")
    parser.add_argument("--job-timeout", type=float, default=240, help="The job's seconds.")
    args = parser.parse_args()
    if args.step == "data":
        write_data(args.out)
        return
    if args.step == "evaluate-job":
        result = evaluate_job(args.model_dir, args.data, args.work, args.model, args.job_timeout)
    else:
        result = onnx_serving(args.model_dir, args.data, args.work)
    args.result.write_text(json.dumps(result, indent=2))
    sys.exit(0 if result["status"] in ("passed", "incomplete") else 1)


if __name__ == "__main__":
    main()
