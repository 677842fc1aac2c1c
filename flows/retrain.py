"""The `retrain` flow: ingest → screen → approve → split → train → evaluate → register → rollout.

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
from platforms.store import sha256_text, stable_json
from tasks.approve import ApprovalRecord, DataRejected, approve_task
from tasks.evaluate import EvalReport, GateFailed, evaluate_task
from tasks.ingest import ingest_task
from tasks.notify import notify_task
from tasks.register import register_task
from tasks.rollout import rollout_task
from tasks.screen import screen_task
from tasks.split import split_task
from tasks.train import train_task

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
        except (DataRejected, GateFailed):
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
    description="Ingest, screen, approve and split training data; fine-tune, evaluate against "
    "the base model and the champion, and register the model that passes the gate.",
    log_prints=True,
)
def retrain(config: PipelineConfig) -> State:
    """Run the pipeline up to `config.until`; the returned state carries the RunSummary.

    Args:
        config: Every stage's settings: the data to read, the screening policy, the approval
            mode, the split, training, the gate, the registry and the rollout.
    """
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
        approval = summary.run(
            "approve", approve_task, store, screened, report, config.approval, config.notify
        )
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
        if config.until == "split":
            summary.status = "completed"
            return Completed(message="data ingested, screened, approved and split", data=summary)
        job = summary.run("train", train_task, store, split, config.train, config.azureml)
        summary.stages["train"].details.update(
            job=job.name, status=job.status, output_dir=job.output_dir, reused=job.reused
        )
        name = config.registry.name_for(config.task.value)
        report = summary.run(
            "evaluate",
            evaluate_task,
            store,
            split,
            job,
            name,
            config.evaluate,
            config.screen,
            config.registry,
            config.azureml,
        )
        summary.evaluation = evaluation_summary(report)
        summary.stages["evaluate"].details.update(
            test_records=report.test_records, primary_metric=report.primary_metric
        )
        if not report.gate.passed:
            summary.stages["evaluate"].status = "gate-failed"
            raise GateFailed(
                "the candidate failed the gate, nothing was registered: "
                + "; ".join(report.gate.reasons)
            )
        version = summary.run(
            "register",
            register_task,
            store,
            name,
            job.output_dir,
            report.candidate,
            lineage(config, summary, approval, report),
            config.registry.promote and config.until != "rollout",  # rollout moves it
            config.registry,
            config.azureml,
        )
        summary.model_version = f"{version.name}:{version.version}"
        summary.stages["register"].details.update(
            name=version.name,
            version=version.version,
            reused=version.lineage.get("flow_run_id") != summary.flow_run_id,
        )
        if config.until == "rollout":
            record = summary.run(
                "rollout",
                rollout_task,
                store,
                version,
                config.task.value,
                report.samples,
                config.rollout,
                config.registry,
                config.azureml,
            )
            summary.endpoint = record.endpoint
            summary.stages["rollout"].details.update(
                outcome=record.outcome, deployment=record.new_deployment
            )
            if record.outcome == "rolled-back":
                message = f"rolled back {record.version}: {record.events[-1].message}"
                summary.status, summary.message = "rolled-back", message
                notify_task(config.notify, "rolled-back", message, {"endpoint": record.endpoint})
                return Failed(message=message, data=summary)
    except DataRejected as exc:
        summary.status, summary.message = "rejected", str(exc)
        return Failed(message=str(exc), data=summary)
    except GateFailed as exc:
        summary.status, summary.message = "gate-failed", str(exc)
        notify_task(config.notify, "gate-failed", str(exc), summary.evaluation or {})
        return Failed(message=str(exc), data=summary)
    summary.status = "completed"
    served = f", serving at {summary.endpoint['url']}" if summary.endpoint else ""
    return Completed(message=f"registered {summary.model_version}{served}", data=summary)


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


def lineage(
    config: PipelineConfig, summary: RunSummary, approval: ApprovalRecord, report: EvalReport
) -> dict[str, Any]:
    """Where a registered model came from: data hashes, approval, evaluation, run and config."""
    return {
        "datasets": {
            stage: summary.stages[stage].details.get("content_hash")
            for stage in ("ingest", "screen", "split")
        },
        "approval": approval.model_dump(mode="json"),
        "evaluation": report.model_dump(mode="json", exclude={"loss_curve"}),
        "flow_run_id": summary.flow_run_id,
        "config_hash": sha256_text(stable_json(config.model_dump(mode="json"))),
        "training_job": summary.stages["train"].details.get("job"),
        "training_backend": config.train.backend,
    }


def _details(
    summary: RunSummary, stage: str, counts: dict[str, int], content_hash: str, **extra: Any
) -> None:
    summary.stages[stage].details.update({**counts, "content_hash": content_hash, **extra})


def _since(start: float) -> float:
    return round(time.perf_counter() - start, 3)
