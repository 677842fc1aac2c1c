"""Predictions of the base model, the candidate and the champion on a split's test records.

The evaluate stage runs `predict_models` in its own process (evaluate.backend local), or Azure ML
runs this file as the evaluation job's command on the GPU cluster, where the models fit
(evaluate.backend azureml):

    python -m trainer.evaluate --data-dir DIR --candidate DIR [--champion DIR] --output-dir DIR

It writes `predictions.json` ({"task", "test_records", "predictions": {"base": [...],
"candidate": [...], "champion": [...] | null}}); the gate on the orchestrator scores them with
the same metric code as local evaluation and screens the candidate's for personal data.
Every model reads and writes as many tokens as the candidate was trained to; the base model
reads through the candidate's tokenizer (the same vocabulary, with the chat template and
lengths training gave it), so both get the same prompts.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from trainer.args import PREDICTIONS
from trainer.data import read_split
from trainer.modeling import MODEL_INFO, find_model_dir, load_base, load_trained
from trainer.predict import lengths, predict


def predict_models(
    records: Sequence[dict[str, Any]],
    candidate_dir: str | Path,
    champion_dir: str | Path | None = None,
    batch_size: int = 32,
) -> dict[str, list[str] | None]:
    """{"base", "candidate", "champion"}: each model's prediction of every record (champion None
    when there is none)."""
    candidate, tokenizer, info = load_trained(find_model_dir(Path(candidate_dir)))
    max_length, max_new_tokens = lengths(candidate, tokenizer)

    def run(model: Any, tok: Any) -> list[str]:
        return predict(
            model,
            tok,
            info["task"],
            records,
            batch_size=batch_size,
            max_length=max_length,
            max_new_tokens=max_new_tokens,
        )

    base = run(load_base(info["task"], info["base_model"], seed=42), tokenizer)
    # a mounted model asset holds the registered folder one level down
    champion = run(*load_trained(find_model_dir(Path(champion_dir)))[:2]) if champion_dir else None
    return {"base": base, "candidate": run(candidate, tokenizer), "champion": champion}


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(
        prog="python -m trainer.evaluate",
        description="Predict the test split with the base model, the candidate and the champion; "
        f"write {PREDICTIONS} into --output-dir.",
    )
    parser.add_argument("--data-dir", required=True, help="A split dataset folder (test/).")
    parser.add_argument("--candidate", required=True, help="The trained model directory.")
    parser.add_argument("--champion", help="The champion's model directory, if there is one.")
    parser.add_argument("--output-dir", required=True, help=f"Where {PREDICTIONS} is written.")
    parser.add_argument("--max-test-records", type=int, default=0, help="At most (0: all).")
    parser.add_argument("--batch-size", type=int, default=32, help="Records per model call.")
    args = parser.parse_args(argv)
    records = read_split(args.data_dir, "test", args.max_test_records)
    if not records:
        raise SystemExit(f"{args.data_dir} has no test records to evaluate on")
    predictions = predict_models(records, args.candidate, args.champion, args.batch_size)
    task = json.loads((find_model_dir(Path(args.candidate)) / MODEL_INFO).read_text())["task"]
    result = {"task": task, "test_records": len(records), "predictions": predictions}
    out = Path(args.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / PREDICTIONS).write_text(json.dumps(result, ensure_ascii=False))
    return result


if __name__ == "__main__":
    main()
