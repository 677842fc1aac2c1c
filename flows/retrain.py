"""The `retrain` flow: ingest → screen → approve → split → train → evaluate → register.

The flow only wires tasks together and keeps the run summary; every stage's work lives in
`tasks/`. A rejection (or an approval timeout) ends the run in a Failed state before anything is
split; a failed gate ends it before registration, with every unmet criterion in the message.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, TypeVar

from prefect import flow
from prefect.context import FlowRunContext
from prefect.states import Completed, Failed, State
from pydantic import BaseModel, Field

from flows.config import PipelineConfig
from tasks.approve import DataRejected, approve_task
from tasks.ingest import ingest_task
from tasks.screen import screen_task
from tasks.split import split_task

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

    def run(self, stage: str, fn: Callable[..., T], *args: Any, **details: Any) -> T:
        """Run one stage task, timing it; its summary is filled in by `record`."""
        start = time.perf_counter()
        try:
            result = fn(*args)
        except DataRejected:
            self.stages[stage] = StageSummary(status="rejected", seconds=_since(start))
            raise
        except Exception:
            self.stages[stage] = StageSummary(status="failed", seconds=_since(start))
            raise
        self.stages[stage] = StageSummary(
            status="completed", seconds=_since(start), details=details
        )
        return result


@flow(
    name="retrain",
    flow_run_name="retrain-{config.task.value}",
    description="Ingest, screen, approve and split training data (then train, evaluate, "
    "register and roll out).",
    log_prints=True,
)
def retrain(config: PipelineConfig) -> State:
    """Run the data half of the pipeline; the returned state carries the RunSummary."""
    context = FlowRunContext.get()
    summary = RunSummary(flow_run_id=str(context.flow_run.id) if context else None)
    store = config.open_store()
    try:
        ingested = summary.run(
            "ingest",
            ingest_task,
            store,
            config.dask,
            config.task,
            config.columns,
            config.ingest,
            config.azure,
        )
        _details(summary, "ingest", ingested.counts, ingested.content_hash, reused=ingested.reused)
        screened, report = summary.run(
            "screen", screen_task, store, config.dask, ingested, config.screen
        )
        _details(summary, "screen", screened.counts, screened.content_hash, reused=screened.reused)
        approval = summary.run("approve", approve_task, store, screened, report, config.approval)
        _details(
            summary,
            "approve",
            {},
            screened.content_hash,
            decision=approval.decision,
            reviewer=approval.reviewer,
            mode=approval.mode.value,
            reused=approval.reused,
        )
        split = summary.run(
            "split", split_task, store, config.dask, screened, config.split, approval.exclude_ids
        )
        _details(
            summary, "split", split.counts, split.content_hash, uri=split.uri, reused=split.reused
        )
    except DataRejected as exc:
        summary.status, summary.message = "rejected", str(exc)
        return Failed(message=str(exc), data=summary)
    summary.status = "completed"
    return Completed(message="data ingested, screened, approved and split", data=summary)


def _details(
    summary: RunSummary, stage: str, counts: dict[str, int], content_hash: str, **extra: Any
) -> None:
    summary.stages[stage].details.update({**counts, "content_hash": content_hash, **extra})


def _since(start: float) -> float:
    return round(time.perf_counter() - start, 3)
