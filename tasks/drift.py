"""Drift of a served model's traffic against its own data: the signals, their thresholds and the
decision, measured with Evidently (a maintained drift library: its column drift tests, text
domain classifier and embedding drift), plus the rates a person reads directly.

A window of collected traffic (masked requests and answers, `serving/collect.py`) is compared
with a reference built from the champion's own data, found through its lineage: its screened
test split's requests (what its users were expected to send) and their reference answers, and
its training split's vocabulary. Three kinds of signal, each with a threshold in config
(`monitor.signals`):

- input: request length (words), vocabulary (Evidently's text domain classifier), the share of
  words the model never saw in training, sentence embeddings of the requests (the packaged
  MiniLM encoder; Evidently's embedding domain classifier);
- output: answer length, empty answers, the answer's score (against the same version's earlier
  traffic, Azure ML's default reference for prediction drift);
- data quality: requests carrying personal data or credentials (the collector masks them with the
  screen's own recognizers, so a placeholder such as `<EMAIL_ADDRESS>` in a collected request is a
  finding), requests that are not English, malformed requests (4xx) and failed answers (5xx).

A classifier's ROC AUC, a distance and a rate's rise must also beat what chance gives at the
window's size (tasks/chance.py), so a small window's sampling noise is not drift.

`measure_drift` measures every signal. The signals' settings and the typed `DriftResult`:
tasks/drift_signals.py; what they read of each request: tasks/drift_features.py; the page a
person reads: tasks/drift_report.py.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from tasks.chance import ChanceConfig
from tasks.distance_chance import distance_chance, rise_chance
from tasks.domain_auc import (
    DomainAuc,
    domain_auc,
    fit_score_embeddings,
    fit_score_texts,
)
from tasks.drift_features import Sample, request_group
from tasks.drift_report import distribution_plots
from tasks.drift_signals import KINDS, P_VALUE_METHODS, DriftSignals, SignalResult, SignalThreshold
from tasks.embedding import embed

os.environ.setdefault("DO_NOT_TRACK", "1")  # Evidently's usage telemetry: offline, never sent


def measure_drift(
    reference: Sample,
    current: Sample,
    signals: DriftSignals,
    baseline_scores: Sequence[float] = (),
    plots: bool = True,
    chance: ChanceConfig | None = None,
) -> tuple[list[SignalResult], str]:
    """Every enabled signal of `current` against `reference`; `baseline_scores`: the same
    version's earlier answer scores. Text and embedding signals read each side's sampled texts.
    The classifier signals and the distances drift only above what `chance` gives them at the
    window's size (tasks/domain_auc.py, tasks/distance_chance.py). Returns the signals and,
    with `plots`, the figures of the measured distributions (HTML, for `drift_report_html`)."""
    import numpy as np
    import pandas as pd

    chance = chance or ChanceConfig()
    results: list[SignalResult] = []
    rates = {
        "out_of_vocabulary": (current.oov, reference.oov),
        "empty_answers": (current.empty, reference.empty),
        "personal_data": (current.personal, reference.personal),
        "not_english": (current.foreign, reference.foreign),
        "malformed_requests": ([400 <= s < 500 for s in current.statuses], []),
        "failed_answers": ([s >= 500 for s in current.statuses], []),
    }
    for name, (now, before) in rates.items():
        setting: SignalThreshold = getattr(signals, name)
        if not setting.enabled:
            continue
        ours, theirs = (
            float(np.mean(now)) if now else 0.0,
            float(np.mean(before)) if before else 0.0,
        )
        rise = ours - theirs
        # A rise over a rate the reference shows is bounded by chance. What the reference never
        # shows (personal data in a model trained on none, another language) is a finding at
        # any count, and so is a rate of failures (no reference).
        bound = rise_chance(now, before, chance) if now and any(before) else None
        note = "the window's rate minus the reference's"
        if bound is not None:
            note += (
                f"; chance gives up to {bound:+.3f} (the {chance.quantile:g} quantile, shuffled)"
            )
        results.append(
            SignalResult(
                name=name,
                kind=KINDS[name],
                method="rate",
                value=round(rise, 4),
                threshold=setting.threshold,
                drift=rise >= setting.threshold and (bound is None or rise > bound),
                chance=None if bound is None else round(bound, 4),
                current=round(ours, 4),
                reference=round(theirs, 4),
                note=note,
            )
        )

    frames: dict[str, tuple[pd.DataFrame, pd.DataFrame]] = {}
    notes: dict[str, str] = {}
    numeric = {
        "input_length": (current.lengths, reference.lengths),
        "answer_length": (current.answer_lengths, reference.answer_lengths),
        "score": (current.scores, list(baseline_scores)),
    }
    for name, (now, before) in numeric.items():
        if getattr(signals, name).enabled:
            if len(now) < 2 or len(before) < 2:
                notes[name] = "too few values to compare" + (
                    " (no earlier traffic of this version)" if name == "score" else ""
                )
                continue
            frames[name] = (
                pd.DataFrame({name: np.asarray(now, dtype=float)}),
                pd.DataFrame({name: np.asarray(before, dtype=float)}),
            )
    values = _evidently_values(frames, signals)
    for name in ("input_length", "answer_length", "score"):
        setting = getattr(signals, name)
        if not setting.enabled:
            continue
        value = values.get(name)
        bound = None
        if value is not None and name in frames:
            now, before = (frame[name].tolist() for frame in frames[name])
            bound = distance_chance(now, before, setting.method, chance)
        drift = value is not None and (
            value < setting.threshold
            if setting.method in P_VALUE_METHODS
            else value >= setting.threshold and (bound is None or value > bound)
        )
        note = notes.get(name, _EVIDENTLY_NOTES[setting.method])
        if bound is not None:
            note += f"; chance gives up to {bound:.3f} (the {chance.quantile:g} quantile, shuffled)"
        results.append(
            SignalResult(
                name=name,
                kind=KINDS[name],
                method=setting.method,
                value=None if value is None else round(float(value), 4),
                threshold=setting.threshold,
                drift=drift,
                chance=None if bound is None else round(bound, 4),
                note=note,
            )
        )
    results.extend(_classifier_signals(reference, current, signals, chance))
    order = list(KINDS)
    results.sort(key=lambda s: order.index(s.name))
    plotted = {n: (list(map(float, a)), list(map(float, b))) for n, (a, b) in numeric.items()}
    return results, distribution_plots(
        plotted, [r for r in results if r.method == "rate"]
    ) if plots else ""


def _classifier_signals(
    reference: Sample, current: Sample, signals: DriftSignals, chance: ChanceConfig
) -> list[SignalResult]:
    """The vocabulary and embedding signals: each a domain classifier's held-out ROC AUC on
    the sampled texts (their words; their sentence embeddings), drifting only at or above the
    threshold and above chance at this window's size."""
    results = []
    cur_texts, ref_texts = current.texts, reference.texts
    groups = ([request_group(t) for t in cur_texts], [request_group(t) for t in ref_texts])
    for name, fit_score in (("vocabulary", fit_score_texts), ("embedding", fit_score_embeddings)):
        setting: SignalThreshold = getattr(signals, name)
        if not setting.enabled:
            continue
        now, before = (
            (embed(cur_texts), embed(ref_texts))
            if name == "embedding"
            else (
                cur_texts,
                ref_texts,
            )
        )
        try:
            found = domain_auc(now, before, fit_score, chance, groups)
        except ValueError as error:  # e.g. texts of stop words only: an empty vocabulary
            found, why = None, f"not measured: {error}"
        else:
            why = "too few distinct requests (by document) to hold half of each side out"
        results.append(_classifier_result(name, setting, found, why, chance))
    return results


def _classifier_result(
    name: str, setting: SignalThreshold, found: DomainAuc | None, why: str, chance: ChanceConfig
) -> SignalResult:
    if found is None:
        return SignalResult(
            name=name,
            kind=KINDS[name],
            method=setting.method,
            value=None,
            threshold=setting.threshold,
            drift=False,
            note=why,
        )
    held = f"{found.window} window and {found.reference} reference texts held out"
    if found.judgeable:
        note = (
            f"{_EVIDENTLY_NOTES[setting.method]}; chance gives up to {found.chance:.3f} "
            f"(the {chance.quantile:g} quantile with shuffled labels, {held})"
        )
    else:
        note = f"cannot judge: {held}, too few for any AUC to beat chance"
    return SignalResult(
        name=name,
        kind=KINDS[name],
        method=setting.method,
        value=round(found.auc, 4),
        threshold=setting.threshold,
        drift=found.exceeds(setting.threshold),
        chance=round(found.chance, 4),
        note=note,
    )


_EVIDENTLY_NOTES = {
    "wasserstein": "Evidently: normed Wasserstein distance",
    "psi": "Evidently: population stability index",
    "jensenshannon": "Evidently: Jensen-Shannon distance",
    "ks": "Evidently: Kolmogorov-Smirnov p-value",
    "text": "ROC AUC of Evidently's classifier telling window from reference by their words",
    "embedding": "ROC AUC of Evidently's classifier telling window from reference embeddings",
    "rate": "",
}


def _evidently_values(
    frames: dict[str, tuple[Any, Any]], signals: DriftSignals
) -> dict[str, float]:
    """Each numeric signal's drift value by Evidently's column drift test (`ValueDrift`, one
    report a signal since the columns' lengths differ)."""
    from evidently import DataDefinition, Dataset, Report
    from evidently.metrics import ValueDrift

    values: dict[str, float] = {}
    for name, (now, before) in frames.items():
        setting: SignalThreshold = getattr(signals, name)
        definition = DataDefinition(numerical_columns=[name])
        metric = ValueDrift(column=name, method=setting.method, threshold=setting.threshold)
        snapshot = Report([metric]).run(
            Dataset.from_pandas(now, data_definition=definition),
            Dataset.from_pandas(before, data_definition=definition),
        )
        found = snapshot.dict()["metrics"]
        if found and isinstance(found[0]["value"], int | float):
            values[name] = float(found[0]["value"])
    return values
