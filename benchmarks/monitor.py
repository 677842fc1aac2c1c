"""What the monitor costs as the collected traffic grows: time and peak memory of one window.

    python benchmarks/monitor.py --sizes 10000 30000 100000

For each size N, writes N collected records (generated support-ticket questions answered, a
tenth of them Wikipedia questions and paragraphs of SQuADShifts, benchmarks/corpora) with the
endpoint's own JSON-lines sink, then, in a fresh process each (so its peak memory is its own),
runs the window as `tunegate monitor` does: the reference (the generator's records, as the
champion's test split), every record of the window read and its features gathered
(`tasks/monitor.read_window`), and every signal measured (`tasks/drift.measure_drift`, the
sentence encoder and Evidently included). Prints a row a size: seconds reading the window,
seconds measuring, records a second, peak RSS; then the ratios against the smallest size in the
same run: reading time per record (linear: about 1.0) and peak memory (bounded: the texts are
not kept, only a few numbers a record and a fixed sample). Never run in CI.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS", "")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

SQUADSHIFTS = ROOT / "benchmarks" / "corpora" / "qa_squadshifts_wiki.json"
START = datetime(2026, 11, 1, tzinfo=UTC)


def _write(folder: Path, n: int) -> None:
    from samples.generate import valid_records
    from serving.collect import Exchange, JsonlSink

    tickets = valid_records("extractive-qa", 2000, seed=11)
    wiki = [
        (qa["question"], p["context"])
        for article in json.loads(SQUADSHIFTS.read_text())["data"]
        for p in article["paragraphs"]
        for qa in p["qas"][:1]
    ]
    rng = random.Random(0)
    sink = JsonlSink(folder, max_bytes=1 << 40, keep=1)
    for i in range(n):
        if i % 10 == 9:
            question, context = wiki[i % len(wiki)]
            answer = context.split(".")[0][:40]
        else:
            r = tickets[i % len(tickets)]
            question, context, answer = r["question"], r["context"], r["answers"]["text"][0]
        sink.write(
            Exchange(
                deployment="blue",
                version="1",
                status=200,
                latency_ms=10.0,
                inputs=[{"question": question, "context": context}],
                outputs=[{"answer": answer, "score": round(rng.uniform(0.4, 0.95), 3)}],
                time=(START + timedelta(milliseconds=i)).isoformat(timespec="milliseconds"),
            )
        )
    sink.close()


def _child(folder: Path) -> None:
    """One window over `folder`'s records; prints a JSON line of timings and peak RSS."""
    from samples.generate import valid_records
    from serving.collect import read_records
    from tasks.drift import measure_drift
    from tasks.drift_features import Sample, strings, vocabulary
    from tasks.drift_signals import DriftSignals
    from tasks.monitor import read_window

    records = valid_records("extractive-qa", 800, seed=3)
    entities = frozenset({"EMAIL_ADDRESS", "PERSON", "PHONE_NUMBER"})
    known = vocabulary(r["question"] + "\n" + r["context"] for r in records[:500])
    reference = Sample(known, entities)
    for r in records[500:]:
        reference.add(
            "\n".join(strings({"question": r["question"], "context": r["context"]})),
            r["answers"]["text"][0],
        )
    started = time.perf_counter()
    window = Sample(known, entities)
    read_window(read_records(folder), 1, START, START + timedelta(days=1), "answer", window)
    read = time.perf_counter() - started
    started = time.perf_counter()
    signals, _ = measure_drift(reference, window, DriftSignals(), plots=False)
    measured = time.perf_counter() - started
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        json.dumps(
            {
                "records": len(window),
                "read_s": read,
                "measure_s": measured,
                "peak_mb": peak_mb,
                "drifted": [s.name for s in signals if s.drift],
            }
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 30_000, 100_000])
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(args.child)
        return
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in sorted(args.sizes):
            folder = Path(tmp) / str(n)
            _write(folder, n)
            out = subprocess.run(
                [sys.executable, __file__, "--child", str(folder)],
                check=True,
                capture_output=True,
                text=True,
            ).stdout
            row = json.loads(out.strip().splitlines()[-1])
            rows.append(row)
            print(
                f"{row['records']:>8} records: read {row['read_s']:7.1f} s "
                f"({row['records'] / row['read_s']:,.0f}/s), measure {row['measure_s']:6.1f} s, "
                f"peak RSS {row['peak_mb']:,.0f} MB, drifted {row['drifted']}",
                flush=True,
            )
    first, last = rows[0], rows[-1]
    per_record = (last["read_s"] / last["records"]) / (first["read_s"] / first["records"])
    print(
        f"reading time per record, {last['records']} vs {first['records']}: {per_record:.2f}x "
        f"(linear: ~1.0); peak RSS {last['peak_mb'] / first['peak_mb']:.2f}x for "
        f"{last['records'] / first['records']:.0f}x the records"
    )


if __name__ == "__main__":
    main()
