"""evaluate: score the base model, the candidate and the champion on the same test split; gate.

The models predict where `evaluate.backend` says (`Backends.evaluation`: in this process, or an
Azure ML evaluation job); scores come from the repo's own metric code (tasks/scoring.py,
`trainer.metrics.score_records`), so the three models are measured identically. The candidate's
predictions are also screened for personal data that is not in their input
(`screening.outputs`), and each value found is looked up in the training split
(tasks/output_pii.py): a model that repeats one it trained on fails the gate, one that invents
values fails above its task's `max_invented_pii`. An evaluation job scores and
screens where it predicts, with the same code and the run's screen config: its numbers, each
record's scores (the paired bootstrap's) and its findings are taken as they are, nothing scored
or screened again here (`Evaluation.scores`, `Evaluation.output_screen`). With a serving
config the candidate is exported and its runtime chosen (tasks/serving_choice.py). A report is
kept per exact comparison, so a re-run scores nothing again; tasks/evaluation_report.py holds
the report and its Markdown.
"""

from __future__ import annotations

import json
import logging
import uuid
from pathlib import Path
from typing import Any

from prefect import task
from prefect.artifacts import create_markdown_artifact, create_table_artifact
from prefect.cache_policies import NONE
from pydantic import Field

from platforms.backends import Backends, PlatformKind
from platforms.evaluation import EvalReport
from platforms.hashing import sha256_text, stable_json
from platforms.locks import write_text_atomic
from platforms.manifest import DatasetRef
from platforms.model_version import ModelVersion, alias_notice
from platforms.training import Evaluation, ModelScores, TrainingJob
from screening.config import ScreenConfig
from screening.outputs import OutputScreen, screen_candidate
from tasks.evaluation_report import (
    loss_curve_markdown,
    report_markdown,
    shown_question,
    shown_reference,
)
from tasks.gate import GatePolicy, decide_gate, paired_bootstrap
from tasks.output_pii import classify_outputs, training_texts
from tasks.scoring import Scored, scored
from tasks.serving_choice import ServingConfig, choose_runtime
from trainer.taskspec import task_spec

log = logging.getLogger(__name__)
SMOKE_SAMPLES = 5
SHOWN_EXAMPLES = 5  # test records whose outputs the evaluation artifact shows


class EvaluateConfig(GatePolicy):
    """The gate, where the models predict, and how much of the test split to score."""

    backend: PlatformKind | None = Field(
        None,
        description="Where base, candidate and champion predict the test split: local (this "
        "machine) or azureml (an evaluation job on azureml.compute, where models too large for "
        "this machine fit; the gate still runs here on its predictions). Unset: train.backend.",
    )

    max_test_records: int = Field(0, ge=0, description="Score at most this many (0: all).")
    batch_size: int = Field(32, ge=1, le=1024, description="Inference batch size.")


def run_evaluation(
    split: DatasetRef,
    job: TrainingJob,
    champion: ModelVersion | None,
    config: EvaluateConfig,
    screen: ScreenConfig,
    evaluation: Evaluation,
    storage_options: dict[str, Any] | None = None,
    serving: ServingConfig | None = None,
    export_dir: Path | None = None,
) -> EvalReport:
    """Score the base model's, the candidate's and the champion's predictions of the test
    records (or take the evaluation job's scores of them) and screen the candidate's (or take
    the job's screen); gate. `serving` with `export_dir`: the candidate is also exported there
    to the optimized runtimes, each scored on the same records, and the endpoint's runtime
    chosen."""
    from trainer.data import read_split  # datasets loads here, not when the config loads

    records = read_split(split.uri, "test", config.max_test_records, storage_options)
    if not records:
        raise ValueError(f"{split.uri} has no test records to evaluate on: lower split.train")
    task_type = split.task
    spec = task_spec(task_type)
    predictions = evaluation.predictions
    for name, made in predictions.items():
        if made is not None and len(made) != len(records):
            raise ValueError(
                f"{len(made)} {name} predictions for {len(records)} test records of {split.uri}"
            )
    jobs = evaluation.scores or {}
    base = _scored(task_type, predictions["base"], records, jobs.get("base"))
    candidate = _scored(task_type, predictions["candidate"], records, jobs.get("candidate"))
    champ = None
    if champion is not None and predictions.get("champion") is not None:
        champ = _scored(task_type, predictions["champion"], records, jobs.get("champion"))
    interval = None
    if champ is not None and config.bootstrap_samples:
        interval = paired_bootstrap(
            candidate.per_example, champ.per_example, config.bootstrap_samples, config.confidence
        )
    answer_of = spec.answer_of  # what the endpoint answers, in a prediction
    screened = _output_screen(task_type, candidate.predictions, records, screen, evaluation)
    leaks, masked = screened.leaks, screened.masked
    output_pii = classify_outputs(
        [answer_of(p) for p in candidate.predictions],
        records,
        screened,
        _training_text(split, screened, storage_options),
        screen,
    )
    primary = config.primary_metric or spec.primary_metric
    served, choice = candidate.predictions, None
    if serving is not None and export_dir is not None:
        model_dir = Path(job.output_dir)
        served, choice = choose_runtime(
            task_type,
            model_dir,
            export_dir,
            records,
            candidate,
            serving,
            primary,
            config.batch_size,
        )
    gate = decide_gate(
        candidate.metrics,
        base.metrics,
        champ.metrics if champ else None,
        config.for_task(spec.metric_names),
        primary,
        interval=interval,
        memorised_pii=output_pii.memorised,
        invented_pii_rate=output_pii.invented_rate,
        max_invented_pii=config.invented_limit(task_type),
        test_records=len(records),
    )
    return EvalReport(
        task=task_type,
        primary_metric=primary,
        test_records=len(records),
        base=base.metrics,
        candidate=candidate.metrics,
        champion=champ.metrics if champ else None,
        champion_version=champion.version if champion else None,
        interval=interval,
        pii_leaks=leaks,
        output_pii=output_pii,
        gate=gate,
        loss_curve=_loss_curve(Path(job.output_dir)),
        samples=[  # what the served runtime answered offline: the rollout's smoke check
            {"request": spec.request_of(r), "expected": answer_of(p)}
            for r, p in zip(records[:SMOKE_SAMPLES], served, strict=False)
        ],
        serving=choice,
        examples=[
            {
                "question": shown_question(spec.request_of(r)),
                "reference": shown_reference(spec.reference_of(r)),
                "base": answer_of(b),
                "candidate": c,
                **({"champion": answer_of(champ.predictions[i])} if champ else {}),
            }
            for i, (r, b, c) in enumerate(
                zip(records[:SHOWN_EXAMPLES], base.predictions, masked, strict=False)
            )
        ],
    )


def _scored(
    task_type: str,
    predictions: list[str] | None,
    records: list[dict[str, Any]],
    job: ModelScores | None,
) -> Scored:
    """A model's scores: the evaluation job's when it scored these predictions (its metrics,
    each record's primary score), else scored here by the same code."""
    if predictions is None:
        raise ValueError("no predictions to score")
    if job is not None and len(job.per_example) == len(records):
        expected = task_spec(task_type).metric_names
        if set(expected) <= set(job.metrics):
            return Scored(predictions, dict(job.metrics), list(job.per_example))
    return scored(task_type, predictions, records)


def _output_screen(
    task_type: str,
    candidate: list[str],
    records: list[dict[str, Any]],
    screen: ScreenConfig,
    evaluation: Evaluation,
) -> OutputScreen:
    """The screen of the candidate's outputs: the evaluation job's when it screened these
    predictions under this run's screen config, else screened here by the same code."""
    if evaluation.output_screen is not None:
        job = OutputScreen.model_validate(evaluation.output_screen)
        if job.applies(screen, len(candidate)):
            return job
        log.warning("the evaluation job screened under another screen config: screened here")
    return screen_candidate(task_type, candidate, records, screen)


def _training_text(
    split: DatasetRef, screened: OutputScreen, storage_options: dict[str, Any] | None
) -> str:
    """The training split's text as it went to training, read only when a prediction holds
    personal data its input did not (nothing to look up otherwise)."""
    from trainer.data import read_split

    if not any(not f.in_input for f in screened.findings):
        return ""
    return training_texts(split.task, read_split(split.uri, "train", 0, storage_options))


def _loss_curve(model_dir: Path) -> list[dict[str, float]]:
    """The training loss by step that the trainer wrote into metrics.json (empty when none)."""
    metrics_file = model_dir / "metrics.json"
    if not metrics_file.exists():
        return []
    return json.loads(metrics_file.read_text()).get("loss_curve", [])


def _cache_path(
    split: DatasetRef,
    job: TrainingJob,
    champion: ModelVersion | None,
    config: EvaluateConfig,
    screen: ScreenConfig,
    serving: ServingConfig | None = None,
) -> Path:
    """Where the report of this exact comparison is kept: the same test split, candidate,
    champion, gate and serving choice give the same report, so a re-run does not score three
    models again. The runtimes it exported are in the folder its `serving.folder` names."""
    key = sha256_text(
        stable_json(
            {
                "split": split.content_hash,
                "candidate": job.name,
                "champion": champion.path if champion else None,
                "evaluate": config.model_dump(mode="json"),
                "screen": screen.model_dump(mode="json"),
                "serving": serving.model_dump(mode="json") if serving else None,
            }
        )
    )
    return Path(job.output_dir).parent / "evaluations" / f"{key[:24]}.json"


def _export_dir(cached: Path) -> Path:
    """A folder of this evaluation's own beside its report (`<report>-<random>/`): two runs
    evaluating the same candidate at once export into two folders, never over each other's
    files; the report that is kept names the folder its runtimes were exported to."""
    return cached.with_name(f"{cached.stem}-{uuid.uuid4().hex[:12]}")


@task(name="evaluate", cache_policy=NONE)
def evaluate_task(
    backends: Backends,
    split: DatasetRef,
    job: TrainingJob,
    model_name: str,
    config: EvaluateConfig,
    screen: ScreenConfig,
    serving: ServingConfig | None = None,
) -> EvalReport:
    """Score base, candidate and champion on the test split and decide the gate; with `serving`,
    also the candidate's optimized runtimes, and choose the served one. The three torch models
    predict where `evaluate.backend` says; the optimized runtimes are exported and scored here,
    from the training job's output on this machine when its weights are here: QA models and the
    packaged generative ones (models that fit this machine; another generative base is refused
    before its weights load), chosen for CPU serving. An Azure ML training job's weights never
    come here: its model serves in torch, and the smoke answers are the evaluation job's."""
    champion = backends.registry.alias(model_name, "champion")
    moved = alias_notice(backends.registry, model_name)
    if moved:  # the registry's alias is the champion; the person who moved it is told here
        compared = f"version {champion.version}" if champion else "no champion (base only)"
        log.warning("%s; this evaluation compares with %s", moved, compared)
    cached = _cache_path(split, job, champion, config, screen, serving)
    if cached.exists():
        report = EvalReport.model_validate_json(cached.read_text())
    else:
        evaluation = backends.evaluation.evaluate(
            split.uri,
            job,
            champion,
            backends.registry,
            log.info,
            config.max_test_records,
            config.batch_size,
            screen.model_dump(mode="json"),
        )
        report = run_evaluation(
            split,
            job,
            champion,
            config,
            screen,
            evaluation,
            backends.store.storage_options,
            serving,
            _export_dir(cached),
        )
        write_text_atomic(cached, report.model_dump_json(indent=2))
    create_markdown_artifact(key="evaluation", markdown=report_markdown(report))
    if report.loss_curve:
        picture = loss_curve_markdown(report.loss_curve)
        if picture is not None:
            create_markdown_artifact(
                key="loss-curve", markdown=picture, description="Training loss by step"
            )
        else:  # no matplotlib: the numbers
            create_table_artifact(
                key="loss-curve", table=report.loss_curve, description="Training loss by step"
            )
    log.info("gate %s: %s", report.gate.word, report.gate.reasons)
    return report
