"""The model card of a registered version: what a person reads before using it.

One Markdown file in the Hugging Face model card layout (YAML front matter, then sections), built
from the typed records the flow holds: the `Lineage` (dataset hashes, the signed approval, the
`EvalReport` with the gate's decision), the screen's `ScreenReport` and the split's counts. The
registry writes it as the version's model folder's `README.md` (replacing the template PEFT's
`save_pretrained` leaves there, which names the base model by an absolute path), so it travels
with the version: the local MLflow registry's `artifacts/model/README.md`, the Azure ML asset's
files. `tunegate models show NAME VERSION --card` prints it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from platforms.evaluation import EvalReport
from platforms.lineage import Lineage
from platforms.model_version import NEEDS_RETRAIN
from platforms.version_files import CARD_FILE
from screening.profiles import DEFAULT_PROFILE
from screening.report import ScreenReport, profiles_markdown
from trainer.taskspec import task_spec

_PIPELINE_TAGS = {
    "extractive-qa": "question-answering",
    "summarization": "summarization",
    "chat": "text-generation",
    "text-generation": "text-generation",
}
_INTENDED_USE = {
    "extractive-qa": "Answers a question with a span copied from the context it is given "
    '(`{"question": ..., "context": ...}`): support tickets and documents like the ones it '
    "was trained on. It never answers beyond the context.",
    "summarization": 'Writes a short summary of a document (`{"document": ...}`) like the '
    "ones it was trained on.",
    "chat": 'Writes the next assistant reply of a conversation (`{"messages": [...]}`) in the '
    "style of the conversations it was trained on.",
    "text-generation": 'Continues a text (`{"prompt": ...}`) in the style of the texts it was trained on.',
}


def base_model_name(reference: str) -> str:
    """The base model by name, never by a path on some machine: a Hugging Face id or an Azure
    ML asset reference as given, a packaged model's name (`packaged:all-MiniLM-L6-v2` →
    `all-MiniLM-L6-v2`), a local folder's name."""
    if reference.startswith("packaged:"):
        return reference.removeprefix("packaged:")
    if reference.startswith("azureml:"):
        return reference
    path = Path(reference)
    if path.is_absolute() or reference.startswith((".", "~")) or path.exists():
        return path.name or reference
    return reference


def model_card(
    name: str,
    task: str,
    base_model: str,
    lineage: Lineage,
    *,
    adapter: bool = False,
    screen: ScreenReport | None = None,
    split_counts: dict[str, int] | None = None,
) -> str:
    """The card of a version of `name` (see the module docstring). `screen` and `split_counts`
    are what the run knew beyond the lineage; a card rebuilt from a version record alone (one
    registered before cards) says they were not recorded."""
    report = lineage.evaluation
    task = _task_name(task)
    base = base_model_name(base_model)
    front = {
        "base_model": base,
        "library_name": "peft" if adapter else "transformers",
        "pipeline_tag": _PIPELINE_TAGS.get(task),
        "tags": ["tunegate", task, *(["lora"] if adapter else [])],
        "datasets": [f"{stage}:{digest}" for stage, digest in lineage.datasets.items()],
    }
    front = {k: v for k, v in front.items() if v}
    how = "a LoRA adapter on" if adapter else "fine-tuned from"
    lines = [
        "---",
        yaml.safe_dump(front, sort_keys=False).rstrip(),
        "---",
        "",
        f"# {name}",
        "",
        f"A model for the {task} task, {how} `{base}`, trained and registered by tunegate.",
        "",
        "## Base model",
        "",
        f"`{base}`" + (f" (given as `{base_model}`)" if base != base_model else ""),
        "",
        *_data(lineage, split_counts),
        *_rights(lineage),
        *_screening(screen),
        *_approval(lineage),
        *_evaluation(report),
        "## Intended use",
        "",
        _INTENDED_USE.get(task, f"The {task} task it was trained on."),
        "",
        *_limits(report, screen),
        *_provenance(lineage),
    ]
    return "\n".join(lines).rstrip() + "\n"


def _task_name(task: str) -> str:
    """The task's name (`chat`) for either of its names (`causal-lm`, what the trainer writes)."""
    try:
        return task_spec(task).name
    except ValueError:  # a task this release does not know: named as recorded
        return task


def with_notices(card: str, tags: dict[str, str]) -> str:
    """The card with what the registry learnt after registration, first under its title: a
    version marked `needs-retrain` (data it was trained on was erased). The registered card
    file itself is part of the version's signed files and stays as it was."""
    why = tags.get(NEEDS_RETRAIN)
    if not why:
        return card
    notice = (
        f"> **Needs retraining** (registry tag `{NEEDS_RETRAIN}`): {why}. Serve it no longer "
        "than the retrain takes; `tunegate erase --retrain` starts one without the records.\n"
    )
    head, title, rest = card.partition("\n# ")
    if not title:
        return notice + "\n" + card
    name, _, body = rest.partition("\n")
    return f"{head}\n# {name}\n\n{notice}{body}"


def card_of_folder(model_dir: Path) -> str | None:
    """The card in a model folder; None when there is none, or only PEFT's template (a version
    registered before cards)."""
    path = Path(model_dir) / CARD_FILE
    if not path.is_file():
        return None
    text = path.read_text()
    return None if "# Model Card for Model ID" in text else text


def _data(lineage: Lineage, split_counts: dict[str, int] | None) -> list[str]:
    lines = ["## Data", ""]
    if lineage.datasets:
        lines += ["| stage | dataset (content hash) |", "|---|---|"]
        lines += [f"| {stage} | `{digest}` |" for stage, digest in lineage.datasets.items()]
        lines.append("")
    if split_counts:
        lines += [
            "Records per split: "
            + ", ".join(f"{split} {n}" for split, n in split_counts.items() if split != "excluded")
            + (
                f"; {split_counts['excluded']} excluded by the reviewer."
                if split_counts.get("excluded")
                else "."
            ),
            "",
        ]
    elif not lineage.datasets:
        lines += ["Not recorded.", ""]
    return lines


def _rights(lineage: Lineage) -> list[str]:
    """The inputs' datasheets: what the model was trained on, under which licence."""
    lines = ["## Data rights", ""]
    if not lineage.inputs:
        return [*lines, "Not recorded (no datasheets were known when it was registered).", ""]
    licences = sorted({i.licence or "none" for i in lineage.inputs})
    lines += [
        f"Licences of the training data: {', '.join(licences)}.",
        "",
        "| input | licence | source | owner | basis |",
        "|---|---|---|---|---|",
    ]
    for item in lineage.inputs:
        sheet = item.datasheet
        cells = [sheet.licence or "**none**", sheet.source, sheet.owner, sheet.basis]
        lines.append(
            f"| `{item.input.rsplit('/', 1)[-1]}` | " + " | ".join(c or "-" for c in cells) + " |"
        )
    return [*lines, ""]


def _screening(screen: ScreenReport | None) -> list[str]:
    lines = ["## Screening", ""]
    if screen is None:
        return [*lines, "Not recorded with this version.", ""]
    lines += [
        *profiles_markdown(screen),
        "",
        f"{screen.records_in} records in, {screen.kept} kept: {screen.redacted} redacted, "
        f"{screen.quarantined} dropped (quarantined), {screen.flagged} flagged for the reviewer.",
        "",
    ]
    if screen.entities:
        lines += ["| found | rule | count |", "|---|---|---:|"]
        lines += [f"| {c.entity} | {c.action} | {c.findings} |" for c in screen.entities]
        lines.append("")
    if screen.quarantine_reasons:
        reasons = sorted(screen.quarantine_reasons.items(), key=lambda kv: -kv[1])[:10]
        lines += ["Why records were dropped:", ""]
        lines += [f"- {reason}: {n}" for reason, n in reasons]
        lines.append("")
    return lines


def _approval(lineage: Lineage) -> list[str]:
    lines = ["## Approval", ""]
    record = lineage.approval
    if record is None:
        return [*lines, "Not recorded.", ""]
    who = "the policy" if not record.by_person else record.reviewer
    lines += [
        f"- decision: {record.decision} by {who} (mode `{record.mode.value}`)",
        f"- when: {record.decided_at}",
        f"- record hash: `{lineage.approval_hash or record.record_hash}`",
        f"- dataset approved: `{record.dataset_hash}`",
        f"- screened with the `{record.screen_profile or DEFAULT_PROFILE}` profile"
        + "".join(f"; `{p}` for `{uri}`" for uri, p in sorted(record.input_profiles.items())),
    ]
    if record.exclude_ids:
        lines.append(f"- records excluded by the reviewer: {len(record.exclude_ids)}")
    if record.comment:
        lines.append(f"- comment: {record.comment}")
    return [*lines, ""]


def _evaluation(report: EvalReport | None) -> list[str]:
    lines = ["## Evaluation", ""]
    if report is None:
        return [*lines, "Not recorded.", ""]
    metrics = sorted(report.candidate)
    rows = [("base model", report.base), ("this version", report.candidate)]
    if report.champion is not None:
        rows.append((f"champion then (v{report.champion_version})", report.champion))
    lines += [
        f"On {report.test_records} held-out test records; gate **{report.gate.word}**.",
        "",
        "| model | " + " | ".join(metrics) + " |",
        "|---|" + "---:|" * len(metrics),
        *[
            f"| {who} | " + " | ".join(f"{m.get(k, float('nan')):.2f}" for k in metrics) + " |"
            for who, m in rows
        ],
        "",
    ]
    if report.gate.checks:
        lines += ["| gate check | value | required | passed |", "|---|---:|---:|---|"]
        lines += [
            f"| {c.name} | {c.value:.2f} | {c.required:.2f} | {'yes' if c.passed else 'NO'} |"
            for c in report.gate.checks
        ]
        lines.append("")
    if report.serving is not None:
        lines += [f"Serves with **{report.serving.runtime}**.", ""]
    return lines


def _limits(report: EvalReport | None, screen: ScreenReport | None) -> list[str]:
    lines = ["## Limits", ""]
    if report is not None:
        measured = (
            f"- Measured on {report.test_records} test records split from the same data as its "
            f"training records ({report.primary_metric}"
        )
        if report.interval is not None:
            low, high = report.interval
            measured += f"; change against the champion {low:+.2f} to {high:+.2f} at the gate's "
            measured += "confidence"
        lines.append(measured + "): other data can score lower.")
        if report.test_records < 100:
            lines.append(
                f"- {report.test_records} test records judge coarsely: one record can move "
                f"{report.primary_metric} by up to {100 / max(report.test_records, 1):.1f} points."
            )
        pii = report.output_pii
        lines.append(
            f"- Personal data found in its test outputs: {report.pii_leaks}"
            + (
                f" ({pii.memorised} repeating its training data, {pii.invented} invented)."
                if pii is not None and report.pii_leaks
                else " (it can repeat values it saw)."
                if report.pii_leaks
                else "."
            )
        )
    lines.append(
        "- The screen does not catch every personal value (names and street addresses least; "
        "docs/benchmarks.md): some may remain in its training data and outputs."
    )
    if screen is not None and screen.flagged:
        lines.append(
            f"- {screen.flagged} records the screen flagged for a person were kept unless the "
            "approval excluded them (flagged is not removed)."
        )
    return [*lines, ""]


def _provenance(lineage: Lineage) -> list[str]:
    fields: dict[str, Any] = {
        "why it was trained": lineage.reason,
        "flow run": lineage.flow_run_id,
        "MLflow run": lineage.tracking_run_id,
        "training job": lineage.training_job,
        "trained on": lineage.training_backend,
        "code version": lineage.code_version,
        "config hash": lineage.config_hash,
    }
    shown = [f"- {k}: `{v}`" for k, v in fields.items() if v]
    return ["## Provenance", "", *shown, ""] if shown else []
