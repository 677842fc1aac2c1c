"""`tunegate predict`: a registered model scored over files of records, the output read by
`tunegate metrics`; versions and aliases resolved, invalid records counted, never a half file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from cli.main import app
from platforms.lineage import Lineage
from platforms.registry import MlflowRegistry
from tasks.records import TaskType
from tests.conftest import write_jsonl
from tests.trainer.tiny import chat_record, qa_record, tiny_model, write_dataset
from trainer.metrics import score_records
from trainer.modeling import load_tokenizer_and_info, load_trained
from trainer.predict import predict
from trainer.taskspec import task_spec
from trainer.train import main as train

runner = CliRunner()
NAME = "tunegate-extractive-qa"


def _train(tmp: Path, task: TaskType, trainer_task: str, make: Any, kind: str) -> Path:
    """A tiny model (LoRA adapter, as the pipeline registers one) trained for one epoch."""
    data, base = write_dataset(tmp, task, make, n=8), tiny_model(tmp, kind)
    args = ["--task", trainer_task, "--model", str(base), "--data-dir", str(data)]
    args += ["--output-dir", str(tmp / "out"), "--epochs", "1"]
    train(
        [
            *args,
            "--batch-size",
            "8",
            "--max-length",
            "64",
            "--doc-stride",
            "16",
            "--max-target-length",
            "16",
        ]
    )
    return tmp / "out"


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A local registry with one tiny trained QA model as versions 1 (challenger) and
    2 (champion)."""
    tmp = tmp_path_factory.mktemp("predict")
    model = _train(tmp, TaskType.extractive_qa, "extractive-qa", qa_record, "bert")
    registry = _registry(tmp / "store")
    for job in ("a", "b"):
        registry.register(NAME, model, {"f1": 1.0}, Lineage(training_job=job))
    registry.set_alias(NAME, "champion", 2)
    registry.set_alias(NAME, "challenger", 1)
    return tmp / "store"


def _registry(store: Path) -> Any:
    """The store's registry as a run opens it: versions signed with the approval key (the
    CLI checks the signature)."""
    from flows.config import validate_config

    return validate_config({"store": str(store)}).backends().registry


def _predict(store: Path, *args: str) -> Any:
    return runner.invoke(app, ["predict", *args, "--set", f"store={store}"])


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_predict_scores_valid_records_reports_the_rest_and_metrics_reads_it(
    store: Path, tmp_path: Path
) -> None:
    good = [qa_record(i) for i in range(5)]
    good[4]["id"] = 7  # an integer id is a string in the output, as ingest makes it
    no_context = {k: v for k, v in qa_record(5).items() if k != "context"}
    moved = {**qa_record(6), "answers": {"text": ["2 days"], "answer_start": [0]}}
    records = write_jsonl(
        tmp_path / "held-out.jsonl",
        [
            *(json.dumps(r) for r in good[:3]),
            "{not json",
            "",
            json.dumps(no_context),
            json.dumps(moved),
            json.dumps({**qa_record(8), "id": "q0"}),  # an id already read, other content
            json.dumps(good[4]),
        ],
    )
    flat = tmp_path / "more.csv"  # CSV in the flat QA form, as ingest reads it
    r = good[3]
    flat.write_text(
        "id,question,context,answer_text,answer_start\n"
        f'{r["id"]},{r["question"]},"{r["context"]}",{r["answers"]["text"][0]},'
        f"{r['answers']['answer_start'][0]}\n"
    )
    out, errors = tmp_path / "preds.jsonl", tmp_path / "errors.jsonl"
    result = _predict(
        store,
        *("--model", NAME, "-i", str(records), "-i", str(flat), "--out", str(out)),
        *("--errors", str(errors), "--batch-size", "2"),
    )
    assert result.exit_code == 0, result.output
    assert f"{NAME}:2 (extractive-qa, torch): read 9 records from 2 files, scored 5, skipped 4" in (
        result.output
    )
    assert "1 blank line ignored" in result.output
    for reason in ("unparsable JSON", "missing field 'context'", "not at answer_start"):
        assert reason in result.output
    assert "duplicate id 'q0' (first at" in result.output

    rows = _jsonl(out)
    assert [row["id"] for row in rows] == ["q0", "q1", "q2", "7", "q3"]  # files in sorted order
    model, tokenizer, info = load_trained(MlflowRegistry.local(store).get(NAME, 2).path)
    canonical = [*good[:3], {**good[4], "id": "7"}, good[3]]
    expected = predict(model, tokenizer, info["task"], canonical, batch_size=2)
    assert [row["prediction"] for row in rows] == expected
    assert [(e["line"], e["id"]) for e in _jsonl(errors)] == [
        (4, None),
        (6, "q5"),
        (7, "q6"),
        (8, "q0"),
    ]

    references = write_jsonl(tmp_path / "refs.jsonl", [json.dumps(r) for r in canonical])
    metrics = runner.invoke(
        app,
        [
            *("metrics", "--task", "extractive-qa", "--predictions", str(out)),
            *("--references", str(references)),
        ],
    )
    assert metrics.exit_code == 0, metrics.output
    assert json.loads(metrics.stdout) == pytest.approx(
        score_records("extractive-qa", expected, canonical)[0]
    )


def test_a_directory_is_read_as_ingest_reads_it(store: Path, tmp_path: Path) -> None:
    """A `datasets` folder (what `save_to_disk` writes) in it is one input, a Parquet file
    another."""
    from datasets import Dataset

    folder = tmp_path / "held-out"
    Dataset.from_list([qa_record(0), qa_record(1)]).save_to_disk(str(folder / "hf"))
    schema = task_spec("extractive-qa").record_schema
    pq.write_table(pa.Table.from_pylist([qa_record(2)], schema=schema), folder / "more.parquet")
    out = tmp_path / "preds.jsonl"
    result = _predict(store, "--model", NAME, "-i", str(folder), "--out", str(out))
    assert result.exit_code == 0, result.output
    assert "read 3 records from 2 files, scored 3, skipped 0" in result.output
    assert [row["id"] for row in _jsonl(out)] == ["q0", "q1", "q2"]


@pytest.mark.parametrize(
    ("model", "version"),
    [(NAME, 2), (f"{NAME}@champion", 2), (f"{NAME}@challenger", 1), (f"{NAME}:1", 1)],
    ids=["name", "champion", "challenger", "version"],
)
def test_a_version_or_an_alias_picks_the_model(
    store: Path, tmp_path: Path, model: str, version: int
) -> None:
    records = write_jsonl(tmp_path / "in.jsonl", [json.dumps(qa_record(0))])
    result = _predict(store, "--model", model, "-i", str(records), "--out", str(tmp_path / "p"))
    assert result.exit_code == 0, result.output
    assert f"{NAME}:{version} (extractive-qa, torch): read 1 record from 1 file" in result.output


def test_a_version_served_by_onnx_is_scored_as_it_serves_unless_torch_is_asked(
    store: Path, tmp_path: Path
) -> None:
    """A version registered with an int8 runtime (serving.json) is scored by its graphs, as the
    endpoint answers; `--runtime torch` scores its torch weights; an edited graph is refused."""
    from serving import runtimes

    trained = Path(MlflowRegistry.local(store).get(NAME, 2).path)
    exported = runtimes.export(trained, tmp_path / "exported")["onnx-int8"]
    staged = tmp_path / "staged"
    runtimes.stage(trained, exported, runtimes.ServingChoice("onnx-int8", {}, []), staged)
    other = tmp_path / "store"
    _registry(other).register(NAME, staged, {"f1": 1.0}, Lineage(training_job="c"))
    held = [qa_record(i) for i in range(6)]
    records = write_jsonl(tmp_path / "in.jsonl", [json.dumps(r) for r in held])
    registered = Path(MlflowRegistry.local(other).get(NAME, 1).path)
    expected = {
        "onnx-int8": predict(
            runtimes.load(registered / runtimes.FOLDER / "onnx-int8"),
            load_tokenizer_and_info(registered)[0],
            "extractive-qa",
            held,
        ),
        "torch": predict(*load_trained(registered)[:2], "extractive-qa", held),
    }
    for flag, runtime in (([], "onnx-int8"), (["--runtime", "torch"], "torch")):
        out = tmp_path / f"{runtime}.jsonl"
        result = _predict(other, "-m", f"{NAME}:1", "-i", str(records), "--out", str(out), *flag)
        assert result.exit_code == 0, result.output
        assert f"{NAME}:1 (extractive-qa, {runtime}): read 6 records" in result.output
        assert [row["prediction"] for row in _jsonl(out)] == expected[runtime]

    graph = registered / runtimes.FOLDER / "onnx-int8" / runtimes.SPAN_GRAPH
    graph.write_bytes(graph.read_bytes() + b"\0")
    result = _predict(other, "-m", NAME + ":1", "-i", str(records), "--out", str(tmp_path / "x"))
    assert result.exit_code == 1 and "changed after registration" in result.output


@pytest.mark.parametrize(
    ("model", "message"),
    [
        (f"{NAME}:7", f"{NAME} has no version 7: its versions are 1, 2; its aliases "),
        (f"{NAME}@stable", f"{NAME} has no alias @stable: its versions are 1, 2"),
        ("other", f"no model named 'other' is registered (registered: {NAME})"),
        (f"{NAME}:latest", "a version is a number (NAME:3); an alias is NAME@latest"),
    ],
    ids=["version", "alias", "name", "version-not-a-number"],
)
def test_an_unknown_model_exits_2_naming_what_exists(
    store: Path, tmp_path: Path, model: str, message: str
) -> None:
    records = write_jsonl(tmp_path / "in.jsonl", [json.dumps(qa_record(0))])
    out = tmp_path / "p.jsonl"
    result = _predict(store, "--model", model, "-i", str(records), "--out", str(out))
    assert result.exit_code == 2
    assert message in result.output.replace("\n", " ")
    assert not out.exists()
    if ":7" in model:
        assert "@challenger = 1, @champion = 2" in result.output


def test_models_show_resolves_and_names_versions_the_same_way(store: Path) -> None:
    shown = runner.invoke(app, ["models", "show", NAME, "challenger", "--set", f"store={store}"])
    assert shown.exit_code == 0 and json.loads(shown.stdout)["version"] == 1
    missing = runner.invoke(app, ["models", "show", NAME, "7", "--set", f"store={store}"])
    assert missing.exit_code == 2
    assert f"{NAME} has no version 7: its versions are 1, 2" in missing.output


def test_no_valid_record_and_a_missing_input_exit_2_without_output(
    store: Path, tmp_path: Path
) -> None:
    bad = write_jsonl(tmp_path / "bad.jsonl", ['{"id": "x", "document": "not a QA record"}'])
    out = tmp_path / "p.jsonl"
    result = _predict(store, "--model", NAME, "-i", str(bad), "--out", str(out))
    assert result.exit_code == 2
    assert "missing field 'question'" in result.output
    assert "none of the 1 records read is a valid extractive-qa record" in result.output
    assert not out.exists()
    result = _predict(store, "--model", NAME, "-i", str(tmp_path / "nope.jsonl"), "--out", "p")
    assert result.exit_code == 2 and "nothing matches" in result.output


def test_a_failed_run_leaves_the_previous_output_whole(
    store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    records = write_jsonl(tmp_path / "in.jsonl", [json.dumps(qa_record(i)) for i in range(4)])
    out = tmp_path / "preds.jsonl"
    out.write_text('{"id": "old", "prediction": "kept"}\n')
    calls: list[int] = []

    def fails_on_the_second_batch(*args: Any, **kwargs: Any) -> list[str]:
        calls.append(1)
        if len(calls) == 2:
            raise RuntimeError("out of memory")
        return predict(*args, **kwargs)

    monkeypatch.setattr("trainer.predict.predict", fails_on_the_second_batch)
    result = _predict(
        store, "--model", NAME, "-i", str(records), "--out", str(out), "--batch-size", "2"
    )
    assert result.exit_code != 0 and isinstance(result.exception, RuntimeError)
    assert out.read_text() == '{"id": "old", "prediction": "kept"}\n'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.jsonl", "preds.jsonl"]


def test_a_generative_model_is_scored_with_rouge_as_the_gate_scores_it(tmp_path: Path) -> None:
    model = _train(tmp_path, TaskType.chat, "causal-lm", chat_record, "gpt2")
    registry = _registry(tmp_path / "store")
    registry.register("replies", model, {}, Lineage())
    registry.set_alias("replies", "champion", 1)
    canonical = [chat_record(i) for i in range(2)]
    records = write_jsonl(tmp_path / "in.jsonl", [json.dumps(r) for r in canonical])
    out = tmp_path / "preds.jsonl"
    result = _predict(tmp_path / "store", "-m", "replies", "-i", str(records), "--out", str(out))
    assert result.exit_code == 0, result.output
    assert (
        "replies:1 (chat, torch): read 2 records from 1 file, scored 2, skipped 0" in result.output
    )
    predictions = [row["prediction"] for row in _jsonl(out)]
    metrics = runner.invoke(
        app,
        [
            *("metrics", "--task", "chat", "--predictions", str(out)),
            *("--references", str(records)),
        ],
    )
    assert metrics.exit_code == 0, metrics.output
    assert json.loads(metrics.stdout) == pytest.approx(
        score_records("chat", predictions, canonical)[0]
    )
