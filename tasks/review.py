"""The full review of a screened dataset: what a person reads before approving it.

After the screening report's counts and the inputs' datasheets (source, licence, owner, basis;
an input without a licence flagged): every flagged record as training gets it (its flagged
values as they are, each shown in context under "Flagged for") and every quarantined record
masked whole, with findings and reason (the screened dataset's `review` table, written by the
screen); then the kept records the screen changed, counted per entity type with a sample of
each before and after (tasks/review_kept.py); then the changes since the last approved dataset
of the same model (tasks/review_changes.py). The same
markdown is the `review` artifact the pause form links to and what `tunegate review show` prints.
Records are shown as short lines and text under them, never as wide table columns: nothing is cut
in a 470 px modal, a full page or an 80-column terminal.
"""

from __future__ import annotations

import re

from platforms.datasheet import DataRights
from platforms.manifest import DatasetRef
from platforms.store import Store, read_table
from screening.changes import TextChange
from screening.report import (
    ReviewRecord,
    ScreenReport,
    counts_markdown,
    markdown_text,
    profiles_markdown,
)
from tasks.review_changes import ReviewChanges, changes_markdown
from tasks.review_kept import flags_markdown, kept_markdown

ARTIFACT_KEY = "review"
_HASH = re.compile(r"content hash `([0-9a-f]{64})`")


def review_records(store: Store, dataset: DatasetRef) -> list[ReviewRecord] | None:
    """The flagged and quarantined records of a screened dataset, quarantined first, by id; None
    when it was screened before the screen kept them (its report's masked samples remain)."""
    if "review" not in store.read_manifest(dataset.uri).tables:
        return None
    records = []
    for uri in store.table_files(dataset, "review"):  # encrypted as the raw records are
        records += [ReviewRecord.from_row(r) for r in read_table(store, uri)]
    return sorted(records, key=lambda r: (r.outcome != "quarantined", r.id))


def review_markdown(
    dataset: DatasetRef,
    report: ScreenReport,
    records: list[ReviewRecord] | None,
    changes: ReviewChanges | None,
    kept: list[TextChange] | None = None,
    rights: DataRights | None = None,
) -> str:
    """The whole review as markdown: counts, the inputs' rights, every flagged and quarantined
    record, the kept records the screen changed (`kept`: a sample,
    `tasks.review_kept.kept_changes`), and what changed since the last approval."""
    lines = [
        f"## Review of screened data `{dataset.content_hash[:16]}`",
        "",
        f"Dataset `{dataset.uri}`, content hash `{dataset.content_hash}`.",
        "",
        *profiles_markdown(report),
        "",
        *counts_markdown(report),
    ]
    if rights is not None:
        lines += ["", rights_markdown(rights)]
    if records is None:
        lines += [
            "",
            "_Screened before tunegate kept every flagged and quarantined record for review: "
            "only the report's masked samples are known._",
            "",
            *[
                f"- `{s.id}` ({s.outcome}: {markdown_text(s.reason or s.field)}): "
                f"{markdown_text(s.excerpt)}"
                for s in report.samples
            ],
        ]
    else:
        for outcome, title in (("flagged", "Flagged for review"), ("quarantined", "Quarantined")):
            shown = [r for r in records if r.outcome == outcome]
            lines += ["", f"### {title} ({len(shown)})"]
            if outcome == "quarantined":
                lines += ["", "_Left out of training whatever the decision._"]
            elif shown:
                lines += ["", "_As training gets them: flagged values as they are._"]
            for record in shown:
                lines += ["", *_record_markdown(record)]
            if not shown:
                lines += ["", "None."]
    lines += ["", *kept_markdown(report, kept)]
    return "\n".join([*lines, "", changes_markdown(changes)])


def rights_markdown(rights: DataRights) -> str:
    """The inputs with their datasheets, an input without a licence flagged first."""
    lines = [f"### Inputs and their rights ({len(rights.inputs)})", ""]
    lines += [f"> **No licence:** {unlicensed_warning(rights)}", ""] if rights.unlicensed else []
    for item in rights.inputs:
        sheet = item.datasheet
        lines += [
            f"- `{item.input}`: licence **{sheet.licence or 'none'}**; source "
            f"{markdown_text(sheet.source or 'not given')}; owner "
            f"{markdown_text(sheet.owner or 'not given')}; basis "
            f"{markdown_text(sheet.basis or 'not given')}"
            + (f" (from {', '.join(item.found_in)})" if item.found_in else " (no datasheet)")
        ]
    return "\n".join(lines)


def unlicensed_warning(rights: DataRights) -> str:
    """What the reviewer is told of inputs without a licence (empty when none)."""
    if not rights.unlicensed:
        return ""
    names = ", ".join(f"`{uri}`" for uri in rights.unlicensed)
    return (
        f"{names} {'has' if len(rights.unlicensed) == 1 else 'have'} no licence in a datasheet: "
        "approve only if you know this use is allowed (give it with `licence:` in the input's "
        "entry, a `.datasheet.yaml` beside it or its card)"
    )


def _record_markdown(record: ReviewRecord) -> list[str]:
    found = ", ".join(f"{c.entity} {c.findings} ({c.action})" for c in record.findings)
    return [
        f"#### `{record.id}` · {record.outcome}",
        "",
        f"**Reason:** {markdown_text(record.reason)}  ",
        f"**Findings:** {found or 'none'}",
        *([f"**Flagged for:** {flags_markdown(record.flags)}"] if record.flags else []),
        "",
        *[f"- **{name}:** {markdown_text(text)}" for name, text in record.masked.items()],
    ]


def dataset_hash_in(markdown: str) -> str | None:
    """The screened dataset's content hash a review's markdown names (None if none)."""
    found = _HASH.search(markdown)
    return found.group(1) if found else None


def find_screened(store: Store, prefix: str) -> DatasetRef:
    """The screened dataset whose content hash starts with `prefix`; ValueError when none or
    several do (the message lists them)."""
    prefix = prefix.lower()
    found = [m for m in store.manifests() if m.stage == "screen"]
    matches = {m.content_hash: m for m in found if m.content_hash.startswith(prefix)}
    if not matches:
        raise ValueError(
            f"no screened dataset in {store.uri} has a content hash starting {prefix!r}"
        )
    if len(matches) > 1:
        names = ", ".join(sorted(h[:16] for h in matches))
        raise ValueError(f"{prefix!r} matches several screened datasets: {names}")
    return store.dataset_at(next(iter(matches.values())).uri)
