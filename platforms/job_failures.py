"""Why a training job failed, read from the last lines of its log: worth submitting again or not.

A job whose node was taken (a preempted low-priority node: Azure ML reports `PreemptionError:
Nodes of this job got pre-empted`), that stopped answering (`NotResponding`), whose processes
were killed from outside (a signal, no error of the trainer's own) or whose processes lost each
other (a rendezvous or connection error between ranks) fails for a cause outside the job: the
same job submitted again resumes from its newest complete checkpoint and can finish. A job whose
trainer raised an error of its own (a bad argument, data it cannot read, a model that does not
fit) would fail the same way again: it is not submitted again.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

# Causes outside the job, as the service, the launcher or torch.distributed print them
_TRANSIENT = re.compile(
    r"PreemptionError|pre-?empted|preemption|NotResponding|no heartbeat"
    r"|Signal \d+ \(SIG(?:KILL|TERM)\) received"
    r"|DistNetworkError|Rendezvous(?:Connection|Timeout|Closed)Error|Connection (?:reset|closed) by peer"
    r"|NodeLost|node was lost",
    re.IGNORECASE,
)
# The trainer's own error: a traceback, and the exception line that ends it (a launcher prefixes
# each rank's lines, e.g. `[rank0]: ValueError: ...`)
_TRACEBACK = re.compile(r"Traceback \(most recent call last\)")
# The service's or the launcher's word on the process: `User process 'python' exited with status
# code 1`; a code above 128 is a signal's (128 + its number: 137 SIGKILL, 143 SIGTERM)
_EXITED = re.compile(r"exited with (?:status )?code (\d+)", re.IGNORECASE)
_RAISED = re.compile(r"(?:^|[\]:]\s)\s*((?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*(?:Error|Exception)): ")


@dataclass(frozen=True)
class Failure:
    """A failed job's cause: `transient` (worth a resubmission) and why, in words."""

    transient: bool
    reason: str


def diagnose(tail: Iterable[str]) -> Failure:
    """The cause of a failed job from its log's last lines (the service's status lines too)."""
    lines = [line for line in tail if line.strip()]
    for line in reversed(lines):
        if match := _TRANSIENT.search(line):
            return Failure(True, f"a cause outside the job ({match[0]}): {line.strip()[:300]}")
    tracebacks = [i for i, line in enumerate(lines) if _TRACEBACK.search(line)]
    if tracebacks:  # the exception that ends the last one: the first one named after it
        raised = (m[1] for line in lines[tracebacks[-1] :] if (m := _RAISED.search(line)))
        error = next(raised, "an exception")
        return Failure(False, f"the trainer raised {error}; the same job would fail again")
    codes = [int(m[1]) for line in lines for m in _EXITED.finditer(line)]
    if codes and codes[-1] > 128:
        return Failure(True, f"its process was killed (exit code {codes[-1]}: a signal)")
    if codes and codes[-1] != 0:
        return Failure(
            False, f"its process exited with code {codes[-1]}; the same job would fail again"
        )
    return Failure(
        True, "its processes ended without an error of their own (killed, or their node lost)"
    )
