"""screen: PII (Presidio), secrets and toxicity in every text field; act on each by its rule.

Each ingest partition is screened on a Dask worker, which keeps one analyzer per process. The
stage writes `screened` and `quarantine` tables and `report.json`: counts per entity and rule,
records kept / redacted / quarantined / flagged, and masked samples. No raw value found by the
screen is ever written to the report, a log, an artifact or an exception.
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from distributed import Client
from prefect import task
from prefect.artifacts import create_markdown_artifact, create_table_artifact
from prefect.cache_policies import NONE

from platforms.backends import Backends
from platforms.compute import map_partitions
from platforms.keys import key_id, secret_key
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
from tasks.records import QUARANTINE_SCHEMA, TaskType, record_hash
from tasks.screen_policy import Outcome, ScreenConfig, ToxicityConfig, apply_policy
from tasks.screen_report import (
    EntityCount,
    MaskedSample,
    Screened,
    ScreenReport,
    report_hash,
    report_markdown,
)
from trainer.taskspec import task_spec

log = logging.getLogger(__name__)
STAGE = "screen"
SURROGATE_SALT = "surrogate-salt"  # the key's name under <store>/keys/
_SAMPLE_WINDOW = 160


def screen_key(
    parent: DatasetRef, config: ScreenConfig, salt: bytes | None = None
) -> tuple[str, str]:
    """The dataset key and config hash; surrogates depend on the salt too (named by its id)."""
    config_hash = sha256_text(stable_json(config.model_dump(mode="json")))
    parts = [STAGE, parent.content_hash, config_hash]
    if salt is not None:
        parts.append(key_id(salt))
    return combine_hashes(parts), config_hash


def surrogate_salt(store: Store, config: ScreenConfig) -> bytes | None:
    """The salt keying surrogate values, or None when no rule asks for surrogates."""
    if not config.uses_surrogates:
        return None
    return secret_key(store, SURROGATE_SALT, config.surrogate_salt_env)


def run_screen(
    client: Client, store: Store, ingested: DatasetRef, config: ScreenConfig
) -> Screened:
    """Screen the accepted table of an ingest dataset (or reuse an earlier identical screen)."""
    salt = surrogate_salt(store, config)
    key, config_hash = screen_key(ingested, config, salt)
    task_type = TaskType(ingested.task)
    if (existing := store.find_dataset(STAGE, key)) is not None:
        log.info("screen: reusing %s", existing.uri)
        return Screened(existing, load_report(store, existing))
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
            salt=salt,
        )
        totals = _combine(task_type, results, config)
        report = totals.report
        writer.write_json("report.json", report.model_dump(mode="json"))
        ref = writer.commit(
            task=task_type.value,
            content_hash=totals.content_hash,
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
                "screened": table_info(
                    report.kept, totals.screened_files, task_spec(task_type).record_schema
                ),
                "quarantine": table_info(
                    report.quarantined, totals.quarantine_files, QUARANTINE_SCHEMA
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
    return Screened(ref, report)


def load_report(store: Store, screened: DatasetRef) -> ScreenReport:
    return ScreenReport.model_validate_json(store.read_text(f"{screened.uri}/report.json"))


@dataclass(frozen=True, slots=True)
class PartitionScreened:
    """What `screen_partition` did with one partition, handed back to the stage."""

    records_in: int  # records read from the partition
    kept: int  # records written to the screened table
    redacted: int  # kept records with at least one value redacted
    quarantined: int  # records written to the quarantine table
    flagged_ids: tuple[str, ...]  # kept records a person should look at
    entities: tuple[EntityCount, ...]  # findings per entity type and rule
    reasons: dict[str, int]  # quarantined records per reason
    samples: tuple[MaskedSample, ...]  # masked excerpts, at most `max_samples`
    content: int  # `MultisetHash.value` of the kept records
    screened_files: tuple[str, ...]  # screened table files, relative to the dataset
    quarantine_files: tuple[str, ...]  # quarantine table files, relative to the dataset


def screen_partition(
    part_uri: str,
    index: int,
    *,
    work_uri: str,
    store_uri: str,
    store_options: dict[str, Any],
    task_type: TaskType,
    config: ScreenConfig,
    salt: bytes | None = None,
) -> PartitionScreened:
    """Screen one partition on a worker; write its tables; return counts and masked samples."""
    from tasks.detectors import AnalysisFailed, detectors_for  # Presidio loads here
    from tasks.surrogates import Surrogates

    store = Store(store_uri, store_options)
    records = read_table(store, part_uri)
    detectors = detectors_for(config.spacy_model, config.language, config.all_entities())
    fields = [list(task_spec(task_type).text_fields(r)) for r in records]
    flat = [text for record_fields in fields for _, text in record_fields]
    spans = iter(detectors.analyze(flat, config.batch_size))
    tox = iter(_toxicity(flat, config.toxicity))

    kept, quarantine, samples, flagged_ids = [], [], [], []
    counts: Counter[tuple[str, str]] = Counter()
    reasons: Counter[str] = Counter()
    redacted = 0
    content = MultisetHash()
    surrogates = Surrogates(salt) if salt is not None else None
    for record, record_fields in zip(records, fields, strict=True):
        findings = {name: next(spans) for name, _ in record_fields}
        toxicity = max(next(tox) for _ in record_fields)
        failed = [f"{n}: {f.reason}" for n, f in findings.items() if isinstance(f, AnalysisFailed)]
        if failed:  # never kept unscreened: quarantined, masked entirely
            outcome = Outcome(
                record={"id": record["id"]},
                reason="screen could not analyse " + ", ".join(failed),
                masked={name: "<NOT ANALYSED>" for name in findings},
            )
        else:
            outcome = apply_policy(task_type, record, findings, toxicity, config, surrogates)
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

    schema = task_spec(task_type).record_schema
    screened_files = _write_part(store, work_uri, "screened", index, kept, schema)
    quarantine_files = _write_part(
        store, work_uri, "quarantine", index, quarantine, QUARANTINE_SCHEMA
    )
    return PartitionScreened(
        records_in=len(records),
        kept=len(kept),
        redacted=redacted,
        quarantined=len(quarantine),
        flagged_ids=tuple(flagged_ids),
        entities=tuple(EntityCount(entity=e, action=a, findings=n) for (e, a), n in counts.items()),
        reasons=dict(reasons),
        samples=tuple(samples),
        content=content.value,
        screened_files=screened_files,
        quarantine_files=quarantine_files,
    )


def _write_part(
    store: Store,
    work_uri: str,
    table: str,
    index: int,
    rows: list[dict[str, Any]],
    schema: pa.Schema,
) -> tuple[str, ...]:
    """Write `rows` as this partition's file of `table`; its name, or none without rows."""
    if not rows:
        return ()
    name = f"{table}/part-{index:05d}.parquet"
    write_table(store, f"{work_uri}/{name}", rows, schema)
    return (name,)


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


def _sample(record_id: str, outcome: Outcome) -> MaskedSample:
    """A short masked excerpt around the first placeholder of the record."""
    name, text = next(
        ((n, t) for n, t in outcome.masked.items() if "<" in t), next(iter(outcome.masked.items()))
    )
    at = max(text.find("<"), 0)
    start = max(0, at - _SAMPLE_WINDOW // 2)
    return MaskedSample(
        id=record_id,
        field=name,
        excerpt=text[start : start + _SAMPLE_WINDOW],
        entities=sorted({e for e, _ in outcome.counts}),
        outcome="quarantined" if outcome.reason else "flagged" if outcome.flagged else "redacted",
    )


@dataclass(frozen=True, slots=True)
class _ScreenTotals:
    """Every partition's result added up: the report and what the manifest records."""

    report: ScreenReport  # the screening report of the whole dataset
    content_hash: str  # order-independent hash of every kept record
    screened_files: list[str]  # the screened table's files, in partition order
    quarantine_files: list[str]  # the quarantine table's files, in partition order


def _combine(
    task_type: TaskType, results: list[PartitionScreened], config: ScreenConfig
) -> _ScreenTotals:
    counts: Counter[tuple[str, str]] = Counter()
    reasons: Counter[str] = Counter()
    content = MultisetHash()
    screened_files: list[str] = []
    quarantine_files: list[str] = []
    samples: list[MaskedSample] = []
    flagged_ids: list[str] = []
    for r in results:
        counts.update({(c.entity, c.action): c.findings for c in r.entities})
        reasons.update(r.reasons)
        content.merge(MultisetHash(r.content))
        screened_files += r.screened_files
        quarantine_files += r.quarantine_files
        samples += r.samples
        flagged_ids += r.flagged_ids
    total = {
        "records_in": sum(r.records_in for r in results),
        "kept": sum(r.kept for r in results),
        "redacted": sum(r.redacted for r in results),
        "quarantined": sum(r.quarantined for r in results),
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
    return _ScreenTotals(report, content.hexdigest(), screened_files, quarantine_files)


def _spread(samples: list[MaskedSample], limit: int) -> list[MaskedSample]:
    """Up to `limit` samples, quarantined and flagged ones first so a reviewer sees them."""
    order = {"quarantined": 0, "flagged": 1, "redacted": 2}
    return sorted(samples, key=lambda s: order[s.outcome])[:limit]


@task(name="screen", cache_policy=NONE)
def screen_task(backends: Backends, ingested: DatasetRef, config: ScreenConfig) -> Screened:
    """Screen for PII, secrets and toxicity; publish the report as Prefect artifacts."""
    screened = run_screen(backends.compute, backends.store, ingested, config)
    report = screened.report
    create_table_artifact(
        key="screening-counts",
        table=[c.model_dump() for c in report.entities] or [{"entity": "none", "findings": 0}],
        description="Findings per entity type and rule",
    )
    create_markdown_artifact(key="screening-report", markdown=report_markdown(report))
    return screened
