"""Issue 24 item 10's measuring stick: the default config on generative data written by others.

For each corpus of `benchmarks/corpora/` (`--task` picks one) it runs `tunegate run` with
`configs/local.yaml` on that corpus's `dev` or `test` half (`--split`; the halves are split by a
hash of the id, for QA of the article, so dev and test share no dialogue or article), in a fresh
store, as its own model (`bench-<task>`), up to registration (`until: register`: no endpoint is
left serving). Then it reads the run's evaluation report (its summary) and prints the registered
model's held-out metric beside baselines computed on the same held-out records (the run's own
test split), with the project's metric code (`trainer.metrics.scores`):

- summarization (`summarization_crd3.jsonl`, CRD3): ROUGE-L of the candidate, of the base model,
  of "the first two turns" and of a constant sentence (the training split's summary that scores
  best against the other training summaries: what a model that writes one template at best
  scores); and how many distinct summaries the candidate wrote for the test dialogues;
- chat (`chat_sgd.jsonl`, Schema-Guided Dialogue): ROUGE-L of the candidate's last reply, of the
  base model's and of "echo the user's last message"; distinct replies;
- extractive-qa (`qa_squadshifts_wiki.json`, SQuADShifts' new Wikipedia articles): F1 of the
  candidate and of the base model and their ratio;

and the run's wall time. Then, when it ran on one half, the same on the corpus's other half
(dialogues, conversations and whole articles the run never saw; `--other-limit` caps it): that
half through the same ingest and screen (`until: split`, a store of its own), then the candidate
and the base model predicted and scored as the evaluate stage does. Item 10's targets: summarization and chat beat their baseline with a
different output for (nearly) every record, within 10 minutes on two idle cores; QA's F1 at least
3x the base model's. Never run in CI; it trains (minutes per task):

    python benchmarks/generative.py --split dev                     # all three, ~10-30 min
    python benchmarks/generative.py --task chat --limit 20 --set train.args.max_steps=2  # smoke
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.corpora.build_generative import CHAT, QA, SUMMARIZATION  # noqa: E402

CORPORA = {"summarization": SUMMARIZATION, "chat": CHAT, "extractive-qa": QA}
CONSTANT_CANDIDATES = 60  # training summaries tried as the constant sentence
CONSTANT_AGAINST = 200  # training summaries each is scored against


# --- the corpora


def load_corpus(task: str, split: str | None = None, limit: int = 0) -> list[dict[str, Any]]:
    """The records of one task's corpus as `tunegate run` reads them (QA: one record per
    question, its article's `title` beside), of one half or both, at most `limit` of them
    (drawn by a hash of the id, so a smaller limit takes a subset of a larger one)."""
    path = CORPORA[task]
    if task == "extractive-qa":
        records = [
            {"id": qa["id"], "title": article["title"], "split": article["split"], **_qa(qa, p)}
            for article in json.loads(path.read_text())["data"]
            for p in article["paragraphs"]
            for qa in p["qas"]
        ]
    else:
        with path.open() as f:
            records = [json.loads(line) for line in f if line.strip()]
    if split is not None:
        records = [r for r in records if r["split"] == split]
    if limit:
        chosen = sorted(records, key=lambda r: hashlib.sha256(r["id"].encode()).hexdigest())
        kept = {r["id"] for r in chosen[:limit]}
        records = [r for r in records if r["id"] in kept]
    return records


def _qa(qa: dict[str, Any], paragraph: dict[str, Any]) -> dict[str, Any]:
    answers = qa["answers"]
    return {
        "question": qa["question"],
        "context": paragraph["context"],
        "answers": {
            "text": [a["text"] for a in answers],
            "answer_start": [a["answer_start"] for a in answers],
        },
    }


# --- the baselines


def first_two_turns(document: str) -> str:
    """The summary that copies a dialogue's first two turns (its first two non-empty lines)."""
    return "\n".join([line for line in document.splitlines() if line.strip()][:2])


def echo_reply(messages: Sequence[dict[str, str]]) -> str:
    """The reply that repeats the user's last message before the reference reply."""
    for message in reversed(messages[:-1]):
        if message["role"] == "user":
            return message["content"]
    return ""


def constant_summary(summaries: Sequence[str]) -> str:
    """The one sentence a template-writing model would do best to write: of (a sample of) the
    training summaries, the one with the highest mean ROUGE-L against the others."""
    from trainer.metrics.scores import rouge_scores

    ordered = sorted(summaries, key=lambda s: hashlib.sha256(s.encode()).hexdigest())
    candidates, others = ordered[:CONSTANT_CANDIDATES], ordered[:CONSTANT_AGAINST]
    return max(
        candidates,
        key=lambda c: rouge_scores([c] * len(others), list(others), use_stemmer=False)["rougeL"],
    )


def rouge_l(predictions: Sequence[str], references: Sequence[str]) -> float:
    from trainer.metrics.scores import rouge_scores

    return rouge_scores(list(predictions), list(references))["rougeL"]


def reference_of(task: str, record: dict[str, Any]) -> str:
    return record["summary"] if task == "summarization" else record["messages"][-1]["content"]


def baselines(
    task: str, test: Sequence[dict[str, Any]], train: Sequence[dict[str, Any]]
) -> dict[str, float]:
    """ROUGE-L of each baseline on the held-out records."""
    references = [reference_of(task, r) for r in test]
    if task == "summarization":
        constant = constant_summary([r["summary"] for r in train])
        return {
            "first two turns": rouge_l([first_two_turns(r["document"]) for r in test], references),
            "constant sentence": rouge_l([constant] * len(test), references),
        }
    if task == "chat":
        return {
            "echo the user's last message": rouge_l(
                [echo_reply(r["messages"]) for r in test], references
            )
        }
    return {}


# --- one run


def run_task(
    task: str, split: str, limit: int, sets: Sequence[str], store: Path, other_limit: int = 0
) -> dict[str, Any]:
    """Run the default config on the task's half; return what it measured there and, when it ran
    on one half, on the other half (`other_limit` records at most, 0: all)."""
    records = load_corpus(task, None if split == "all" else split, limit)
    store.mkdir(parents=True, exist_ok=True)
    source = written(records, store / f"{task}-{split}.jsonl")
    print(f"[{task}] {len(records)} records of the {split} half")
    start = time.perf_counter()
    summary = tunegate_run(task, source, store, "register", sets)
    wall = time.perf_counter() - start
    result = measured(task, summary, records, wall)
    if split != "all" and "metric" in result:
        other = load_corpus(task, "test" if split == "dev" else "dev", other_limit)
        result["other_half"] = measured_on(task, summary, screened(task, other, sets, store))
    return result


def written(records: Sequence[dict[str, Any]], path: Path) -> Path:
    """The records as JSON lines at `path` (without the corpus's `split` field)."""
    with path.open("w") as f:
        for r in records:
            f.write(json.dumps({k: v for k, v in r.items() if k != "split"}) + "\n")
    return path


def tunegate_run(
    task: str, source: Path, store: Path, until: str, sets: Sequence[str]
) -> dict[str, Any]:
    """`tunegate run` of the default config on `source` in the store folder `store`, up to
    `until`; its summary."""
    summary_path = store / f"run-{until}.json"
    command = [
        sys.executable, "-m", "cli", "run",
        "--config", "configs/local.yaml",
        "--approval", "auto",
        "--input", str(source),
        "--summary", str(summary_path),
        "--set", f"task={task}",
        "--set", f"registry.model_name=bench-{task}",
        "--set", f"store={store / 'store'}",
        "--set", f"until={until}",
        *[arg for s in sets for arg in ("--set", s)],
    ]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    print(f"[{task}] {' '.join(command[2:])}")
    done = subprocess.run(command, cwd=ROOT, env=env, check=False)
    if not summary_path.exists():
        raise SystemExit(f"[{task}] the run wrote no summary (exit {done.returncode})")
    return json.loads(summary_path.read_text())


def screened(
    task: str, records: Sequence[dict[str, Any]], sets: Sequence[str], store: Path
) -> list[dict[str, Any]]:
    """The other half as the endpoint's users would see it after the same screen the training
    data passed (names redacted, toxic records dropped): `tunegate run` up to the split, in a
    store of its own, all three split tables together."""
    from trainer.data import read_split

    folder = store / "other-half"
    folder.mkdir(parents=True, exist_ok=True)
    source = written(records, folder / f"{task}-other.jsonl")
    summary = tunegate_run(task, source, folder, "split", sets)
    uri = summary["stages"]["split"]["details"]["uri"]
    return [r for name in ("train", "validation", "test") for r in read_split(uri, name)]


def measured(
    task: str, summary: dict[str, Any], records: Sequence[dict[str, Any]], wall: float
) -> dict[str, Any]:
    """The run's evaluation beside the baselines on its test split."""
    from trainer.data import read_split

    evaluation = summary.get("evaluation")
    result: dict[str, Any] = {
        "task": task,
        "records": len(records),
        "status": summary["status"],
        "message": summary.get("message", ""),
        "wall_seconds": round(wall, 1),
        "stage_seconds": {k: round(v["seconds"], 1) for k, v in summary["stages"].items()},
    }
    if evaluation is None:
        return result
    metric = evaluation["primary_metric"]
    split_uri = summary["stages"]["split"]["details"]["uri"]
    test = read_split(split_uri, "test")
    result.update(
        metric=metric,
        test_records=len(test),
        base=evaluation["base"][metric],
        candidate=evaluation["candidate"][metric],
        gate=evaluation["gate"],
    )
    if task == "extractive-qa":
        result["ratio"] = result["candidate"] / max(result["base"], 1e-9)
        return result
    train = read_split(split_uri, "train")
    result["baselines"] = baselines(task, test, train)
    predictions = candidate_predictions(
        task, summary["stages"]["train"]["details"]["output_dir"], test
    )
    result["distinct_outputs"] = len({" ".join(p.split()) for p in predictions})
    result["candidate_rougeL_recomputed"] = rouge_l(
        predictions, [reference_of(task, r) for r in test]
    )
    return result


def measured_on(
    task: str, summary: dict[str, Any], records: Sequence[dict[str, Any]]
) -> dict[str, Any]:
    """The registered candidate and the base model on records the run never saw (the corpus's
    other half: other dialogues, other articles), predicted and scored as the evaluate stage does
    (`trainer.evaluate.predict_models`, `score_models`), beside the baselines there."""
    from trainer.data import read_split
    from trainer.evaluate import predict_models, score_models

    predictions = predict_models(records, summary["stages"]["train"]["details"]["output_dir"])
    scores = score_models(task, predictions, records)["models"]
    metric = summary["evaluation"]["primary_metric"]
    result: dict[str, Any] = {
        "records": len(records),
        "base": scores["base"]["metrics"][metric],
        "candidate": scores["candidate"]["metrics"][metric],
    }
    if task == "extractive-qa":
        result["ratio"] = result["candidate"] / max(result["base"], 1e-9)
        return result
    train = read_split(summary["stages"]["split"]["details"]["uri"], "train")
    result["baselines"] = baselines(task, records, train)
    result["distinct_outputs"] = len({" ".join(p.split()) for p in predictions["candidate"]})
    result["examples"] = predictions["candidate"][:5]
    return result


def candidate_predictions(task: str, output_dir: str, test: Sequence[dict[str, Any]]) -> list[str]:
    """The trained model's outputs for the test records, as the evaluate stage predicts them
    (torch, on this machine): what the number of distinct summaries or replies counts."""
    from trainer.modeling import find_model_dir, load_trained
    from trainer.predict import predict

    model, tokenizer, _ = load_trained(find_model_dir(Path(output_dir)))
    return predict(model, tokenizer, task, test)


def report(result: dict[str, Any]) -> None:
    task = result["task"]
    print(
        f"\n== {task}: {result['records']} records, run {result['status']} in {result['wall_seconds']:.0f} s"
    )
    print(f"   stages (s): {result['stage_seconds']}")
    if "metric" not in result:
        print(f"   no evaluation: {result['message']}")
        return
    metric, n = result["metric"], result["test_records"]
    print(f"   held-out {metric} on {n} test records (the run's test split):")
    print_scores(result, n, "candidate (registered if the gate passes)")
    print(
        f"   gate: {result['gate'].get('verdict', '')} {'; '.join(result['gate'].get('reasons', []))}"
    )
    other = result.get("other_half")
    if other:
        n = other["records"]
        print(f"   held-out {metric} on the corpus's other half ({n} records never seen):")
        print_scores(other, n, "candidate")


def print_scores(scores: dict[str, Any], n: int, candidate: str) -> None:
    """The candidate's, the base model's and the baselines' scores on `n` records, the ratio
    (QA) and the number of distinct outputs (generative tasks)."""
    print(f"     {candidate:<42} {scores['candidate']:6.1f}")
    print(f"     {'base model':<42} {scores['base']:6.1f}")
    for name, value in scores.get("baselines", {}).items():
        print(f"     {name:<42} {value:6.1f}")
    if "ratio" in scores:
        print(f"     {'candidate / base':<42} {scores['ratio']:6.2f}x (target >= 3x)")
    if "distinct_outputs" in scores:
        print(f"     {'distinct candidate outputs':<42} {scores['distinct_outputs']} of {n}")


def main(argv: Sequence[str] | None = None) -> list[dict[str, Any]]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--task", choices=sorted(CORPORA), help="one corpus (default: all three)")
    parser.add_argument(
        "--split",
        choices=("dev", "test", "all"),
        default="dev",
        help="the corpus half to run on (all: both, e.g. 400 dialogues); tune on dev",
    )
    parser.add_argument("--limit", type=int, default=0, help="at most this many records (0: all)")
    parser.add_argument(
        "--set", action="append", default=[], help="a config override passed to tunegate run"
    )
    parser.add_argument(
        "--store", type=Path, help="keep the runs' stores here (default: a temp dir)"
    )
    parser.add_argument(
        "--other-limit",
        type=int,
        default=0,
        help="score at most this many records of the other half (0: all of it)",
    )
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args(argv)
    tasks = [args.task] if args.task else list(CORPORA)
    results = []
    with tempfile.TemporaryDirectory(prefix="tunegate-generative-") as tmp:
        root = args.store or Path(tmp)
        for task in tasks:
            result = run_task(task, args.split, args.limit, args.set, root / task, args.other_limit)
            report(result)
            results.append(result)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")
    return results


if __name__ == "__main__":
    main()
