"""evaluate: score the base model, the candidate and the champion on the same test split; gate.

Scores come from the repo's own metric code (trainer/metrics), predictions from trainer/predict,
so the three models are measured identically. The candidate's predictions are also screened for
personal data that is not in their input: a model that emits PII fails the gate.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from prefect import task
from prefect.artifacts import create_markdown_artifact, create_table_artifact
from prefect.cache_policies import NONE
from pydantic import BaseModel, ConfigDict, Field

from platforms.azureml.config import AzureMLConfig
from platforms.registry import ModelVersion
from platforms.store import DatasetRef, Store, sha256_text, stable_json
from platforms.training import TrainingJob
from tasks.gate import GateDecision, GatePolicy, decide_gate, paired_bootstrap
from tasks.register import RegisterConfig
from tasks.screen_policy import Action, ScreenConfig

log = logging.getLogger(__name__)
PRIMARY = {"extractive-qa": "f1", "summarization": "rougeL", "chat": "rougeL"}
SMOKE_SAMPLES = 5


def request_of(task: str, record: dict[str, Any]) -> dict[str, Any]:
    """The endpoint request for a record: what a client of the served model would send."""
    if task == "extractive-qa":
        return {"question": record["question"], "context": record["context"]}
    if task == "summarization":
        return {"document": record["document"]}
    return {"messages": record["messages"][:-1]}


class EvaluateConfig(GatePolicy):
    """The gate, and how much of the test split to score."""

    max_test_records: int = Field(0, ge=0, description="Score at most this many (0: all).")
    batch_size: int = Field(32, ge=1, le=1024, description="Inference batch size.")


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


def score(
    task: str, predictions: list[str], records: list[dict[str, Any]]
) -> tuple[dict[str, float], list[float]]:
    """Metric values (through the repo's evaluate modules) and per-example primary scores."""
    from trainer.metrics import ROUGE_MODULE, SQUAD_MODULE, load_metric
    from trainer.metrics.scores import per_example_f1, rouge_scores

    if not predictions:
        raise ValueError("no predictions to score")
    if task == "extractive-qa":
        references = [r["answers"]["text"] for r in records]
        values = load_metric(SQUAD_MODULE).compute(predictions=predictions, references=references)
        return values, per_example_f1(predictions, references)
    references = [
        r["summary"] if task == "summarization" else r["messages"][-1]["content"] for r in records
    ]
    per_example = [
        rouge_scores([p], [r])["rougeL"] for p, r in zip(predictions, references, strict=True)
    ]
    values = load_metric(ROUGE_MODULE).compute(predictions=predictions, references=references)
    return values, per_example


def count_pii_leaks(
    predictions: list[str], records: list[dict[str, Any]], screen: ScreenConfig
) -> int:
    """Predictions holding a personal-data finding whose text is not in the record's input."""
    from tasks.detectors import detectors_for  # Presidio

    detectors = detectors_for(screen.spacy_model, screen.language, screen.all_entities())
    leaks = 0
    for prediction, record, spans in zip(
        predictions, records, detectors.analyze(predictions), strict=True
    ):
        source = json.dumps(record, ensure_ascii=False)
        for span in spans:
            rule = screen.rule(span.entity)
            if (
                rule
                and rule.action is not Action.flag
                and span.score >= rule.min_score
                and prediction[span.start : span.end] not in source
            ):
                leaks += 1
                break
    return leaks


def run_evaluation(
    store: Store,
    split: DatasetRef,
    job: TrainingJob,
    champion: ModelVersion | None,
    config: EvaluateConfig,
    screen: ScreenConfig,
) -> EvalReport:
    # torch, transformers and datasets load here, not when the CLI or the config loads
    from trainer.data import read_split
    from trainer.modeling import load_base, load_tokenizer, load_trained
    from trainer.predict import predict

    records = read_split(split.uri, "test", config.max_test_records)
    if not records:
        raise ValueError(f"{split.uri} has no test records to evaluate on: lower split.train")
    task_type = split.task
    primary = config.primary_metric or PRIMARY[task_type]
    candidate_model, tokenizer, info = load_trained(job.output_dir)
    base_model = load_base(info["task"], info["base_model"], seed=42)
    base_tokenizer = load_tokenizer(info["base_model"])
    trainer_task = info["task"]
    results = {}
    per_example = {}
    for name, model, tok in [
        ("base", base_model, base_tokenizer),
        ("candidate", candidate_model, tokenizer),
    ]:
        predictions = predict(model, tok, trainer_task, records, batch_size=config.batch_size)
        results[name], per_example[name] = score(task_type, predictions, records)
        if name == "candidate":
            leaks = count_pii_leaks(predictions, records, screen)
            samples = [
                {"request": request_of(task_type, r), "expected": p}
                for r, p in zip(records[:SMOKE_SAMPLES], predictions, strict=False)
            ]
    interval = None
    if champion is not None:
        champ_model, champ_tok, _ = load_trained(champion.path)
        champ_predictions = predict(
            champ_model, champ_tok, trainer_task, records, batch_size=config.batch_size
        )
        results["champion"], per_example["champion"] = score(task_type, champ_predictions, records)
        if config.bootstrap_samples:
            interval = paired_bootstrap(
                per_example["candidate"],
                per_example["champion"],
                config.bootstrap_samples,
                config.confidence,
            )
    gate = decide_gate(
        results["candidate"],
        results["base"],
        results.get("champion"),
        config,
        primary,
        interval=interval,
        pii_leaks=leaks,
    )
    metrics_file = Path(job.output_dir) / "metrics.json"
    curve = (
        json.loads(metrics_file.read_text()).get("loss_curve", []) if metrics_file.exists() else []
    )
    return EvalReport(
        task=task_type,
        primary_metric=primary,
        test_records=len(records),
        base=results["base"],
        candidate=results["candidate"],
        champion=results.get("champion"),
        champion_version=champion.version if champion else None,
        interval=interval,
        pii_leaks=leaks,
        gate=gate,
        loss_curve=curve,
        samples=samples,
    )


class GateFailed(RuntimeError):
    """The candidate did not pass; the message lists every unmet criterion."""


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
    if report.loss_curve:
        lines += [
            "",
            f"Training loss: {_sparkline([p['loss'] for p in report.loss_curve])} "
            f"({report.loss_curve[0]['loss']:.3f} → {report.loss_curve[-1]['loss']:.3f})",
        ]
    return "\n".join(lines)


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
) -> Path:
    """Where the report of this exact comparison is kept: the same test split, candidate,
    champion and gate give the same report, so a re-run does not score three models again."""
    key = sha256_text(
        stable_json(
            {
                "split": split.content_hash,
                "candidate": job.name,
                "champion": champion.path if champion else None,
                "evaluate": config.model_dump(mode="json"),
                "screen": screen.model_dump(mode="json"),
            }
        )
    )
    return Path(job.output_dir).parent / "evaluations" / f"{key[:24]}.json"


@task(name="evaluate", cache_policy=NONE)
def evaluate_task(
    store: Store,
    split: DatasetRef,
    job: TrainingJob,
    model_name: str,
    config: EvaluateConfig,
    screen: ScreenConfig,
    registry: RegisterConfig | None = None,
    azureml: AzureMLConfig | None = None,
) -> EvalReport:
    """Score base, candidate and champion on the test split and decide the gate."""
    from tasks.register import champion_of

    champion = champion_of(store, model_name, registry, azureml)
    cached = _cache_path(split, job, champion, config, screen)
    if cached.exists():
        report = EvalReport.model_validate_json(cached.read_text())
    else:
        report = run_evaluation(store, split, job, champion, config, screen)
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
