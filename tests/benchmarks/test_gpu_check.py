"""The GPU check's own logic, without a GPU: the refusal where there is none, a failed step that
names its missing package and the step that needed it skipped, a precision the trainer chose
against the rule. (Its steps themselves: `benchmarks/gpu_check.py --device cpu`, docs/benchmarks.md.)"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest
import torch

from benchmarks.gpu_check import _read_training, _run, main
from benchmarks.gpu_check_report import Step


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a GPU")
def test_cuda_asked_for_without_a_gpu_exits_2_saying_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--out", str(tmp_path / "out")]) == 2
    error = capsys.readouterr().err
    assert "torch sees no CUDA device here" in error and "--device cpu" in error
    assert not (tmp_path / "out").exists()


def test_a_failed_step_names_what_is_missing_and_its_dependant_is_skipped(tmp_path: Path) -> None:
    deadline = time.monotonic() + 60
    failed = _run(
        "train-lora",
        [sys.executable, "-c", "import tunegate_absent_package"],
        {},
        30,
        deadline,
        tmp_path,
    )
    assert failed.status == "failed" and failed.details["exit_code"] == 1
    assert failed.details["missing_modules"] == ["tunegate_absent_package"]
    assert "ModuleNotFoundError" in (tmp_path / "train-lora.log").read_text()

    after = _run("onnx", [sys.executable, "-c", "1"], {}, 30, deadline, tmp_path, needs=[failed])
    assert after.status == "skipped" and after.details["reason"] == (
        "needs train-lora, which did not pass"
    )
    passed = _run("other", [sys.executable, "-c", "print('ok')"], {}, 30, deadline, tmp_path)
    assert passed.status == "passed" and passed.log == "ok\n"


def test_a_training_on_another_precision_than_the_rule_s_fails(tmp_path: Path) -> None:
    line = "[trainer] process 0 of 1 (local 0) on cuda:0, distributed backend none, precision "
    command = f"python -m trainer.train --output-dir {tmp_path} --max-steps 8"
    metrics = {"train_seconds": 2.0, "steps": 8, "peak_memory_bytes": 3 * 2**20, "world_size": 1}
    (tmp_path / "metrics.json").write_text(json.dumps(metrics))
    on_rule = Step("train-lora", command, status="passed", log=line + "bf16\n")
    _read_training(on_rule, "bf16", "cuda")
    assert on_rule.status == "passed" and on_rule.details["precision_as_expected"]
    assert on_rule.details["seconds_per_step"] == 0.25
    assert on_rule.details["peak_cuda_allocated_mib"] == 3

    emulated = Step("train-lora", command, status="passed", log=line + "bf16\n")
    _read_training(emulated, "fp16", "cuda")  # a V100 or T4: bf16 there is emulated
    assert emulated.status == "failed" and emulated.details["precision"] == "bf16"

    cpu = Step("train-lora", command, status="passed", log=line + "no\n")
    _read_training(cpu, "fp32", "cpu")
    assert cpu.status == "passed" and cpu.details["precision"] == "fp32"
