"""GPU check: the trainer, DeepSpeed, the evaluation job and ONNX Runtime serving on one GPU.

One command, each step in its own process with its own timeout, going on past a failed step:
  1. train-lora  `python -m trainer.train`: a few LoRA steps (extractive QA, the packaged MiniLM,
                 24 tiny records), precision `auto`: which one the trainer chose, from its log,
                 against what trainer/precision.py says for this GPU (bf16 from capability 8.0);
  2. deepspeed-zero2  `accelerate launch --config_file trainer/configs/deepspeed_zero2.yaml
                 --num_processes 1 -m trainer.train ...`: the same steps under ZeRO-2;
  3. evaluate-job  the exported `evaluate-job.yml` of that model run as Azure ML runs it on a
                 node (tests/azureml/job_runner.py), on the GPU;
  4. onnx-serving  step 1's model exported as serving does (serving/runtimes.py) and loaded with
                 ONNX Runtime's providers: CUDA where onnxruntime-gpu is installed; with the CPU
                 onnxruntime only, the step says which providers there are instead of failing.
Writes gpu-check.json and gpu-check.md to --out (device, compute capability, precision, each
step's status, seconds, peak GPU memory and log tail); exits 0 when no step failed, 1 otherwise,
2 when the device asked for is not there.

On the device machine (an H200; about 2 minutes of the budget, at most 330 s):
    python3 benchmarks/gpu_check.py --out $OUT
through the device tool: run(command="PYTHONUNBUFFERED=1 python3 benchmarks/gpu_check.py
--out $OUT", timeout_s=420). Its python3 holds CUDA PyTorch; what it lacks (the report names
each module a step missed; docs/benchmarks.md lists them) travels as cp312 wheels in a carried
`.whl` folder, installed into that python3 itself first (`python3 -m pip install --no-index
--no-deps .whl/*.whl`; not `--target` and PYTHONPATH, which the job runner does not pass to the
job's processes, as Azure ML would not). Here, on a CPU, to know it works:
    python benchmarks/gpu_check.py --device cpu --out /tmp/gpu-check
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from benchmarks.gpu_check_report import Step, device_facts, write_report  # noqa: E402
from benchmarks.gpu_memory import PeakMemory  # noqa: E402

STEPS_SCRIPT = ROOT / "benchmarks" / "gpu_check_steps.py"
# Each step's limit in seconds on a GPU; on a CPU (a smoke run) `CPU_SLOWER` times as long.
TIMEOUTS = {"train-lora": 90, "deepspeed-zero2": 120, "evaluate-job": 120, "onnx-serving": 90}
BUDGET = 330  # all steps together, on a GPU: well inside a 6-minute device call
CPU_SLOWER = 4
_PRECISION = re.compile(r"distributed backend \S+, precision (\S+)")
_MISSING = re.compile(r"No module named '([^']+)'")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n")[0],
        epilog=__doc__.split("\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--out", required=True, type=Path, help="Folder for the reports.")
    parser.add_argument("--device", choices=["cuda", "cpu"], default="cuda")
    parser.add_argument(
        "--steps", type=int, default=0, help="Optimizer steps of each training (0: 8, 3 on a CPU)."
    )
    parser.add_argument("--model", default="", help="Base model (default: the packaged MiniLM).")
    parser.add_argument(
        "--work", type=Path, help="Folder for models and jobs (default: a temp one)."
    )
    parser.add_argument("--budget", type=float, default=0, help="Seconds for all steps (0: auto).")
    args = parser.parse_args(argv)

    facts = device_facts(args.device)
    if args.device == "cuda" and facts["device_name"] is None:
        print(
            "gpu_check: --device cuda, but torch sees no CUDA device here "
            f"(torch {facts['versions'].get('torch')}, CUDA build {facts['cuda_build']}); "
            "run on a GPU machine, or pass --device cpu for the smoke run",
            file=sys.stderr,
        )
        return 2
    slower = 1 if args.device == "cuda" else CPU_SLOWER
    args.steps = args.steps or (8 if args.device == "cuda" else 3)
    deadline = time.monotonic() + (args.budget or BUDGET * slower)
    args.out.mkdir(parents=True, exist_ok=True)
    # models and job folders outside --out: what comes back from the device machine is at most
    # 8 files, 2 folders down (the two reports and each step's log)
    work = args.work or Path(tempfile.mkdtemp(prefix="gpu-check-"))
    work.mkdir(parents=True, exist_ok=True)
    env = _step_environment(args.device)
    model_flag = ["--model", args.model] if args.model else []

    steps: list[Step] = []
    data = work / "data"
    steps.append(
        _run(
            "prepare-data",
            [sys.executable, str(STEPS_SCRIPT), "data", "--out", str(data)],
            env,
            60 * slower,
            deadline,
            work,
        )
    )
    model = work / "lora"
    train = _trainer_args(data, model, args)
    steps.append(
        _run(
            "train-lora",
            [sys.executable, "-m", "trainer.train", *train],
            env,
            TIMEOUTS["train-lora"] * slower,
            deadline,
            work,
            needs=[steps[0]],
        )
    )
    zero2 = _trainer_args(data, work / "zero2", args)
    launch = [sys.executable, "-m", "accelerate.commands.launch", "--config_file"]
    launch += ["trainer/configs/deepspeed_zero2.yaml", "--num_processes", "1"]
    steps.append(
        _run(
            "deepspeed-zero2",
            [*launch, "-m", "trainer.train", *zero2],
            env,
            TIMEOUTS["deepspeed-zero2"] * slower,
            deadline,
            work,
            needs=[steps[0]],
        )
    )
    for name, sub in (("evaluate-job", "evaluate-job"), ("onnx-serving", "onnx")):
        command = [sys.executable, str(STEPS_SCRIPT), sub, "--model-dir", str(model)]
        command += ["--data", str(data), "--work", str(work / name), *model_flag]
        command += ["--result", str(work / f"{name}.json")]
        if name == "evaluate-job":  # the job's own limit, inside the step's (the export first)
            command += ["--job-timeout", str(TIMEOUTS[name] * slower - 30)]
        steps.append(
            _run(name, command, env, TIMEOUTS[name] * slower, deadline, work, needs=[steps[1]])
        )

    for step in steps[1:3]:
        _read_training(step, facts["expected_precision"], args.device)
    for step in steps[3:]:
        result = work / f"{step.name}.json"
        if result.is_file():
            step.details.update(json.loads(result.read_text()))
            step.status = step.details.pop("status", step.status)
    for step in steps:
        if (work / f"{step.name}.log").is_file():
            shutil.copy(work / f"{step.name}.log", args.out / f"{step.name}.log")
    write_report(args.out, facts, steps, args.device)
    print(f"[gpu_check] models and jobs in {work}", flush=True)
    print((args.out / "gpu-check.md").read_text())
    return 1 if any(s.status in ("failed", "timed out") for s in steps) else 0


def _trainer_args(data: Path, output: Path, args: argparse.Namespace) -> list[str]:
    """A few LoRA steps on the tiny QA records, precision auto (the trainer decides)."""
    flags = ["--data-dir", str(data), "--output-dir", str(output), "--max-steps", str(args.steps)]
    flags += ["--batch-size", "8", "--max-length", "128", "--doc-stride", "32"]
    flags += ["--logging-steps", "1", "--precision", "auto", "--merge-adapter"]
    return flags + (["--model", args.model] if args.model else [])


def _step_environment(device: str) -> dict[str, str]:
    """The steps' variables: this checkout importable, nothing from the hub, and on a CPU no GPU
    visible (the trainer and the job then run as they do on a CPU node)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env |= {"HF_HUB_OFFLINE": "1", "PYTHONUNBUFFERED": "1", "TOKENIZERS_PARALLELISM": "false"}
    if device == "cpu":
        env["CUDA_VISIBLE_DEVICES"] = ""
    return env


def _run(
    name: str,
    command: list[str],
    env: dict[str, str],
    timeout: float,
    deadline: float,
    work: Path,
    needs: list[Step] = (),  # type: ignore[assignment]
) -> Step:
    """Run one step in a process session of its own, stopped (with all it started) at its
    timeout or the budget's end; its log in `work/NAME.log`."""
    step = Step(name=name, command=" ".join(command))
    failed = [n.name for n in needs if n.status != "passed"]
    timeout = min(timeout, deadline - time.monotonic())
    if failed or timeout < 10:
        step.status = "skipped"
        step.details["reason"] = (
            f"needs {', '.join(failed)}, which did not pass" if failed else "the budget is spent"
        )
        return step
    log = work / f"{name}.log"
    print(f"[gpu_check] {name}: {step.command}", flush=True)
    start = time.perf_counter()
    with log.open("wb") as out, PeakMemory() as memory:
        process = subprocess.Popen(
            command, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
        try:
            code = process.wait(timeout=timeout)
            step.status = "passed" if code == 0 else "failed"
            step.details["exit_code"] = code
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, 9)
            process.wait()
            step.status = "timed out"
            step.details["timeout_s"] = round(timeout)
    step.seconds = round(time.perf_counter() - start, 1)
    step.peak_gpu_mib = memory.peak_mib
    step.log = log.read_text(errors="replace")
    missing = sorted(set(_MISSING.findall(step.log)))
    if missing:
        step.details["missing_modules"] = missing
    print(f"[gpu_check] {name}: {step.status} in {step.seconds} s", flush=True)
    return step


def _read_training(step: Step, expected: str, device: str) -> None:
    """From a training step's log and metrics: the precision the trainer chose (its
    `precision ...` line; `no` is fp32), whether that is trainer/precision.py's answer, its
    step time and torch's peak allocated memory."""
    chosen = _PRECISION.findall(step.log)
    if chosen:
        precision = {"no": "fp32"}.get(chosen[0], chosen[0])
        step.details["precision"] = precision
        step.details["precision_as_expected"] = precision == expected
        if step.status == "passed" and precision != expected:
            step.status = "failed"
    output = Path(step.command.split("--output-dir ")[1].split(" ")[0])
    metrics_file = output / "metrics.json"
    if metrics_file.is_file():
        metrics = json.loads(metrics_file.read_text())
        step.details["train_seconds"] = metrics["train_seconds"]
        step.details["steps_run"] = metrics["steps"]
        step.details["seconds_per_step"] = round(metrics["train_seconds"] / metrics["steps"], 3)
        # the trainer's peak: torch.cuda.max_memory_allocated on a GPU, the process's RSS on a CPU
        peak = "peak_cuda_allocated_mib" if device == "cuda" else "peak_rss_mib"
        step.details[peak] = round(metrics["peak_memory_bytes"] / 2**20)
        step.details["world_size"] = metrics["world_size"]
    zero = re.search(r"DeepSpeed ZeRO stage (\d)", step.log)
    if zero:
        step.details["zero_stage"] = int(zero.group(1))


if __name__ == "__main__":
    sys.exit(main())
