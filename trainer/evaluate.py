"""Predictions of the base model, the candidate and the champion on a split's test records.

The evaluate stage runs `predict_models` in its own process (evaluate.backend local), or Azure ML
runs this file as the evaluation job's command on the GPU cluster, where the models fit
(evaluate.backend azureml):

    python -m trainer.evaluate --data-dir DIR --candidate DIR [--champion DIR] --output-dir DIR

It writes `predictions.json` ({"task", "test_records", "placement": {"device", "dtype"},
"predictions": {"base": [...], "candidate": [...], "champion": [...] | null}}) and
`scores.json`, each model's scores by the metric code local evaluation scores with
(`trainer.metrics.score_records`: {"task", "metric", "test_records", "models": {"base":
{"metrics": {...}, "per_example": [...]}, "candidate": ..., "champion": ... | null}}, the
per-record primary scores for the gate's paired bootstrap); the job then screens the
candidate's outputs for personal data (`python -m screening.outputs`, `output-screen.json`).
The gate on the orchestrator takes those numbers and findings as they are: only these files
come back. The models predict as the endpoint serves: on the GPU in its
dtype (`--dtype`, the endpoint's `TUNEGATE_DTYPE`; `trainer.modeling.placement`), spread over
the node's GPUs or in 4 bits as the endpoint is (`--device-map`, `--load-in-4bit`:
trainer/spread.py), loaded one at a time, each freed before the next, generative ones in batches padded on the left; so the
candidate's answers are the rollout's smoke answers.
Every model reads and writes as many tokens as the candidate was trained to; the base model
reads through the candidate's tokenizer (the same vocabulary, with the chat template and
lengths training gave it), so both get the same prompts.
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from trainer.args import PREDICTIONS, SCORES
from trainer.data import read_split
from trainer.modeling import (
    DTYPES,
    MODEL_INFO,
    find_model_dir,
    load_base,
    load_trained,
    place,
    placement,
    release_memory,
)
from trainer.predict import lengths, predict
from trainer.spread import DEVICE_MAPS, Spread
from trainer.taskspec import task_spec


def predict_models(
    records: Sequence[dict[str, Any]],
    candidate_dir: str | Path,
    champion_dir: str | Path | None = None,
    batch_size: int = 32,
    dtype: str = "auto",
    spread: Spread | None = None,
) -> dict[str, list[str] | None]:
    """{"base", "candidate", "champion"}: each model's prediction of every record (champion None
    when there is none).

    The models are placed as the endpoint places its model (`placement(dtype)`, the endpoint's
    `TUNEGATE_DTYPE`: on a GPU in bfloat16 where supported, else float16; float32 on a CPU) and
    loaded one at a time, each freed before the next loads: a GPU that serves one 7B model holds
    one here too. `spread`: the endpoint's too (spread over the node's GPUs, 4-bit)."""
    import torch

    device, torch_dtype = placement(dtype)
    in_dtype = None if device == "cpu" else torch_dtype
    on_gpus = (spread or Spread()).load_kwargs(device, torch_dtype, torch.cuda.device_count())
    candidate_dir = find_model_dir(Path(candidate_dir))
    made: dict[str, list[str] | None] = {"base": None, "candidate": None, "champion": None}
    sizes: dict[str, Any] = {}  # the candidate's (max_length, max_new_tokens) and tokenizer

    def run(name: str, load: Callable[[], tuple[Any, Any]]) -> None:
        model, tokenizer = load()
        place(model, device, torch_dtype)
        if not sizes:  # the candidate: every model reads and writes as many tokens as it does
            sizes.update(lengths=lengths(model, tokenizer), tokenizer=tokenizer)
        max_length, max_new_tokens = sizes["lengths"]
        made[name] = predict(
            model,
            tokenizer,
            task,
            records,
            batch_size=batch_size,
            max_length=max_length,
            max_new_tokens=max_new_tokens,
        )
        del model  # freed before the next model loads
        release_memory()

    def trained(folder: Path) -> tuple[Any, Any]:
        model, tokenizer, _ = load_trained(folder, dtype=in_dtype, spread=on_gpus)
        return model, tokenizer

    info = json.loads((candidate_dir / MODEL_INFO).read_text())
    task = info["task"]
    run("candidate", lambda: trained(candidate_dir))
    # the base model reads through the candidate's tokenizer
    run(
        "base",
        lambda: (
            load_base(task, info["base_model"], seed=42, dtype=in_dtype, spread=on_gpus),
            sizes["tokenizer"],
        ),
    )
    if champion_dir:  # a mounted model asset holds the registered folder one level down
        run("champion", lambda: trained(find_model_dir(Path(champion_dir))))
    return made


def score_models(
    task: str, predictions: dict[str, list[str] | None], records: Sequence[dict[str, Any]]
) -> dict[str, Any]:
    """`scores.json`: each model's metric values and per-record primary scores (None for a
    model that did not predict), by `trainer.metrics.score_records`."""
    from trainer.metrics import score_records  # evaluate and rouge_score load here

    models: dict[str, dict[str, Any] | None] = {}
    for name, made in predictions.items():
        if made is None:
            models[name] = None
            continue
        metrics, per_example = score_records(task, made, records)
        models[name] = {"metrics": metrics, "per_example": per_example}
    return {
        "task": task,
        "metric": task_spec(task).metric,
        "test_records": len(records),
        "models": models,
    }


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(
        prog="python -m trainer.evaluate",
        description="Predict the test split with the base model, the candidate and the champion; "
        f"score them; write {PREDICTIONS} and {SCORES} into --output-dir.",
    )
    parser.add_argument("--data-dir", required=True, help="A split dataset folder (test/).")
    parser.add_argument("--candidate", required=True, help="The trained model directory.")
    parser.add_argument("--champion", help="The champion's model directory, if there is one.")
    parser.add_argument(
        "--output-dir", required=True, help=f"Where {PREDICTIONS} and {SCORES} are written."
    )
    parser.add_argument("--max-test-records", type=int, default=0, help="At most (0: all).")
    parser.add_argument("--batch-size", type=int, default=32, help="Records per model call.")
    parser.add_argument(
        "--dtype",
        choices=["auto", *DTYPES],
        default=os.environ.get("TUNEGATE_DTYPE", "auto"),
        help="The models' dtype on a GPU, the endpoint's TUNEGATE_DTYPE (auto: bfloat16 where "
        "supported, else float16); float32 on a CPU.",
    )
    parser.add_argument(
        "--device-map",
        choices=DEVICE_MAPS,
        default="auto",
        help="The endpoint's azureml.endpoint.device_map: auto spreads a model over the node's "
        "GPUs when there are several; single puts it whole on the first.",
    )
    parser.add_argument(
        "--load-in-4bit",
        action="store_true",
        help="The endpoint's azureml.endpoint.load_in_4bit: 4-bit weights (needs bitsandbytes).",
    )
    args = parser.parse_args(argv)
    records = read_split(args.data_dir, "test", args.max_test_records)
    if not records:
        raise SystemExit(f"{args.data_dir} has no test records to evaluate on")
    predictions = predict_models(
        records,
        args.candidate,
        args.champion,
        args.batch_size,
        args.dtype,
        Spread(args.device_map, args.load_in_4bit),
    )
    task = json.loads((find_model_dir(Path(args.candidate)) / MODEL_INFO).read_text())["task"]
    device, dtype = placement(args.dtype)
    result = {
        "task": task,
        "test_records": len(records),
        # where the predictions were made: the rollout's smoke answers are these
        "placement": {"device": device, "dtype": str(dtype).removeprefix("torch.")},
        "predictions": predictions,
    }
    out = Path(args.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / PREDICTIONS).write_text(json.dumps(result, ensure_ascii=False))
    scores = score_models(task, predictions, records)
    (out / SCORES).write_text(json.dumps(scores))
    print(f"[evaluate] {len(records)} test records scored: " + _summary(scores), flush=True)
    return result


def _summary(scores: dict[str, Any]) -> str:
    """One line of each model's metric values, for the job's log."""
    return "; ".join(
        f"{name} " + ", ".join(f"{k} {v:.2f}" for k, v in made["metrics"].items())
        for name, made in scores["models"].items()
        if made is not None
    )


if __name__ == "__main__":
    main()
