"""Surrogates against placeholders: what each screening teaches the model, on real-looking PII.

    python benchmarks/surrogate.py --n 1200

Generates `--n` sample QA lines (tickets with planted names, e-mails, phone numbers, cards, IBANs,
IPs, SSNs), ingests them once, then for each PII action
- `redact`: every personal-data finding becomes `<PERSON>`, `<EMAIL_ADDRESS>` ...;
- `surrogate`: every finding becomes a realistic fake of the same type and shape;
screens (the real Presidio screen), splits by the raw context (the same test records both times)
and fine-tunes the packaged MiniLM with the task's tuned defaults, as `tunegate run` does. Both models
are then scored on the *unscreened* test records (the real-looking PII a deployed model meets) by
the same prediction and metric code as the evaluate stage, overall and on the questions whose
answer is a personal-data value ("Who wrote the ticket?", "Which card was charged?").
Prints F1/EM per model and subset and the share of answers that are placeholders. Takes about
15 minutes on 2 idle cores. Never run in CI: a measurement, not a test.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS", "")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pyarrow as pa
import pyarrow.parquet as pq

from flows.config import validate_config
from platforms.compute import shared_client
from platforms.store import read_table
from platforms.training import trainer_arguments
from samples.generate import generate_sample, write_sample
from screening.config import Action
from tasks.ingest import run_ingest
from tasks.scoring import predict_and_score
from tasks.screen import run_screen
from tasks.split import assign_split
from trainer.modeling import load_trained
from trainer.taskspec import EXTRACTIVE_QA
from trainer.train import main as train_main


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=1200, help="sample lines to generate")
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument(
        "--work", help="keep the store here (a second run reuses its datasets and models)"
    )
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as scratch:
        tmp = args.work or scratch
        Path(tmp).mkdir(parents=True, exist_ok=True)
        sample = generate_sample("extractive-qa", args.n, seed=args.seed)
        write_sample(sample, Path(tmp) / "sample.jsonl")
        cfg = validate_config(
            {
                "task": "extractive-qa",
                "store": f"{tmp}/store",
                "ingest": {"inputs": [f"{tmp}/sample.jsonl"]},
                "train": {"model": "packaged:all-MiniLM-L6-v2"},
            }
        )
        client, store = shared_client(cfg.dask), cfg.open_store()
        ingested = run_ingest(client, store, cfg.task, cfg.columns, cfg.ingest, cfg.azure, 500)
        raw = {
            r["id"]: r
            for f in store.table_files(ingested, "accepted")
            for r in read_table(store, f)
        }
        planted = {v for values in sample.planted_pii.values() for v in values}
        print(f"{len(raw)} accepted records; {len(planted)} distinct planted PII values")

        # One split for both, by the raw context (the split stage hashes the screened context,
        # which differs between placeholders and surrogates), so both see the same test records.
        split_of = {i: assign_split(r["context"], cfg.split) for i, r in raw.items()}
        test_ids = sorted(i for i, part in split_of.items() if part == "test")
        results = {}
        for action in (Action.redact, Action.surrogate):
            rules = {
                name: rule.model_copy(update={"action": action}) if rule.action.replaces else rule
                for name, rule in cfg.screen.entities.items()
            }
            screen = cfg.screen.model_copy(update={"entities": rules})
            screened = run_screen(client, store, ingested, screen).dataset
            kept = [
                r for f in store.table_files(screened, "screened") for r in read_table(store, f)
            ]
            model_dir = Path(tmp) / f"model-{action.value}"
            if not (model_dir / "model_info.json").exists():
                data = Path(tmp) / f"split-{action.value}"
                for part in ("train", "validation"):
                    rows = [r for r in kept if split_of[r["id"]] == part]
                    (data / part).mkdir(parents=True, exist_ok=True)
                    table = pa.Table.from_pylist(rows, schema=EXTRACTIVE_QA.record_schema)
                    pq.write_table(table, data / part / "part-00000.parquet")
                args = cfg.train.trainer_args("extractive-qa")
                train_main(trainer_arguments(str(data), str(model_dir), args))
            kept_ids = {r["id"] for r in kept}
            records = [raw[i] for i in test_ids if i in kept_ids]  # as written, unscreened
            model, tokenizer, info = load_trained(model_dir)
            scored = predict_and_score(
                "extractive-qa", info["task"], model, tokenizer, records, batch_size=32
            )
            results[action.value] = (records, scored)

    records, _ = results["redact"]
    entity = [i for i, r in enumerate(records) if set(r["answers"]["text"]) & planted]
    print(f"{len(records)} test records, {len(entity)} with a personal-data answer\n")
    print(f"{'trained on':<12}{'F1 all':>8}{'EM all':>8}{'F1 PII answers':>16}{'placeholders':>14}")
    for action, (_, scored) in results.items():
        f1_entity = sum(scored.per_example[i] for i in entity) / max(len(entity), 1)
        holders = sum(p.startswith("<") and p.endswith(">") for p in scored.predictions)
        print(
            f"{action:<12}{scored.metrics['f1']:>8.1f}{scored.metrics['exact_match']:>8.1f}"
            f"{f1_entity:>16.1f}{holders:>14}"
        )


if __name__ == "__main__":
    main()
