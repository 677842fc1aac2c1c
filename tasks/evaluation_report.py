"""How a person reads the evaluation report (`platforms.evaluation.EvalReport`: every number the
gate compared and its decision): the Prefect artifact's Markdown, its examples as a table of
question, reference, base, candidate and champion whose cells are a few short lines (so the
table fits a 1280 px screen), each value found in the candidate's predictions in context
(masked) and where it came from, and the loss curve as a picture (`loss_curve_markdown`).
"""

from __future__ import annotations

import base64
import tempfile
import textwrap
from pathlib import Path
from typing import Any

from platforms.evaluation import EvalReport, OutputPii
from platforms.tracking import loss_curve_png


def report_markdown(report: EvalReport) -> str:
    metrics = sorted(report.candidate)
    rows = [("base", report.base), ("candidate", report.candidate)]
    if report.champion is not None:
        rows.append((f"champion (v{report.champion_version})", report.champion))
    lines = [
        f"### Evaluation on {report.test_records} test records: gate {report.gate.word}",
        "",
        "| model | " + " | ".join(metrics) + " |",
        "|---|" + "---:|" * len(metrics),
        *[f"| {name} | " + " | ".join(f"{m[k]:.2f}" for k in metrics) + " |" for name, m in rows],
        "",
        "| check | value | required | passed |",
        "|---|---:|---:|---|",
        *[
            f"| {c.name} | {c.value:.2f} | {c.required:.2f} | {'yes' if c.passed else 'NO'} |"
            for c in report.gate.checks
        ],
    ]
    if report.gate.verdict == "cannot-judge":
        lines += ["", *[f"**{r}**" for r in report.gate.reasons if "cannot judge" in r]]
    if report.output_pii and report.output_pii.findings:
        lines += ["", *_pii_lines(report.output_pii)]
    if report.serving:
        serving = report.serving
        lines += [
            "",
            f"Serving runtime: **{serving.runtime}**",
            "",
            f"| runtime | {serving.primary_metric} | loss against torch |",
            "|---|---:|---:|",
            *[
                f"| {name} | {value:.2f} | {serving.scores['torch'] - value:.2f} |"
                for name, value in serving.scores.items()
            ],
            "",
            *[f"- {reason}" for reason in serving.reasons],
        ]
    if report.examples:
        columns = [c for c in EXAMPLE_COLUMNS if any(c in e for e in report.examples)]
        lines += [
            "",
            "| " + " | ".join(columns) + " |",
            "|" + "---|" * len(columns),
            *[
                "| " + " | ".join(_cell(e.get(k, "")) for k in columns) + " |"
                for e in report.examples
            ],
        ]
    if report.loss_curve:
        lines += [
            "",
            f"Training loss: {_sparkline([p['loss'] for p in report.loss_curve])} "
            f"({report.loss_curve[0]['loss']:.3f} → {report.loss_curve[-1]['loss']:.3f})",
        ]
    return "\n".join(lines)


def loss_curve_markdown(loss_curve: list[dict[str, Any]]) -> str | None:
    """The training loss by step as a picture in Markdown (a PNG drawn by matplotlib, inline as
    a data URI: the Prefect artifact needs no file server); None without a loss, or without
    matplotlib (the evaluation report keeps its one-line sparkline)."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return None
    with tempfile.TemporaryDirectory() as scratch:
        plot = loss_curve_png(loss_curve, Path(scratch) / "loss-curve.png")
        if plot is None:
            return None
        data = base64.b64encode(plot.read_bytes()).decode()
    first, last = loss_curve[0]["loss"], loss_curve[-1]["loss"]
    return (
        f"### Training loss: {first:.3f} → {last:.3f} over {loss_curve[-1]['step']} steps\n\n"
        f"![Training loss by step](data:image/png;base64,{data})"
    )


ORIGIN_WORDS = {
    "training": "**leak from training** (fails the gate)",
    "surrogate": "a surrogate the screen planted in training (not a leak)",
    "invented": "invented (counted in the rate)",
}


def _pii_lines(pii: OutputPii) -> list[str]:
    """Each value found in a prediction that its input did not hold: the record, its kind, its
    origin and the prediction around it, masked as the screen shows reviewers."""
    return [
        f"Personal data in the candidate's {pii.predictions} predictions that their input did "
        f"not hold: {pii.memorised} repeat the training split, {pii.invented} invent "
        f"({pii.invented_rate:.1%})",
        "",
        "| record | found | origin | prediction (masked) |",
        "|---|---|---|---|",
        *[
            f"| {_cell(f.record_id)} | {f.entity} | {ORIGIN_WORDS[f.origin]} | {_cell(f.context)} |"
            for f in pii.findings
        ],
    ]


def shown_reference(reference: Any) -> str:
    """A reference as text: QA's accepted answers joined, a summary or reply as it is."""
    return " / ".join(reference) if isinstance(reference, list) else str(reference)


EXAMPLE_COLUMNS = ("question", "reference", "base", "candidate", "champion")
# Prefect's table cells do not wrap (and cut at their edge): a cell's text is broken into lines
# of at most _LINE characters by <br>, at most _LINES of them, so five columns fit 1280 px.
_LINE, _LINES = 15, 5


def shown_question(request: dict[str, Any]) -> str:
    """What a request asks, in a few words: the question, the last message, the document or
    prompt."""
    if "question" in request:
        return str(request["question"])
    if request.get("messages"):
        return str(request["messages"][-1]["content"])
    return str(request.get("document") or request.get("prompt") or "")


def _cell(text: str) -> str:
    """`text` in one Markdown table cell: lines of at most `_LINE` characters joined by <br>, at
    most `_LINES` of them (the last ending in … when text was left out), tags and pipes
    escaped."""
    lines = textwrap.wrap(" ".join(str(text).split()), _LINE, break_on_hyphens=False)
    if len(lines) > _LINES:
        lines = [*lines[: _LINES - 1], lines[_LINES - 1][: _LINE - 1] + "…"]
    return "<br>".join(_escaped(line) for line in lines)


def _escaped(text: str) -> str:
    escaped = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return escaped.replace("|", "\\|")


def _sparkline(values: list[float]) -> str:
    bars = "▁▂▃▄▅▆▇█"
    low, high = min(values), max(values)
    span = (high - low) or 1.0
    return "".join(bars[int((v - low) / span * (len(bars) - 1))] for v in values)
