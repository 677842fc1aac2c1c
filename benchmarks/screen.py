"""Screen throughput: the screen stage against a plain Presidio loop, in the same process.

    python benchmarks/screen.py --n 20000

Generates `--n` sample lines, ingests them (untimed), then times
- the screen stage (`run_screen`: Dask LocalCluster, one analyzer per worker, spaCy `nlp.pipe`
  batches, identical texts analysed once, redaction and Parquet output included), and
- the baseline: one loop calling `AnalyzerEngine.analyze` and `AnonymizerEngine.anonymize` for
  every text field of every record,
checks that both find the same entities at the same offsets, prints both rates and ends with
`ratio N.Nx`. Never run in CI: these machines are shared and a wall time is no test.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS", "")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from presidio_analyzer import AnalyzerEngine
from presidio_anonymizer import AnonymizerEngine

from flows.config import validate_config
from platforms.compute import shared_client
from platforms.store import read_table
from samples.generate import generate_sample, write_sample
from screening.detectors import build_analyzer, detectors_for
from screening.toxicity.score import local_toxicity
from tasks.ingest import run_ingest
from tasks.screen import run_screen
from trainer.taskspec import task_spec


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=20_000, help="sample lines to generate")
    parser.add_argument(
        "--task", default="extractive-qa", choices=["extractive-qa", "summarization"]
    )
    parser.add_argument("--workers", type=int, default=2, help="LocalCluster worker processes")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        sample_path = Path(tmp) / "sample.jsonl"
        write_sample(generate_sample(args.task, args.n, seed=11), sample_path)
        cfg = validate_config(
            {
                "task": args.task,
                "store": f"{tmp}/store",
                "ingest": {"inputs": [str(sample_path)]},
                "dask": {"n_workers": args.workers, "partition_rows": 500},
            }
        )
        client, store = shared_client(cfg.dask), cfg.open_store()
        ingested = run_ingest(client, store, cfg.task, cfg.columns, cfg.ingest, cfg.azure, 500)
        records = [r for f in store.table_files(ingested, "accepted") for r in read_table(store, f)]
        texts = [text for r in records for _, text in task_spec(args.task).text_fields(r)]
        entities = list(cfg.screen.all_entities())
        print(f"{len(records)} records, {len(texts)} text fields, {len(set(texts))} distinct")

        client.run(_warm, cfg.screen.spacy_model, cfg.screen.language, tuple(entities))
        start = time.perf_counter()
        _, report = run_screen(client, store, ingested, cfg.screen)
        stage_seconds = time.perf_counter() - start
        stage_rate = len(records) / stage_seconds
        print(
            f"screen stage: {stage_rate:,.0f} records/s ({stage_seconds:.1f}s; "
            f"kept {report.kept}, redacted {report.redacted}, quarantined {report.quarantined})"
        )

        analyzer, anonymizer = _plain_analyzer(cfg.screen.spacy_model), AnonymizerEngine()
        analyzer.analyze("warm up", language="en", entities=entities)
        start = time.perf_counter()
        baseline = []
        for text in texts:
            results = analyzer.analyze(text, language="en", entities=entities)
            anonymizer.anonymize(text=text, analyzer_results=results)
            baseline.append({(r.entity_type, r.start, r.end) for r in results})
        base_seconds = time.perf_counter() - start
        base_rate = len(records) / base_seconds
        print(f"baseline loop: {base_rate:,.0f} records/s ({base_seconds:.1f}s)")

        batched = detectors_for(cfg.screen.spacy_model, "en", tuple(entities)).analyze(texts)
        ours = [{(s.entity, s.start, s.end) for s in spans} for spans in batched]
        differing = sum(a != b for a, b in zip(ours, baseline, strict=True))
        print(f"same findings: {len(texts) - differing}/{len(texts)} text fields identical")
        if differing:
            raise SystemExit(f"findings differ in {differing} fields: the comparison is void")
        print(f"ratio {stage_rate / base_rate:.1f}x")


def _plain_analyzer(model: str) -> AnalyzerEngine:
    """Presidio as its README sets it up (parser on), plus the screen's own recognizers
    (credentials, names, addresses, phones, cards) so findings can match."""
    return build_analyzer(model, parser=True)


def _warm(model: str, language: str, entities: tuple[str, ...]) -> None:
    """Load the models on each worker before timing (as a long-running cluster would have)."""
    detectors_for(model, language, entities).analyze(["warm up"])
    local_toxicity(["warm up"])


if __name__ == "__main__":
    main()
