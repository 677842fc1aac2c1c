"""The drift report a person reads: the decision, every signal against its threshold, and the
measured distributions drawn window against reference (inline PNG, no script)."""

from __future__ import annotations

import html

from tasks.drift_signals import KINDS, DriftResult, SignalResult


def drift_report_html(result: DriftResult, sections: str = "") -> str:
    """A page a person reads: the decision, every signal against its threshold (drifted ones
    first, in red), then Evidently's plots of the measured distributions."""
    rows = []
    for s in sorted(result.signals, key=lambda s: (not s.drift, list(KINDS).index(s.name))):
        value = "-" if s.value is None else f"{s.value:g}"
        rate = (
            f"{s.current:.1%} vs {s.reference:.1%}"
            if s.current is not None and s.reference is not None
            else ""
        )
        rows.append(
            f'<tr class="{"drift" if s.drift else "ok"}"><td>{html.escape(s.name)}</td>'
            f"<td>{s.kind}</td><td>{value}</td><td>{s.threshold:g}</td>"
            f"<td>{'DRIFT' if s.drift else 'ok'}</td><td>{html.escape(rate)}</td>"
            f"<td>{html.escape(s.note or '')}</td></tr>"
        )
    verdict = "DRIFT" if result.drift else ("no drift" if result.judged else "not judged")
    window = f"{result.since or 'the start'} → {result.until}"
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<title>tunegate monitor: {html.escape(result.model)} v{result.version}</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 24px; max-width: 1200px; }}
table {{ border-collapse: collapse; width: 100%; }}
td, th {{ border: 1px solid #ccc; padding: 4px 8px; text-align: left; font-size: 14px; }}
tr.drift td {{ background: #fde2e1; }}
img {{ max-width: 100%; height: auto; }}
.verdict {{ font-size: 22px; font-weight: 600; }}
</style></head><body>
<h1>{html.escape(result.model)} version {result.version}</h1>
<p class="verdict">{verdict}</p>
<p>{html.escape(result.reason)}</p>
<p>Window {html.escape(window)}: {result.requests} requests, against
{result.reference_records} reference records (the version's screened test split).</p>
<table><thead><tr><th>signal</th><th>kind</th><th>value</th><th>threshold</th><th>result</th>
<th>window vs reference</th><th>how</th></tr></thead><tbody>
{"".join(rows)}
</tbody></table>
<h2>Distributions</h2>
{sections or "<p>No distribution was measured.</p>"}
</body></html>
"""


def distribution_plots(
    numeric: dict[str, tuple[list[float], list[float]]], rates: list[SignalResult]
) -> str:
    """Inline PNG figures: each measured distribution, window against reference, and the rates
    side by side; HTML `<img>` tags (no script, so the page reads anywhere)."""
    import base64
    import io

    import matplotlib
    import numpy as np

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    shown = {name: pair for name, pair in numeric.items() if pair[0] and pair[1]}
    fig, axes = plt.subplots(1, len(shown) + 1, figsize=(4.2 * (len(shown) + 1), 3.2))
    for ax, (name, (now, before)) in zip(axes, shown.items(), strict=False):
        bins = np.histogram_bin_edges([*before, *now], bins=30)  # one set for both sides
        ax.hist(before, bins=bins, density=True, alpha=0.55, label="reference", color="#4c72b0")
        ax.hist(now, bins=bins, density=True, alpha=0.55, label="window", color="#dd8452")
        ax.set_title(name)
        ax.legend(fontsize=8)
    ax = axes[-1]
    names = [r.name for r in rates]
    ax.barh(
        names, [r.reference or 0 for r in rates], height=0.4, label="reference", color="#4c72b0"
    )
    ax.barh(
        [i + 0.4 for i in range(len(names))],
        [r.current or 0 for r in rates],
        height=0.4,
        label="window",
        color="#dd8452",
    )
    ax.set_title("rates")
    ax.legend(fontsize=8)
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=90)
    plt.close(fig)
    data = base64.b64encode(buffer.getvalue()).decode()
    return f'<img alt="distributions, window against reference" src="data:image/png;base64,{data}">'
