"""Training throughput: our trainer against a plain `transformers.Trainer`, in the same process.

    python benchmarks/train.py --records 400

Both fine-tune the packaged MiniLM (LoRA, same rank, batch size, learning rate and seed) for one
epoch over the same extractive-QA windows built from generated sample tickets:
- ours: `trainer.train.main` as a job runs it: each batch padded to its own longest window, and
  batches grouped by length;
- the baseline: a plain `Trainer` whose windows are all padded to `--max-length`, in random order.
Both see the same windows, so both process the same non-padding tokens; the script prints each
side's non-padding tokens/s and ends with `ratio N.Nx` (ours / baseline). Never run in CI: these
machines are shared and a wall time is no test.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pyarrow as pa
import pyarrow.parquet as pq
from datasets import Dataset
from transformers import Trainer, TrainingArguments, default_data_collator

from samples.generate import valid_records
from trainer.args import PACKAGED_MODEL, TrainArgs
from trainer.modeling import load_base, load_tokenizer
from trainer.qa import train_features
from trainer.taskspec import EXTRACTIVE_QA
from trainer.train import _with_lora
from trainer.train import main as train_main


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, default=400, help="QA records to train on")
    parser.add_argument("--max-length", type=int, default=256, help="tokens per window")
    parser.add_argument("--batch-size", type=int, default=16)
    args = parser.parse_args()

    records = valid_records("extractive-qa", args.records, seed=5)
    tokenizer = load_tokenizer(PACKAGED_MODEL)
    windows = train_features(tokenizer, records, args.max_length, 64)
    real_tokens = sum(len(ids) for ids in windows["input_ids"])
    print(f"{len(records)} records, {len(windows['input_ids'])} windows, {real_tokens} tokens")

    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data" / "train"
        data.mkdir(parents=True)
        table = pa.Table.from_pylist(records, schema=EXTRACTIVE_QA.record_schema)
        pq.write_table(table, data / "part-00000.parquet")
        common = ["--epochs", "1", "--batch-size", str(args.batch_size)]
        common += ["--max-length", str(args.max_length), "--logging-steps", "1000"]

        start = time.perf_counter()
        train_main(["--data-dir", str(data.parent), "--output-dir", f"{tmp}/ours", *common])
        ours = real_tokens / (time.perf_counter() - start)

        start = time.perf_counter()
        _plain_trainer(tokenizer, records, args, f"{tmp}/plain")
        baseline = real_tokens / (time.perf_counter() - start)

    print(f"ours      {ours:8.1f} non-padding tokens/s (dynamic padding, length-grouped)")
    print(f"baseline  {baseline:8.1f} non-padding tokens/s (padded to {args.max_length})")
    print(f"ratio {ours / baseline:.1f}x")


def _plain_trainer(tokenizer, records: list[dict], args: argparse.Namespace, out: str) -> None:
    """The same model and windows through a stock Trainer, every window padded to max length."""
    defaults = TrainArgs(data_dir="unused")
    windows = train_features(tokenizer, records, args.max_length, 64)
    padded = tokenizer.pad(
        {k: windows[k] for k in ("input_ids", "attention_mask", "token_type_ids")},
        padding="max_length",
        max_length=args.max_length,
    )
    dataset = Dataset.from_dict(
        {
            **dict(padded),
            "start_positions": windows["start_positions"],
            "end_positions": windows["end_positions"],
        }
    )
    model = _with_lora(load_base("extractive-qa", PACKAGED_MODEL, defaults.seed), defaults)
    Trainer(
        model=model,
        args=TrainingArguments(
            output_dir=out,
            num_train_epochs=1,
            per_device_train_batch_size=args.batch_size,
            learning_rate=defaults.learning_rate,
            use_cpu=True,
            save_strategy="no",
            report_to="none",
            seed=defaults.seed,
            disable_tqdm=True,
        ),
        train_dataset=dataset,
        data_collator=default_data_collator,
    ).train()


if __name__ == "__main__":
    main()
