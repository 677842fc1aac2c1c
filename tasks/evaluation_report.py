"""How a person reads the evaluation report (`platforms.evaluation.EvalReport`: every number the
gate compared and its decision): the Prefect artifact's Markdown, with each value found in the
candidate's predictions in context (masked) and where it came from.
"""

from __future__ import annotations

from typing import Any

from platforms.evaluation import EvalReport, OutputPii


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
        lines += [
            "",
            "| reference | base model | candidate |",
            "|---|---|---|",
            *[
                "| " + " | ".join(_cell(e[k]) for k in ("reference", "base", "candidate")) + " |"
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
            f"| {_cell(f.record_id, 40)} | {f.entity} | {ORIGIN_WORDS[f.origin]} "
            f"| {_cell(f.context)} |"
            for f in pii.findings
        ],
    ]


def shown_reference(reference: Any) -> str:
    """A reference as text: QA's accepted answers joined, a summary or reply as it is."""
    return " / ".join(reference) if isinstance(reference, list) else str(reference)


def _cell(text: str, limit: int = 160) -> str:
    """`text` in one Markdown table cell: one line, pipes escaped, long text cut."""
    one_line = " ".join(text.split()).replace("|", "\\|")
    return one_line if len(one_line) <= limit else one_line[: limit - 1] + "…"


def _sparkline(values: list[float]) -> str:
    bars = "▁▂▃▄▅▆▇█"
    low, high = min(values), max(values)
    span = (high - low) or 1.0
    return "".join(bars[int((v - low) / span * (len(bars) - 1))] for v in values)
