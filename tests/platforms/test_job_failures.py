"""A failed training job's cause, read from its log's last lines: only causes outside the job are
worth submitting it again."""

from __future__ import annotations

import pytest

from platforms.job_failures import diagnose

TRACEBACK = [
    "[rank1]: Traceback (most recent call last):",
    '[rank1]:   File "/mnt/code/trainer/train.py", line 140, in main',
    "[rank1]:     records = read_split(args.data_dir, 'train')",
    "[rank1]: FileNotFoundError: [Errno 2] No such file or directory: '/mnt/data/train'",
]


@pytest.mark.parametrize(
    ("tail", "transient", "named"),
    [
        # Azure ML's error for a job on a preempted low-priority node
        (
            [
                'log streaming stopped: JobException: Exception : {"error": {"code": '
                '"UserError", "message": "AzureMLCompute job failed. PreemptionError: Nodes '
                'of this job got pre-empted."}}'
            ],
            True,
            "PreemptionError",
        ),
        (["job train-1: NotResponding"], True, "NotResponding"),
        # torchrun's summary when a rank was killed
        (
            [
                "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:",
                "  exitcode  : -9 (pid: 4242)",
                "  traceback : Signal 9 (SIGKILL) received by PID 4242",
            ],
            True,
            "Signal 9 (SIGKILL) received",
        ),
        # a surviving rank whose peer died: its traceback names the lost connection
        (
            [
                "[rank0]: Traceback (most recent call last):",
                "[rank0]: RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:534] "
                "Connection closed by peer [10.0.0.5]:29500",
            ],
            True,
            "Connection closed by peer",
        ),
        (["step 40/196 loss 1.23", "step 41/196 loss 1.20"], True, "ended without an error"),
        (["Execution failed. User process 'python' exited with status code 137."], True, "137"),
        (TRACEBACK, False, "raised FileNotFoundError"),
        (
            [*TRACEBACK, "log streaming stopped: JobException: Exception : {...}"],
            False,
            "raised FileNotFoundError",
        ),
        (["Execution failed. User process 'python' exited with status code 2."], False, "code 2"),
    ],
)
def test_a_failure_is_transient_only_when_its_cause_is_outside_the_job(
    tail: list[str], transient: bool, named: str
) -> None:
    failure = diagnose(tail)
    assert failure.transient is transient, failure
    assert named in failure.reason
