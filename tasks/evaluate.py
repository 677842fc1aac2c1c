"""evaluate: score the base model, the candidate and the champion on the same test split; gate.

Scores come from the repo's own metric code (trainer/metrics), predictions from trainer/predict,
so the three models are measured identically. The candidate's predictions are also screened for
personal data that is not in their input: a model that emits PII fails the gate.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from prefect import task
from prefect.artifacts import create_markdown_artifact, create_table_artifact
from prefect.cache_policies import NONE
from pydantic import BaseModel, ConfigDict, Field

from platforms.backends import Backends
from platforms.registry import ModelVersion
from platforms.store import DatasetRef, sha256_text, stable_json
from platforms.training import TrainingJob
from serving import runtimes
from tasks.gate import GateDecision, GatePolicy, decide_gate, paired_bootstrap
from tasks.screen_policy import Action, ScreenConfig
from trainer.taskspec import task_spec

log = logging.getLogger(__name__)
SMOKE_SAMPLES = 5
SHOWN_EXAMPLES = 5  # test records whose outputs the evaluation artifact shows


class EvaluateConfig(GatePolicy):
    """The gate, where the models predict, and how much of the test split to score."""

    backend: Literal["local", "azureml"] | None = Field(
        None,
        description="Where base, candidate and champion predict the test split: local (this "
        "machine) or azureml (an evaluation job on azureml.compute, where models too large for "
        "this machine fit; the gate still runs here on its predictions). Unset: train.backend.",
    )

    max_test_records: int = Field(0, ge=0, description="Score at most this many (0: all).")
    batch_size: int = Field(32, ge=1, le=1024, description="Inference batch size.")


class ServingConfig(BaseModel):
    """What the endpoint runs the model with."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    runtime: Literal["auto", "torch", "onnx", "onnx-int8"] = Field(
        "auto",
        description="auto: the fastest runtime within max_quality_loss of the torch candidate "
        "(onnx-int8, then onnx, then torch); or one runtime, which must pass the same check.",
    )
    max_quality_loss: float = Field(
        1.0,
        ge=0,
        description="Points of the primary metric an optimized runtime may lose against the "
        "torch candidate on the test split.",
    )
    gpu: bool = Field(
        False,
        description="The endpoint runs on GPUs: onnx-int8 is not a candidate (ONNX Runtime runs "
        "dynamic int8 on the CPU, so asking for it is a config error). Set by the run when "
        "rollout.backend is azureml and azureml.endpoint.instance_type is a GPU size.",
    )

    @property
    def candidates(self) -> tuple[runtimes.Runtime, ...]:
        """The runtimes the endpoint may serve with, fastest first."""
        return runtimes.GPU_CANDIDATES if self.gpu else runtimes.FASTEST_FIRST


class EvalReport(BaseModel):
    """Every number the gate compared, and its decision."""

    model_config = ConfigDict(frozen=True)
    task: str
    primary_metric: str
    test_records: int
    base: dict[str, float]
    candidate: dict[str, float]
    champion: dict[str, float] | None
    champion_version: int | None
    interval: tuple[float, float] | None
    pii_leaks: int
    gate: GateDecision
    loss_curve: list[dict[str, float]] = Field(default_factory=list)
    samples: list[dict[str, Any]] = Field(
        default_factory=list,
        description="A few test requests with the candidate's offline answer: the rollout's "
        "smoke test checks the served model gives the same.",
    )
    serving: dict[str, Any] | None = Field(
        None,
        description="The runtime the endpoint serves (serving.runtime): each runtime's primary "
        "metric on the test split, the chosen one, why others were refused, the exported "
        "folder and the chosen file's hash. None: not checked (torch serves).",
    )
    examples: list[dict[str, str]] = Field(
        default_factory=list,
        description="A few test records' reference beside the base model's and the candidate's "
        "output (personal data found in the candidate's replaced by placeholders), for a person "
        "to read.",
    )


def score(
    task: str, predictions: list[str], records: list[dict[str, Any]]
) -> tuple[dict[str, float], list[float]]:
    """Metric values (through the repo's evaluate modules) and per-example primary scores."""
    from trainer.metrics import score as metric_score

    spec = task_spec(task)
    return metric_score(spec.metric, predictions, [spec.reference_of(r) for r in records])


def count_pii_leaks(
    predictions: list[str], records: list[dict[str, Any]], screen: ScreenConfig
) -> tuple[int, list[str]]:
    """(how many predictions hold a personal-data finding whose text is not in the record's
    input, every prediction with its findings replaced by placeholders)."""
    from tasks.detectors import detectors_for  # Presidio
    from tasks.redact import redact_text

    detectors = detectors_for(screen.spacy_model, screen.language, screen.all_entities())
    leaks = 0
    masked: list[str] = []
    for prediction, record, spans in zip(
        predictions, records, detectors.analyze(predictions), strict=True
    ):
        source = json.dumps(record, ensure_ascii=False)
        found = [
            span
            for span in spans
            if (rule := screen.rule(span.entity))
            and rule.action is not Action.flag
            and span.score >= rule.min_score
        ]
        leaks += any(prediction[s.start : s.end] not in source for s in found)
        masked.append(redact_text(prediction, found)[0])
    return leaks, masked


@dataclass(frozen=True)
class Scored:
    """One model's predictions on the test records and their scores."""

    predictions: list[str]
    metrics: dict[str, float]
    per_example: list[float]  # the primary metric of each record, for the bootstrap


def run_evaluation(
    split: DatasetRef,
    job: TrainingJob,
    champion: ModelVersion | None,
    config: EvaluateConfig,
    screen: ScreenConfig,
    storage_options: dict[str, Any] | None = None,
    predictions: dict[str, list[str] | None] | None = None,
    serving: ServingConfig | None = None,
    export_dir: Path | None = None,
) -> EvalReport:
    """Score the base model, the candidate and the champion on the same test records; gate.

    `predictions`: each model's, made elsewhere (the Azure ML evaluation job, by the same
    `trainer.evaluate.predict_models`); None: made here. `serving` with `export_dir`: the
    candidate is also exported there to the optimized runtimes, each scored on the same
    records, and the endpoint's runtime chosen (serving/runtimes.py)."""
    # torch, transformers and datasets load here, not when the CLI or the config loads
    from trainer.data import read_split

    records = read_split(split.uri, "test", config.max_test_records, storage_options)
    if not records:
        raise ValueError(f"{split.uri} has no test records to evaluate on: lower split.train")
    if predictions is None:
        from trainer.evaluate import predict_models

        champion_dir = champion.path if champion is not None else None
        predictions = predict_models(records, job.output_dir, champion_dir, config.batch_size)
    task_type = split.task
    for name, made in predictions.items():
        if made is not None and len(made) != len(records):
            raise ValueError(
                f"{len(made)} {name} predictions for {len(records)} test records of {split.uri}"
            )
    base = scored(task_type, predictions["base"], records)
    candidate = scored(task_type, predictions["candidate"], records)
    champ = None
    if champion is not None and predictions.get("champion") is not None:
        champ = scored(task_type, predictions["champion"], records)
    interval = None
    if champ is not None and config.bootstrap_samples:
        interval = paired_bootstrap(
            candidate.per_example, champ.per_example, config.bootstrap_samples, config.confidence
        )
    answer_of = task_spec(task_type).answer_of  # what the endpoint answers, in a prediction
    leaks, masked = count_pii_leaks(list(map(answer_of, candidate.predictions)), records, screen)
    primary = config.primary_metric or task_spec(task_type).primary_metric
    served, serving_record = candidate.predictions, None
    if serving is not None and export_dir is not None:
        served, serving_record = _choose_runtime(
            task_type,
            Path(job.output_dir),
            export_dir,
            records,
            candidate,
            serving,
            config,
            primary,
        )
    gate = decide_gate(
        candidate.metrics,
        base.metrics,
        champ.metrics if champ else None,
        config.for_task(task_spec(task_type).metric_names),
        primary,
        interval=interval,
        pii_leaks=leaks,
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
        gate=gate,
        loss_curve=_loss_curve(Path(job.output_dir)),
        samples=[  # what the served runtime answered offline: the rollout's smoke check
            {"request": task_spec(task_type).request_of(r), "expected": answer_of(p)}
            for r, p in zip(records[:SMOKE_SAMPLES], served, strict=False)
        ],
        serving=serving_record,
        examples=[
            {
                "reference": _shown(task_spec(task_type).reference_of(r)),
                "base": answer_of(b),
                "candidate": c,
            }
            for r, b, c in zip(records[:SHOWN_EXAMPLES], base.predictions, masked, strict=False)
        ],
    )


def _choose_runtime(
    task_type: str,
    model_dir: Path,
    export_dir: Path,
    records: list[dict[str, Any]],
    candidate: Scored,
    serving: ServingConfig,
    config: EvaluateConfig,
    primary: str,
) -> tuple[list[str], dict[str, Any]]:
    """Export the candidate, score each optimized runtime like the torch candidate, choose the
    one to serve: (its answers to the smoke samples, the record for the report and the
    registry)."""
    from trainer.modeling import load_tokenizer_and_info
    from trainer.predict import predict

    tokenizer, info = load_tokenizer_and_info(model_dir)
    scores = {"torch": candidate.metrics[primary]}
    made = {"torch": candidate.predictions}
    not_exported = []
    if serving.runtime != "torch":
        from serving.onnx_generation import NotExportable

        try:
            folders = runtimes.export(model_dir, export_dir / runtimes.FOLDER)
        except NotExportable as exc:
            folders, not_exported = {}, [f"not exported: {exc}"]
        for runtime, folder in folders.items():
            if serving.runtime not in ("auto", runtime) or runtime not in serving.candidates:
                continue
            model = runtimes.load(folder)
            made[runtime] = predict(
                model, tokenizer, info["task"], records, batch_size=config.batch_size
            )
            scores[runtime] = scored(task_type, made[runtime], records).metrics[primary]
    choice = runtimes.choose(scores, serving.runtime, serving.max_quality_loss, serving.candidates)
    record = {**choice.as_dict(), "primary_metric": primary, "folder": str(export_dir)}
    gpu = [
        "onnx-int8: not a candidate on GPU instances (ONNX Runtime runs dynamic int8 on the CPU)"
    ]
    record["reasons"] = [*not_exported, *(gpu if serving.gpu else []), *record["reasons"]]
    smoke = made[choice.runtime][:SMOKE_SAMPLES]  # an ONNX model answers row by row
    if choice.runtime != "torch":
        exported = export_dir / runtimes.FOLDER / choice.runtime
        record["sha256"] = runtimes.sha256_path(exported)
    log.info("serving runtime %s: %s", choice.runtime, "; ".join(choice.reasons))
    return smoke, record


def scored(task_type: str, predictions: list[str], records: list[dict[str, Any]]) -> Scored:
    metrics, per_example = score(task_type, predictions, records)
    return Scored(predictions, metrics, per_example)


def predict_and_score(
    task_type: str,
    trainer_task: str,
    model: Any,
    tokenizer: Any,
    records: list[dict[str, Any]],
    batch_size: int,
    **lengths: int,
) -> Scored:
    """One model through the same prediction and metric code as every other (`lengths`:
    max_length, max_new_tokens; default the model's own)."""
    from trainer.predict import predict

    predictions = predict(model, tokenizer, trainer_task, records, batch_size=batch_size, **lengths)
    return scored(task_type, predictions, records)


def _loss_curve(model_dir: Path) -> list[dict[str, float]]:
    """The training loss by step that the trainer wrote into metrics.json (empty when none)."""
    metrics_file = model_dir / "metrics.json"
    if not metrics_file.exists():
        return []
    return json.loads(metrics_file.read_text()).get("loss_curve", [])


def report_markdown(report: EvalReport) -> str:
    metrics = sorted(report.candidate)
    rows = [("base", report.base), ("candidate", report.candidate)]
    if report.champion is not None:
        rows.append((f"champion (v{report.champion_version})", report.champion))
    lines = [
        f"### Evaluation on {report.test_records} test records: gate "
        f"{'passed' if report.gate.passed else 'FAILED'}",
        "",
        "| model | " + " | ".join(metrics) + " |",
        "|---|" + "---:|" * len(metrics),
        *[f"| {name} | " + " | ".join(f"{m[k]:.2f}" for k in metrics) + " |" for name, m in rows],
        "",
        "| check | value | required | passed |",
        "|---|---:|---:|---|",
        *[
            f"| {c.name} | {c.value:.2f} | {c.required:.2f} | {'yes' if c.passed else 'NO'} |"
            for c in report.gate.checks
        ],
    ]
    if report.serving:
        serving = report.serving
        lines += [
            "",
            f"Serving runtime: **{serving['runtime']}**",
            "",
            f"| runtime | {serving['primary_metric']} | loss against torch |",
            "|---|---:|---:|",
            *[
                f"| {name} | {value:.2f} | {serving['scores']['torch'] - value:.2f} |"
                for name, value in serving["scores"].items()
            ],
            "",
            *[f"- {reason}" for reason in serving["reasons"]],
        ]
    if report.examples:
        lines += [
            "",
            "| reference | base model | candidate |",
            "|---|---|---|",
            *[
                "| " + " | ".join(_cell(e[k]) for k in ("reference", "base", "candidate")) + " |"
                for e in report.examples
            ],
        ]
    if report.loss_curve:
        lines += [
            "",
            f"Training loss: {_sparkline([p['loss'] for p in report.loss_curve])} "
            f"({report.loss_curve[0]['loss']:.3f} → {report.loss_curve[-1]['loss']:.3f})",
        ]
    return "\n".join(lines)


def _shown(reference: Any) -> str:
    """A reference as text: QA's accepted answers joined, a summary or reply as it is."""
    return " / ".join(reference) if isinstance(reference, list) else str(reference)


def _cell(text: str, limit: int = 160) -> str:
    """`text` in one Markdown table cell: one line, pipes escaped, long text cut."""
    one_line = " ".join(text.split()).replace("|", "\\|")
    return one_line if len(one_line) <= limit else one_line[: limit - 1] + "…"


def _sparkline(values: list[float]) -> str:
    bars = "▁▂▃▄▅▆▇█"
    low, high = min(values), max(values)
    span = (high - low) or 1.0
    return "".join(bars[int((v - low) / span * (len(bars) - 1))] for v in values)


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
    models again. Its folder (the same name without .json) holds the exported runtimes."""
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
    also the candidate's optimized runtimes, and choose the served one. An evaluation job on
    Azure ML predicts with the three torch models where they fit; the optimized runtimes are
    exported and scored here, from the training job's downloaded output: QA models and the
    packaged generative ones (models that fit this machine; another generative base is refused
    before its weights load), chosen for CPU serving."""
    on_azure = (config.backend or backends.training.name) == "azureml"
    # an evaluation job mounts the champion's model asset; here its files are downloaded
    champion = (
        backends.registry.alias(model_name, "champion")
        if on_azure
        else backends.champion(model_name)
    )
    cached = _cache_path(split, job, champion, config, screen, serving)
    if cached.exists():
        report = EvalReport.model_validate_json(cached.read_text())
    else:
        predictions = None
        if on_azure:
            from trainer.modeling import MODEL_INFO

            info = json.loads((Path(job.output_dir) / MODEL_INFO).read_text())
            made = backends.training.evaluate(
                split.uri,
                job,
                champion.path if champion else None,
                info["base_model"],
                log.info,
                config.max_test_records,
                config.batch_size,
            )
            predictions = made["predictions"]
        report = run_evaluation(
            split,
            job,
            champion,
            config,
            screen,
            backends.store.storage_options,
            predictions,
            serving,
            cached.with_suffix(""),
        )
        cached.parent.mkdir(parents=True, exist_ok=True)
        tmp = cached.with_suffix(".tmp")
        tmp.write_text(report.model_dump_json(indent=2))
        tmp.replace(cached)
    create_markdown_artifact(key="evaluation", markdown=report_markdown(report))
    if report.loss_curve:
        create_table_artifact(
            key="loss-curve", table=report.loss_curve, description="Training loss by step"
        )
    log.info("gate %s: %s", "passed" if report.gate.passed else "failed", report.gate.reasons)
    return report
