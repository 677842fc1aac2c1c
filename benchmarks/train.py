"""Training throughput and model FLOPs utilisation: our trainer against a plain
`transformers.Trainer` that pads, for each task kind, in the same process.

    python benchmarks/train.py --records 400
    python benchmarks/train.py --records 200 --tasks extractive-qa,chat --json out.json

For each task kind both fine-tune its packaged model (LoRA, the task's tuned settings: same rank,
batch size, learning rate and seed) for one epoch over the same tokenised examples built from a
generated sample:
- ours: `trainer.train.main` as a job runs it: each batch padded to its own longest example, and
  batches grouped by length;
- the baseline: a plain `Trainer` whose examples are all padded to `--max-length`, in random order.
Both see the same examples, so both train on the same real tokens; the table gives each side's
real tokens a second and its model FLOPs utilisation (trainer/flops.py: the FLOPs of the real
tokens over this CPU's measured peak), and the ratio ours / baseline. Never run in CI: these
machines are shared and a wall time is no test.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pyarrow as pa
import pyarrow.parquet as pq
from datasets import Dataset
from transformers import Trainer, TrainingArguments, default_data_collator

from samples.generate import valid_records
from trainer import flops
from trainer.args import parse_args
from trainer.data import features
from trainer.modeling import base_config, load_base, load_tokenizer, without_token_types
from trainer.taskspec import task_spec
from trainer.train import _with_lora
from trainer.train import main as train_main

TASKS = ("extractive-qa", "summarization", "chat", "text-generation")
# what a padded position of each column holds (labels: ignored by the loss)
PAD = {"attention_mask": 0, "token_type_ids": 0, "labels": -100}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, default=400, help="records per task to train on")
    parser.add_argument("--tasks", default=",".join(TASKS), help="comma-separated task kinds")
    parser.add_argument("--max-length", type=int, default=256, help="tokens per example")
    parser.add_argument("--json", type=Path, help="also write the results here")
    options = parser.parse_args()

    peak = flops.measured_cpu_peak(seconds=1.0)
    print(f"peak: {peak.flops / 1e9:.1f} GFLOP/s ({peak.source})")
    rows = [_task(task, options, peak) for task in options.tasks.split(",")]
    print()
    print("| task | ours: tokens/s, MFU | padded Trainer: tokens/s, MFU | ratio |")
    print("|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['task']} | {r['ours_tokens_per_second']:,.0f}, {100 * r['ours_mfu']:.1f}% | "
            f"{r['padded_tokens_per_second']:,.0f}, {100 * r['padded_mfu']:.1f}% | "
            f"{r['ratio']:.1f}x |"
        )
    if options.json:
        options.json.write_text(json.dumps({"peak": peak.__dict__, "tasks": rows}, indent=2))


def _task(task: str, options: argparse.Namespace, peak: flops.Peak) -> dict[str, Any]:
    spec = task_spec(task)
    records = valid_records(task, options.records, seed=5)
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data" / "train"
        data.mkdir(parents=True)
        table = pa.Table.from_pylist(records, schema=spec.record_schema)
        pq.write_table(table, data / "part-00000.parquet")
        argv = ["--task", spec.trainer_task, "--data-dir", str(data.parent), "--epochs", "1"]
        argv += ["--max-length", str(options.max_length), "--logging-steps", "100000"]
        args = parse_args([*argv, "--output-dir", f"{tmp}/ours"])
        model = load_base(args.task, args.model, args.seed)
        model = _with_lora(model, args) if args.lora else model
        dataset, lengths, targets = _padded(args, records, options.max_length, model.config)
        print(f"{task}: {len(records)} records, {len(lengths)} examples, {sum(lengths)} tokens")

        ours = train_main([*argv, "--output-dir", f"{tmp}/ours"])
        start = time.perf_counter()
        _plain_trainer(model, dataset, args, f"{tmp}/plain")
        seconds = time.perf_counter() - start
    padded_mfu = flops.utilisation(flops.training_flops(model, lengths, targets), seconds, peak, 1)
    padded = (sum(lengths) + sum(targets or [])) / seconds
    mine = ours["tokens_per_second"] + (sum(targets) / ours["train_seconds"] if targets else 0)
    return {
        "task": task,
        "examples": len(lengths),
        "ours_tokens_per_second": mine,
        "ours_mfu": ours["model_flops_per_second"] / peak.flops,  # one peak for both sides
        "padded_tokens_per_second": padded,
        "padded_mfu": padded_mfu,
        "ratio": mine / padded,
    }


def _padded(
    args: Any, records: list[dict], length: int, model_config: Any
) -> tuple[Dataset, list[int], Any]:
    """The task's training examples as our trainer builds them, each padded to `length`; the
    real lengths (and an encoder-decoder's real target lengths)."""
    tokenizer = task_spec(args.task).code.prepare_tokenizer(load_tokenizer(args.model))
    if args.lora:
        tokenizer = without_token_types(tokenizer, args.task)
    built = features(args.task, tokenizer, records, args, base_config(args.model))
    lengths = list(built["length"])
    columns: dict[str, list] = {}
    for name in built.column_names:
        if name == "length":
            continue
        values = built[name]
        if values and isinstance(values[0], list):
            fill = PAD.get(name, tokenizer.pad_token_id)
            values = [v[:length] + [fill] * (length - len(v)) for v in values]
        columns[name] = values
    targets = None
    if getattr(model_config, "is_encoder_decoder", False) and "labels" in columns:
        targets = [sum(1 for t in labels if t >= 0) for labels in columns["labels"]]
    return Dataset.from_dict(columns), lengths, targets


def _plain_trainer(model: Any, dataset: Dataset, args: Any, out: str) -> None:
    """A stock Trainer over the padded examples, in random order, with the same settings."""
    Trainer(
        model=model,
        args=TrainingArguments(
            output_dir=out,
            num_train_epochs=1,
            per_device_train_batch_size=args.batch_size,
            gradient_accumulation_steps=args.gradient_accumulation_steps,
            learning_rate=args.learning_rate,
            use_cpu=True,
            save_strategy="no",
            report_to="none",
            seed=args.seed,
            disable_tqdm=True,
        ),
        train_dataset=dataset,
        data_collator=default_data_collator,
    ).train()


if __name__ == "__main__":
    main()
