"""The review's part on kept records the screen changed: what training gets that nobody flagged.

A kept record goes into training with its replaced values (placeholders, surrogates): a product
called `Pro` read as a PERSON becomes `laptop <PERSON> 14` in training without being flagged. The
review counts every such change per entity type and rule (the report's `changed`) and shows a
sample of each type in context, before (as a reviewer may see it, `screen.review_shows`) and
after (as training gets it), from the screened dataset's `changes` table (`screening.changes`).
"""

from __future__ import annotations

from platforms.manifest import DatasetRef
from platforms.store import Store, read_table
from screening.changes import Excerpt, FlagMark, TextChange
from screening.report import ScreenReport, markdown_text
from screening.scan import CHANGES_PER_ENTITY, sample_changes


def kept_changes(store: Store, dataset: DatasetRef) -> list[TextChange] | None:
    """A sample of the changes to kept records, `CHANGES_PER_ENTITY` per entity type (None when
    the dataset was screened before the screen kept them)."""
    if "changes" not in store.read_manifest(dataset.uri).tables:
        return None
    changes = [
        TextChange.model_validate(row)
        for uri in store.table_files(dataset, "changes")
        for row in read_table(store, uri)
    ]
    changes.sort(key=lambda c: (c.entity, c.id, c.field))
    return sample_changes(changes, CHANGES_PER_ENTITY)


def kept_markdown(report: ScreenReport, changes: list[TextChange] | None) -> list[str]:
    """Every change to kept records counted per entity type and rule, then each type's sample
    with its before and after."""
    total = sum(c.findings for c in report.changed)
    values = "value" if total == 1 else "values"
    lines = [f"### Kept records the screen changed ({total} {values} replaced)", ""]
    if changes is None:
        return [*lines, "_Screened before tunegate kept what it changed in kept records._"]
    if not total:
        return [*lines, "None: training gets every kept record as it came in."]
    lines += [
        "_What training gets that was not flagged: each value the screen replaced, before (as "
        "you may see it) and after (as training gets it)._",
        "",
        "| entity | rule | values replaced |",
        "|---|---|---:|",
        *[f"| {c.entity} | {c.action} | {c.findings} |" for c in report.changed],
    ]
    for entity in sorted({c.entity for c in report.changed}):
        shown = [c for c in changes if c.entity == entity]
        count = sum(c.findings for c in report.changed if c.entity == entity)
        lines += ["", f"#### {entity}: {len(shown)} of {count} shown"]
        for change in shown:
            lines += [
                "",
                f"`{change.id}` · {change.field} · {change.action}  ",
                f"before: {excerpt_markdown(change.before)}  ",
                f"after: {excerpt_markdown(change.after)}",
            ]
    return lines


def flags_markdown(flags: list[FlagMark]) -> str:
    """What a flagged record was flagged for, each value in its context as the reviewer sees it
    (and as training gets it)."""
    return "; ".join(
        f"{f.entity} in {f.field}: {excerpt_markdown(f.excerpt)}"
        + (" (inside a value replaced for another finding)" if f.replaced else "")
        for f in flags
    )


def excerpt_markdown(excerpt: Excerpt) -> str:
    """The excerpt with its value in bold (spaces around it stay outside the bold)."""
    value = excerpt.value
    inner = value.strip()
    if not inner:
        return markdown_text(excerpt.left + value + excerpt.right)
    lead = value[: len(value) - len(value.lstrip())]
    trail = value[len(value.rstrip()) :]
    return (
        markdown_text(excerpt.left + lead)
        + f"**{markdown_text(inner)}**"
        + markdown_text(trail + excerpt.right)
    )
