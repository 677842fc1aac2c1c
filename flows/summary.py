"""What a `retrain` run did and where its model came from: the run summary and the lineage.

`RunSummary` times each stage, records how it ended (completed, rejected, failed, gate-failed)
and the details a person reads in `tunegate run`'s table and `--summary` file. `lineage` is what
the registry keeps beside a version: built from the typed results the flow holds (dataset refs,
the approval record, the evaluation report, the training job), never read back out of the
summary.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import BaseModel, Field

from flows.config import PipelineConfig
from platforms.store import DatasetRef, sha256_text, stable_json
from platforms.training import TrainingJob
from tasks.approve import ApprovalRecord, DataRejected
from tasks.evaluate import EvalReport

log = logging.getLogger(__name__)

T = TypeVar("T")


class StageSummary(BaseModel):
    status: str
    seconds: float
    details: dict[str, Any] = Field(default_factory=dict)


class RunSummary(BaseModel):
    """What a run did, stage by stage: written by `tunegate run --summary PATH`."""

    flow_run_id: str | None = None
    status: str = "running"
    message: str = ""
    stages: dict[str, StageSummary] = Field(default_factory=dict)
    evaluation: dict[str, Any] | None = None
    model_version: str | None = None
    endpoint: dict[str, Any] | None = None

    def run(self, stage: str, fn: Callable[..., T], /, **arguments: Any) -> T:
        """Run one stage task with keyword `arguments`, timing it and keeping how it ended."""
        log.info("%s: started", stage)
        start = time.perf_counter()
        try:
            result = fn(**arguments)
        except DataRejected:
            self.stages[stage] = StageSummary(status="rejected", seconds=_since(start))
            raise
        except Exception:
            self.stages[stage] = StageSummary(status="failed", seconds=_since(start))
            raise
        self.stages[stage] = StageSummary(status="completed", seconds=_since(start))
        return result

    def dataset(self, stage: str, ref: DatasetRef, **extra: Any) -> None:
        """A data stage's details: its counts, content hash and whether it was reused."""
        self.note(stage, **ref.counts, content_hash=ref.content_hash, reused=ref.reused, **extra)

    def note(self, stage: str, **details: Any) -> None:
        """Add details to a stage that ran."""
        self.stages[stage].details.update(details)

    def end(self, status: str, message: str = "") -> None:
        self.status, self.message = status, message


def evaluation_summary(report: EvalReport) -> dict[str, Any]:
    """The run summary's `evaluation`: every model's metrics and the gate's decision."""
    return {
        "base": report.base,
        "candidate": report.candidate,
        "champion": report.champion,
        "champion_version": report.champion_version,
        "primary_metric": report.primary_metric,
        "gate": {"passed": report.gate.passed, "reasons": report.gate.reasons},
    }


def gate_line(evaluation: dict[str, Any]) -> str:
    """One line a person reads under the run's table: the primary metric of base, candidate and
    champion, and the gate's decision with its reasons."""
    metric = evaluation["primary_metric"]
    line = (
        f"{metric}: base {evaluation['base'][metric]:.1f} → "
        f"candidate {evaluation['candidate'][metric]:.1f}"
    )
    if evaluation.get("champion") is not None:
        line += (
            f" (champion v{evaluation['champion_version']}: {evaluation['champion'][metric]:.1f})"
        )
    gate = evaluation["gate"]
    return line + (
        "; gate passed" if gate["passed"] else "; gate FAILED: " + "; ".join(gate["reasons"])
    )


def lineage(
    config: PipelineConfig,
    flow_run_id: str | None,
    datasets: dict[str, DatasetRef],
    approval: ApprovalRecord,
    job: TrainingJob,
    report: EvalReport,
) -> dict[str, Any]:
    """Where a registered model came from: data hashes, approval, evaluation, run and config."""
    return {
        "datasets": {stage: ref.content_hash for stage, ref in datasets.items()},
        "approval": approval.model_dump(mode="json"),
        "approval_hash": approval.record_hash,  # of the signed record, as stored
        "evaluation": report.model_dump(mode="json", exclude={"loss_curve"}),
        "flow_run_id": flow_run_id,
        "config_hash": sha256_text(stable_json(config.model_dump(mode="json"))),
        "training_job": job.name,
        "training_backend": config.train.backend,
    }


def _since(start: float) -> float:
    return round(time.perf_counter() - start, 3)
