"""The screen stage's result as the later stages see it: the report a reviewer reads.

`ScreenReport` is what the screen found and did; `Screened` is the stage's typed result (the
screened dataset and its report), handed to approve; `report_markdown` is what the reviewer
reads in the Prefect UI and `report_hash` binds an approval to the report it was given for.
`ReviewRecord` is one flagged or quarantined record as the reviewer sees it (every field masked,
its findings and its reason): the screen keeps them in the dataset's `review` table
(`REVIEW_SCHEMA`), beside the records and outside their content hash.
"""

from __future__ import annotations

from collections import Counter
from typing import Literal, NamedTuple

import pyarrow as pa
from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer

from platforms.hashing import sha256_text, stable_json
from platforms.manifest import DatasetRef
from screening.changes import FlagMark, TextChange
from screening.profiles import DEFAULT_PROFILE, PROFILES, ProfileName


class EntityCount(BaseModel):
    """How often one entity type was found and which rule handled it."""

    model_config = ConfigDict(frozen=True)
    entity: str = Field(description="Entity type or secret rule, e.g. PERSON.")
    action: str = Field(description="The rule that handled it: redact, surrogate, drop or flag.")
    findings: int = Field(description="How many values were found.")


class MaskedSample(BaseModel):
    """A short masked excerpt of a record the screen acted on, for the reviewer."""

    model_config = ConfigDict(frozen=True)
    id: str = Field(description="The record's id.")
    field: str = Field(description="The text field the excerpt comes from.")
    excerpt: str = Field(description="Masked text around the first placeholder; no raw value.")
    entities: list[str] = Field(default_factory=list, description="Entity types found, sorted.")
    outcome: Literal["quarantined", "flagged", "redacted"] = Field(
        description="What happened to the record."
    )
    reason: str = Field(
        "", description="Why it was quarantined or flagged (e.g. `toxicity 1.00 >= 1.0`)."
    )


class ReviewRecord(BaseModel):
    """A record a person should look at: flagged (kept) or quarantined, every field masked."""

    model_config = ConfigDict(frozen=True)
    id: str = Field(description="The record's id.")
    outcome: Literal["quarantined", "flagged"] = Field(description="What happened to it.")
    reason: str = Field(description="Why: the quarantine reason or what was flagged, and where.")
    findings: list[EntityCount] = Field(description="Findings per entity type and rule.")
    masked: dict[str, str] = Field(
        description="Every text field as the reviewer sees it: a quarantined record with every "
        "finding a placeholder; a flagged one as training gets it, placeholders in place of "
        "what was replaced (its flagged values as they are)."
    )
    flags: list[FlagMark] = Field(
        default_factory=list, description="Where each flagged value is in the text shown."
    )

    def to_row(self) -> dict[str, object]:
        row = self.model_dump(mode="json")
        row["masked"] = [{"field": k, "text": v} for k, v in self.masked.items()]
        return row

    @classmethod
    def from_row(cls, row: dict[str, object]) -> ReviewRecord:
        masked = {m["field"]: m["text"] for m in row["masked"]}  # type: ignore[union-attr,index]
        return cls.model_validate({**row, "masked": masked, "flags": row.get("flags") or []})


_EXCERPT = pa.struct([("left", pa.string()), ("value", pa.string()), ("right", pa.string())])


REVIEW_SCHEMA = pa.schema(
    [
        ("id", pa.string()),
        ("outcome", pa.string()),
        ("reason", pa.string()),
        (
            "findings",
            pa.list_(
                pa.struct(
                    [("entity", pa.string()), ("action", pa.string()), ("findings", pa.int64())]
                )
            ),
        ),
        ("masked", pa.list_(pa.struct([("field", pa.string()), ("text", pa.string())]))),
        (
            "flags",
            pa.list_(
                pa.struct(
                    [
                        ("field", pa.string()),
                        ("entity", pa.string()),
                        ("excerpt", _EXCERPT),
                        ("replaced", pa.bool_()),
                    ]
                )
            ),
        ),
    ]
)

# The screened dataset's `changes` table: a sample of the values replaced in kept records, per
# entity type (`TextChange`), beside the records and outside their content hash.
CHANGES_SCHEMA = pa.schema(
    [
        ("id", pa.string()),
        ("field", pa.string()),
        ("entity", pa.string()),
        ("action", pa.string()),
        ("before", _EXCERPT),
        ("after", _EXCERPT),
    ]
)


def change_rows(changes: list[TextChange]) -> list[dict[str, object]]:
    return [c.model_dump(mode="json") for c in changes]


class ScreenReport(BaseModel):
    """What the screen found and did; shown to the reviewer, stored beside the dataset."""

    model_config = ConfigDict(frozen=True)
    task: str
    records_in: int
    kept: int
    redacted: int
    quarantined: int
    flagged: int
    entities: list[EntityCount]
    quarantine_reasons: dict[str, int]
    flagged_ids: list[str] = Field(description="Kept records a person should look at.")
    samples: list[MaskedSample] = Field(description="Masked excerpts; never raw values.")
    toxicity_threshold: float
    changed: list[EntityCount] = Field(
        default_factory=list,
        description="Values replaced in kept records (what training gets changed), per entity "
        "type and rule.",
    )
    profile: ProfileName = Field(
        DEFAULT_PROFILE, description="The screening profile (`screen.profile`) that screened."
    )
    input_profiles: dict[str, ProfileName] = Field(
        default_factory=dict,
        description="Inputs screened with another profile (`screen.profiles`): input → profile.",
    )

    @model_serializer(mode="wrap")
    def _without_default_profile(self, handler: SerializerFunctionWrapHandler) -> dict[str, object]:
        """No `profile` key for the default one, no `changed` when nothing was: the hash of a
        report written before they existed (which an approval names) stays what it was."""
        dumped: dict[str, object] = handler(self)
        if self.profile == DEFAULT_PROFILE:
            dumped.pop("profile", None)
        if not self.changed:
            dumped.pop("changed", None)
        if not self.input_profiles:
            dumped.pop("input_profiles", None)
        return dumped

    @property
    def profiles_said(self) -> str:
        """The profiles that screened, for a person: `personal profile`, or `personal profile;
        literary for 2 inputs`."""
        said = f"{self.profile} profile"
        others = Counter(self.input_profiles.values())
        for name, n in sorted(others.items()):
            said += f"; {name} for {n} input{'s' if n > 1 else ''}"
        return said

    @property
    def needs_review(self) -> bool:
        """True when the policy flagged something for a person (auto-if-clean then waits)."""
        return self.flagged > 0


class Screened(NamedTuple):
    """The screen stage's result."""

    dataset: DatasetRef  # the screened dataset: kept records, redacted where the policy said
    report: ScreenReport  # what was found and done, for the reviewer


def report_hash(report: ScreenReport) -> str:
    return sha256_text(stable_json(report.model_dump(mode="json")))


def counts_markdown(report: ScreenReport) -> list[str]:
    """The report's counts (its first five lines) and findings per entity and rule, as two
    narrow tables."""
    return [
        f"### Screening report ({report.task}, {report.profiles_said})",
        "",
        *[f"- `{uri}`: screened as {name}" for uri, name in sorted(report.input_profiles.items())],
        *([""] if report.input_profiles else []),
        "| records in | kept | redacted | quarantined | flagged for review |",
        "|---:|---:|---:|---:|---:|",
        f"| {report.records_in} | {report.kept} | {report.redacted} | {report.quarantined} "
        f"| {report.flagged} |",
        "",
        "| entity | rule | findings |",
        "|---|---|---:|",
        *[f"| {c.entity} | {c.action} | {c.findings} |" for c in report.entities],
    ]


def profiles_markdown(report: ScreenReport) -> list[str]:
    """Which profile screened the data, said for a person: the run's, and each input's that was
    screened with another (`screen.profiles`)."""
    lines = [
        f"Screened with the **{report.profile}** profile (`screen.profile`: "
        f"{PROFILES[report.profile].description})."
    ]
    if report.input_profiles:
        lines += ["", "Inputs screened with another profile (`screen.profiles`):", ""]
        lines += [
            f"- `{uri}`: **{name}** ({PROFILES[name].description})"
            for uri, name in sorted(report.input_profiles.items())
        ]
    return lines


def counts_line(report: ScreenReport) -> str:
    """The report's counts as one sentence (the pause form's, which has room for a paragraph)."""
    return (
        f"Screening report ({report.profiles_said}): {report.records_in} records in, "
        f"{report.kept} kept ({report.redacted} redacted), {report.quarantined} quarantined, "
        f"{report.flagged} flagged for review."
    )


def report_markdown(report: ScreenReport) -> str:
    """The screening report as markdown: what a reviewer reads before approving."""
    lines = counts_markdown(report)
    if report.quarantine_reasons:
        lines += ["", "**Quarantine reasons**", ""]
        lines += [f"- {reason}: {n}" for reason, n in list(report.quarantine_reasons.items())[:15]]
    if report.samples:
        lines += ["", "**Masked samples**", ""]
        for s in report.samples:
            excerpt = markdown_text(s.excerpt)
            why = f": {markdown_text(s.reason)}" if s.reason else ""
            lines.append(f"- `{s.id}` ({s.outcome}{why}; {s.field}): {excerpt}")
    if report.flagged_ids:
        shown = ", ".join(report.flagged_ids[:20])
        lines += ["", f"**Flagged record ids** ({report.flagged}): {shown}"]
    return "\n".join(lines)


def markdown_text(text: str) -> str:
    """Text shown as-is in a markdown table or list: placeholders like `<PERSON>` would
    otherwise be taken for HTML tags and vanish from the Prefect UI."""
    escaped = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return escaped.replace("\n", " ").replace("|", "\\|")
