"""Progress, not noise: the trainer's progress lines, what the train stage makes of a job's log,
a data stage's line per partition, and the run's log file that takes warnings and libraries'
lines off the terminal (one line per failure, no traceback)."""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest
from distributed.utils import silence_logging_cmgr

from flows.run_log import run_log
from platforms.compute import partition_line
from tasks.train import TrainerOutput
from trainer.progress import (
    Progress,
    ProgressWriter,
    describe,
    estimate_eta,
    format_progress,
    own_message,
    parse_progress,
)


def test_a_progress_line_reads_back_as_written_and_other_lines_are_none() -> None:
    progress = Progress(
        step=40, total=196, epoch=0.8163, elapsed=17.2, eta=66.4, loss=2.733, eval_loss=2.081
    )
    line = format_progress(progress)
    assert line == (
        "[progress] step=40/196 epoch=0.82 loss=2.733 eval_loss=2.081 elapsed=17s eta=66s"
    )
    back = parse_progress(line)
    assert back == Progress(
        step=40, total=196, epoch=0.82, elapsed=17, eta=66, loss=2.733, eval_loss=2.081
    )
    assert describe(back) == (
        "step 40/196 (20%), epoch 0.82, loss 2.733, eval loss 2.081, 0:17 elapsed, ETA 1:06"
    )
    # before the first logged loss and the first timed step: what is known only
    first = parse_progress("[progress] step=0/196 epoch=0.00 elapsed=0s")
    assert first is not None and first.loss is None and first.eta is None
    assert describe(first) == "step 0/196 (0%), epoch 0.00, 0:00 elapsed"
    for other in (
        "{'loss': '4.458', 'grad_norm': '2.37', 'epoch': '0.2041'}",
        "[progress] step=forty/196 epoch=0.82 elapsed=17s",  # not a number
        "[progress] epoch=0.82 elapsed=17s",  # no step
        "[trainer] process 0 of 1 (local 0) on cpu",
    ):
        assert parse_progress(other) is None, other
    assert own_message("[trainer] process 0 of 1") == "process 0 of 1"
    assert own_message("/x/modeling_utils.py:3303: FutureWarning: deprecated") is None


def test_the_eta_is_paced_by_the_steps_this_process_ran() -> None:
    assert estimate_eta(50, 200, 25.0) == 75.0  # 0.5 s a step, 150 to go
    assert estimate_eta(150, 200, 25.0, first_step=100) == 25.0  # resumed at step 100
    assert estimate_eta(100, 200, 3.0, first_step=100) is None  # no step timed yet
    assert estimate_eta(200, 200, 60.0) == 0.0


def test_the_trainer_writes_a_progress_line_per_logged_loss_and_at_the_end() -> None:
    lines: list[str] = []
    writer = ProgressWriter(every_seconds=3600, write=lines.append)
    writer.began(0)
    writer.stepped(4, 8, 1.0)  # under `every_seconds` since the last line: none
    writer.logged(4, 8, 1.0, {"loss": 1.25, "grad_norm": 2.0})
    writer.logged(8, 8, 2.0, {"eval_loss": 0.5, "epoch": 2.0})
    writer.logged(8, 8, 2.0, {"train_runtime": 3.2})  # no loss: no line
    writer.ended(8, 8, 2.0)
    first, evaluated, last = (parse_progress(line) for line in lines)
    assert first is not None and (first.step, first.total, first.loss) == (4, 8, 1.25)
    assert first.eta is not None and first.eval_loss is None
    assert evaluated is not None and (evaluated.step, evaluated.eval_loss) == (8, 0.5)
    assert last is not None and last.eta == 0.0 and last.loss == 1.25
    resumed = ProgressWriter(write=lines.append)
    resumed.began(6)  # from a checkpoint at step 6: no step of its own timed yet
    resumed.ended(6, 8, 1.5)
    assert parse_progress(lines[-1]).eta is None


def test_a_jobs_log_becomes_concise_lines_own_lines_and_the_log_file_only(
    caplog: pytest.LogCaptureFixture,
) -> None:
    logger = logging.getLogger("tasks.train")
    output = TrainerOutput(logger, bar=False, line_every=3600)
    with caplog.at_level(logging.INFO):
        for line in (
            "[trainer] process 0 of 1 (local 0) on cpu",
            "/venv/transformers/modeling_utils.py:3303: FutureWarning: deprecated",
            "  warnings.warn(",
            "[2026-11-24 16:49:22,408] [WARNING] [real_accelerator.py:213:get_accelerator] "
            "Setting accelerator to CPU.",
            "[progress] step=10/40 epoch=0.25 loss=4.458 elapsed=4s eta=12s",
            "[progress] step=20/40 epoch=0.50 loss=3.1 elapsed=8s eta=8s",  # within line_every
            "[progress] step=40/40 epoch=1.00 loss=2.5 elapsed=16s eta=0s",  # the last step
            "[progress] step=40/40 epoch=1.00 loss=2.5 elapsed=17s eta=0s",  # training's end
            "[progress] step=40/40 epoch=1.00 loss=2.5 eval_loss=1.9 elapsed=19s eta=0s",
        ):
            output(line)
    shown = [(r.name, r.getMessage()) for r in caplog.records if r.name == "tasks.train"]
    assert shown == [
        ("tasks.train", "trainer | process 0 of 1 (local 0) on cpu"),
        ("tasks.train", "train: step 10/40 (25%), epoch 0.25, loss 4.458, 0:04 elapsed, ETA 0:12"),
        ("tasks.train", "train: step 40/40 (100%), epoch 1.00, loss 2.5, 0:16 elapsed, ETA 0:00"),
        (
            "tasks.train",
            "train: step 40/40 (100%), epoch 1.00, loss 2.5, eval loss 1.9, 0:19 elapsed, ETA 0:00",
        ),
    ]
    kept = [r.getMessage() for r in caplog.records if r.name == "job_output"]
    assert len(kept) == 3 and "FutureWarning" in kept[0] and "accelerator" in kept[2]
    assert output.last is not None and output.last.step == 40
    assert output.tail[-1].endswith("Setting accelerator to CPU.")


def test_a_data_stage_says_each_partition_done_with_its_records() -> None:
    assert partition_line("screen", 1, 2, 265, 530, 12.34) == (
        "screen: partition 1/2 done, 265 of 530 records, 12.3 s"
    )
    assert partition_line("split", 2, 2, None, None, 0.04) == "split: partition 2/2 done, 0.0 s"


@contextlib.contextmanager
def terminal() -> Iterator[logging.Handler]:
    """A handler on the root logger writing to (the test's) stderr, as Prefect's console handler
    does to a terminal."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(name)s - %(message)s"))
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        yield handler
    finally:
        root.removeHandler(handler)


def test_warnings_and_library_lines_go_to_the_run_log_not_the_terminal(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    caplog.set_level(logging.INFO, logger="tasks")  # as `tunegate` sets it
    # plotly (imported with Evidently, by the monitor) replaces Python's warning format with one
    # that splits a warning over lines: the run log keeps one line a warning all the same
    from plotly.tools import warning_on_one_line

    monkeypatch.setattr(warnings, "formatwarning", warning_on_one_line)
    path = tmp_path / "runs" / "some-run" / "run.log"
    before = warnings.showwarning
    with terminal() as console, run_log(path) as routed, warnings.catch_warnings():
        warnings.simplefilter("always")
        # a LocalCluster quiets the handlers of Dask's loggers while it lives: not the run log's
        quiet = silence_logging_cmgr(logging.WARNING)
        quiet.__enter__()
        logging.getLogger("tasks.screen").info("screen: kept=530 redacted=222")
        warnings.warn("`is_gradient_checkpointing` is deprecated", FutureWarning, stacklevel=1)
        logging.getLogger("root").warning("Please consider to run pre-processing before quant")
        logging.getLogger("distributed.node").warning("Port 8787 is already in use.")
        logging.getLogger("job_output").info("Setting accelerator to CPU.")
        quiet.__exit__(None, None, None)
        bars = os.environ.get("MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR")  # MLflow's download bar
    assert bars == "false" and "MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR" not in os.environ
    assert routed == path
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "tasks.screen - screen: kept=530 redacted=222" in captured.err.splitlines()
    for library in ("Warning", "pre-processing", "8787", "accelerator"):
        assert library not in captured.err
    logged = path.read_text()
    for line in (
        "screen: kept=530 redacted=222",
        "FutureWarning: `is_gradient_checkpointing` is deprecated",
        "Please consider to run pre-processing",
        "Port 8787 is already in use.",
        "Setting accelerator to CPU.",
    ):
        assert line in logged, line
    assert warnings.showwarning is before and not console.filters  # as it was after the run


def test_a_failed_served_run_is_one_line_on_the_terminal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Under `tunegate deployments serve`, Prefect's engine turns the Failed state a run returned
    into an exception and logs it with its traceback; a failing stage's task logs its own. The
    terminal keeps the run's Failed line, and one line for the stage; tracebacks go to the file."""
    from prefect.states import Failed

    from flows.summary import RunSummary

    # as Prefect logs them: its run loggers with the run's name
    flow_runs = logging.LoggerAdapter(
        logging.getLogger("prefect.flow_runs"), {"flow_run_name": "retrain", "flow_run_id": None}
    )
    task_runs = logging.LoggerAdapter(
        logging.getLogger("prefect.task_runs"), {"task_run_name": "split-3f3", "task_run_id": None}
    )
    path = tmp_path / "run.log"
    summary = RunSummary(status="no-usable-records", message="ingest left no usable record")
    with terminal(), run_log(path):
        try:
            raise ValueError("split.train + split.validation + split.test must sum to 1.0")
        except ValueError:
            task_runs.error(
                "Task run failed with exception: ValueError('split...') - Retries are exhausted",
                exc_info=True,
            )
        flow_runs.info("Finished in state Failed('ingest left no usable record')")
        try:
            Failed(message=summary.message, data=summary).result()
        except TypeError:  # what Prefect's engine does with a flow's Failed state, and logs
            flow_runs.error("Engine execution exited with unexpected exception", exc_info=True)
    shown = [line for line in capsys.readouterr().err.splitlines() if " - " in line]
    assert "Traceback" not in str(shown) and "Unexpected result" not in str(shown)
    assert shown == [
        "prefect.task_runs - Task run failed with exception: ValueError('split...') - Retries "
        "are exhausted: ValueError: split.train + split.validation + split.test must sum to 1.0",
        "prefect.flow_runs - Finished in state Failed('ingest left no usable record')",
    ]
    logged = path.read_text()
    assert logged.count("Traceback (most recent call last)") == 2
    assert "TypeError: Unexpected result for failed state" in logged
