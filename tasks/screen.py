"""screen: PII (Presidio), secrets and toxicity over every text field; redact, drop or flag.

Each ingest partition is screened on a Dask worker, which keeps one analyzer per process. The
stage writes `screened` and `quarantine` tables and `report.json`: counts per entity and rule,
records kept / redacted / quarantined / flagged, and masked samples. No raw value found by the
screen is ever written to the report, a log, an artifact or an exception.
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from typing import Any

from distributed import Client
from prefect import task
from prefect.artifacts import create_markdown_artifact, create_table_artifact
from prefect.cache_policies import NONE
from pydantic import BaseModel, ConfigDict, Field

from platforms.compute import DaskConfig, lazy_client, map_partitions
from platforms.store import (
    DatasetRef,
    MultisetHash,
    Store,
    combine_hashes,
    read_table,
    sha256_text,
    stable_json,
    table_info,
    write_table,
)
from tasks.content_safety import content_safety_scores
from tasks.records import QUARANTINE_SCHEMA, RECORD_SCHEMAS, TaskType, record_hash, text_fields
from tasks.screen_policy import ScreenConfig, ToxicityConfig, apply_policy

log = logging.getLogger(__name__)
STAGE = "screen"
_SAMPLE_WINDOW = 160


class EntityCount(BaseModel):
    model_config = ConfigDict(frozen=True)
    entity: str
    action: str
    findings: int


class ScreenReport(BaseModel):
    """What the screen found and did; shown to the reviewer, stored beside the dataset."""

    model_config = ConfigDict(frozen=True)
    task: str
    records_in: int
    kept: int
    redacted: int
    quarantined: int
    flagged: int
    entities: list[EntityCount]
    quarantine_reasons: dict[str, int]
    flagged_ids: list[str] = Field(description="Kept records a person should look at.")
    samples: list[dict[str, Any]] = Field(description="Masked excerpts; never raw values.")
    toxicity_threshold: float

    @property
    def needs_review(self) -> bool:
        """True when the policy flagged something for a person (auto-if-clean then waits)."""
        return self.flagged > 0


def screen_key(parent: DatasetRef, config: ScreenConfig) -> tuple[str, str]:
    config_hash = sha256_text(stable_json(config.model_dump(mode="json")))
    return combine_hashes([STAGE, parent.content_hash, config_hash]), config_hash


def run_screen(
    client: Client, store: Store, ingested: DatasetRef, config: ScreenConfig
) -> tuple[DatasetRef, ScreenReport]:
    """Screen the accepted table of an ingest dataset (or reuse an earlier identical screen)."""
    key, config_hash = screen_key(ingested, config)
    task_type = TaskType(ingested.task)
    if (existing := store.find_dataset(STAGE, key)) is not None:
        log.info("screen: reusing %s", existing.uri)
        return existing, load_report(store, existing)
    parts = store.table_files(ingested, "accepted")
    writer = store.begin_dataset(STAGE, key)
    try:
        results = map_partitions(
            client,
            screen_partition,
            parts,
            list(range(len(parts))),
            description="screen",
            work_uri=writer.work_uri,
            store_uri=store.uri,
            store_options=store.storage_options,
            task_type=task_type,
            config=config,
        )
        report, content, files = _combine(task_type, results, config)
        writer.write_json("report.json", report.model_dump(mode="json"))
        ref = writer.commit(
            task=task_type.value,
            content_hash=content,
            parent_hashes=[ingested.content_hash],
            config_hash=config_hash,
            counts={
                "read": report.records_in,
                "accepted": report.kept,
                "redacted": report.redacted,
                "quarantined": report.quarantined,
                "flagged": report.flagged,
            },
            tables={
                "screened": table_info(report.kept, files["screened"], RECORD_SCHEMAS[task_type]),
                "quarantine": table_info(
                    report.quarantined, files["quarantine"], QUARANTINE_SCHEMA
                ),
            },
            extra={"report_hash": report_hash(report)},
        )
    except BaseException:
        writer.abort()
        raise
    log.info(
        "screen: kept=%d redacted=%d quarantined=%d flagged=%d",
        report.kept,
        report.redacted,
        report.quarantined,
        report.flagged,
    )
    return ref, report


def load_report(store: Store, screened: DatasetRef) -> ScreenReport:
    return ScreenReport.model_validate_json(store.read_text(f"{screened.uri}/report.json"))


def report_hash(report: ScreenReport) -> str:
    return sha256_text(stable_json(report.model_dump(mode="json")))


def screen_partition(
    part_uri: str,
    index: int,
    *,
    work_uri: str,
    store_uri: str,
    store_options: dict[str, Any],
    task_type: TaskType,
    config: ScreenConfig,
) -> dict[str, Any]:
    """Screen one partition on a worker; write its tables; return counts and masked samples."""
    from tasks.detectors import detectors_for  # Presidio loads here, not when the CLI starts

    store = Store(store_uri, store_options)
    records = read_table(store, part_uri)
    detectors = detectors_for(config.spacy_model, config.language, config.all_entities())
    fields = [list(text_fields(task_type, r)) for r in records]
    flat = [text for record_fields in fields for _, text in record_fields]
    spans = iter(detectors.analyze(flat, config.batch_size))
    tox = iter(_toxicity(flat, config.toxicity))

    kept, quarantine, samples, flagged_ids = [], [], [], []
    counts: Counter[tuple[str, str]] = Counter()
    reasons: Counter[str] = Counter()
    redacted = 0
    content = MultisetHash()
    for record, record_fields in zip(records, fields, strict=True):
        findings = {name: next(spans) for name, _ in record_fields}
        toxicity = max(next(tox) for _ in record_fields)
        outcome = apply_policy(task_type, record, findings, toxicity, config)
        counts.update(outcome.counts)
        if outcome.reason is not None:
            reasons.update(outcome.reason.split("; "))
            quarantine.append(
                {
                    "source": part_uri,
                    "line": None,
                    "id": record["id"],
                    "stage": STAGE,
                    "reason": outcome.reason,
                    "raw": json.dumps(outcome.record, ensure_ascii=False),
                }
            )
        else:
            kept.append(outcome.record)
            content.add(record_hash(outcome.record))
            redacted += outcome.redacted
            if outcome.flagged:
                flagged_ids.append(record["id"])
        if (outcome.counts or outcome.reason) and len(samples) < config.max_samples:
            samples.append(_sample(record["id"], outcome))

    files: dict[str, list[str]] = {"screened": [], "quarantine": []}
    if kept:
        files["screened"].append(f"screened/part-{index:05d}.parquet")
        write_table(store, f"{work_uri}/{files['screened'][0]}", kept, RECORD_SCHEMAS[task_type])
    if quarantine:
        files["quarantine"].append(f"quarantine/part-{index:05d}.parquet")
        write_table(store, f"{work_uri}/{files['quarantine'][0]}", quarantine, QUARANTINE_SCHEMA)
    return {
        "records_in": len(records),
        "kept": len(kept),
        "redacted": redacted,
        "quarantined": len(quarantine),
        "flagged_ids": flagged_ids,
        "counts": [[e, a, n] for (e, a), n in counts.items()],
        "reasons": dict(reasons),
        "samples": samples,
        "content": content.value,
        "files": files,
    }


def _toxicity(texts: list[str], config: ToxicityConfig) -> list[float]:
    """Scores from the configured backend; each distinct text is scored once."""
    unique = list(dict.fromkeys(texts))
    if config.backend == "azure-content-safety":
        assert config.endpoint is not None  # checked by ToxicityConfig
        scores = content_safety_scores(unique, config.endpoint, config.key_env)
    else:
        from tasks.detectors import toxicity_scores

        scores = toxicity_scores(unique)
    by_text = dict(zip(unique, scores, strict=True))
    return [by_text[t] for t in texts]


def _sample(record_id: str, outcome: Any) -> dict[str, Any]:
    """A short masked excerpt around the first placeholder of the record."""
    name, text = next(
        ((n, t) for n, t in outcome.masked.items() if "<" in t), next(iter(outcome.masked.items()))
    )
    at = max(text.find("<"), 0)
    start = max(0, at - _SAMPLE_WINDOW // 2)
    return {
        "id": record_id,
        "field": name,
        "excerpt": text[start : start + _SAMPLE_WINDOW],
        "entities": sorted({e for e, _ in outcome.counts}),
        "outcome": "quarantined"
        if outcome.reason
        else "flagged"
        if outcome.flagged
        else "redacted",
    }


def _combine(
    task_type: TaskType, results: list[dict[str, Any]], config: ScreenConfig
) -> tuple[ScreenReport, str, dict[str, list[str]]]:
    counts: Counter[tuple[str, str]] = Counter()
    reasons: Counter[str] = Counter()
    content = MultisetHash()
    files: dict[str, list[str]] = {"screened": [], "quarantine": []}
    samples: list[dict[str, Any]] = []
    flagged_ids: list[str] = []
    for r in results:
        counts.update({(e, a): n for e, a, n in r["counts"]})
        reasons.update(r["reasons"])
        content.merge(MultisetHash(r["content"]))
        for table in files:
            files[table] += r["files"][table]
        samples += r["samples"]
        flagged_ids += r["flagged_ids"]
    total = {
        k: sum(r[k] for r in results) for k in ("records_in", "kept", "redacted", "quarantined")
    }
    if total["records_in"] != total["kept"] + total["quarantined"]:
        raise RuntimeError(f"screen lost records: {total}")  # a bug, never data
    report = ScreenReport(
        task=task_type.value,
        **total,
        flagged=len(flagged_ids),
        entities=[
            EntityCount(entity=e, action=a, findings=n) for (e, a), n in sorted(counts.items())
        ],
        quarantine_reasons=dict(reasons.most_common()),
        flagged_ids=sorted(flagged_ids),
        samples=_spread(samples, config.max_samples),
        toxicity_threshold=config.toxicity.threshold,
    )
    return report, content.hexdigest(), files


def _spread(samples: list[dict[str, Any]], limit: int) -> list[dict[str, Any]]:
    """Up to `limit` samples, quarantined and flagged ones first so a reviewer sees them."""
    order = {"quarantined": 0, "flagged": 1, "redacted": 2}
    return sorted(samples, key=lambda s: order[s["outcome"]])[:limit]


def report_markdown(report: ScreenReport) -> str:
    """The screening report as markdown: what a reviewer reads before approving."""
    lines = [
        f"### Screening report ({report.task})",
        "",
        "| records in | kept | redacted | quarantined | flagged for review |",
        "|---:|---:|---:|---:|---:|",
        f"| {report.records_in} | {report.kept} | {report.redacted} | {report.quarantined} "
        f"| {report.flagged} |",
        "",
        "| entity | rule | findings |",
        "|---|---|---:|",
        *[f"| {c.entity} | {c.action} | {c.findings} |" for c in report.entities],
    ]
    if report.quarantine_reasons:
        lines += ["", "**Quarantine reasons**", ""]
        lines += [f"- {reason}: {n}" for reason, n in list(report.quarantine_reasons.items())[:15]]
    if report.samples:
        lines += ["", "**Masked samples**", ""]
        for s in report.samples:
            excerpt = _markdown_text(s["excerpt"])
            lines.append(f"- `{s['id']}` ({s['outcome']}, {s['field']}): {excerpt}")
    if report.flagged_ids:
        shown = ", ".join(report.flagged_ids[:20])
        lines += ["", f"**Flagged record ids** ({report.flagged}): {shown}"]
    return "\n".join(lines)


def _markdown_text(text: str) -> str:
    """Text shown as-is in a markdown table or list: placeholders like `<PERSON>` would
    otherwise be taken for HTML tags and vanish from the Prefect UI."""
    escaped = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return escaped.replace("\n", " ").replace("|", "\\|")


@task(name="screen", cache_policy=NONE)
def screen_task(
    store: Store, dask: DaskConfig, ingested: DatasetRef, config: ScreenConfig
) -> tuple[DatasetRef, ScreenReport]:
    """Screen for PII, secrets and toxicity; publish the report as Prefect artifacts."""
    screened, report = run_screen(lazy_client(dask), store, ingested, config)
    create_table_artifact(
        key="screening-counts",
        table=[c.model_dump() for c in report.entities] or [{"entity": "none", "findings": 0}],
        description="Findings per entity type and rule",
    )
    create_markdown_artifact(key="screening-report", markdown=report_markdown(report))
    return screened, report
