"""The licence policy: which inputs' licences a run may train on (`approval.licences`).

`judge_licences(rights, policy)` is a pure decision: every input whose licence the policy
refuses, with why, and every input without a licence (flagged to the reviewer, or refused with
`unlicensed: refuse`). The rights stage (tasks/rights.py) stops the run on a refusal, before
anything is screened or approved.

Patterns are SPDX ids or globs over them, matched without regard to case (`CC-BY-NC-*`);
`non-commercial` stands for every Creative Commons NonCommercial licence (`*-NC-*`, `*-NC`). A
licence expression is refused when any licence it names is: `MIT OR CC-BY-NC-4.0` is treated as
if both applied.
"""

from __future__ import annotations

import fnmatch
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from platforms.datasheet import DataRights, licence_ids, spdx_ids

NON_COMMERCIAL = "non-commercial"
_SHORTHANDS = {NON_COMMERCIAL: ("*-NC-*", "*-NC")}


class LicencePolicy(BaseModel):
    """Which licences may be trained on; by default every licence, no licence flagged."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    allow: list[str] = Field(
        default_factory=list,
        description="SPDX ids or globs (CC-BY-*) an input's licence must match; empty: any "
        "licence the refuse list does not name.",
    )
    refuse: list[str] = Field(
        default_factory=list,
        description="SPDX ids or globs refused whatever `allow` says; `non-commercial` stands "
        "for every NonCommercial licence (*-NC-*, *-NC): the policy for a model served "
        "commercially.",
    )
    unlicensed: Literal["flag", "refuse"] = Field(
        "flag",
        description="An input without a licence: flag (the reviewer is told, in the review and "
        "the pause form) or refuse (the run stops).",
    )

    @field_validator("allow", "refuse")
    @classmethod
    def _patterns(cls, patterns: list[str]) -> list[str]:
        for pattern in patterns:
            if pattern.lower() in _SHORTHANDS or any(ch in pattern for ch in "*?["):
                continue
            if pattern.lower() not in spdx_ids() and not pattern.startswith("LicenseRef-"):
                raise ValueError(
                    f"{pattern!r} is neither an SPDX id tunegate knows, a glob (CC-BY-NC-*) nor "
                    f"{NON_COMMERCIAL!r}"
                )
        return patterns


class LicenceVerdict(BaseModel):
    """What the policy says of a run's inputs."""

    model_config = ConfigDict(frozen=True)
    refused: dict[str, str] = Field(
        default_factory=dict, description="Input → why its licence is refused."
    )
    flagged: list[str] = Field(
        default_factory=list, description="Inputs without a licence, for the reviewer."
    )

    def message(self) -> str:
        """One line per refused input: what stops the run, and what to do."""
        lines = [f"{uri}: {why}" for uri, why in self.refused.items()]
        return (
            "the licence policy (approval.licences) refuses "
            + ("this input: " if len(lines) == 1 else "these inputs: ")
            + "; ".join(lines)
            + "; nothing was screened or approved: remove the input, or change the policy if "
            "its licence allows this use"
        )


def judge_licences(rights: DataRights, policy: LicencePolicy) -> LicenceVerdict:
    """Every input the policy refuses (with why), and every input without a licence."""
    refused, flagged = {}, []
    for item in rights.inputs:
        if item.licence is None:
            if policy.unlicensed == "refuse":
                refused[item.input] = "it has no licence (approval.licences.unlicensed=refuse)"
            else:
                flagged.append(item.input)
            continue
        if (why := _refusal(item.licence, policy)) is not None:
            refused[item.input] = why
    return LicenceVerdict(refused=refused, flagged=flagged)


def _refusal(licence: str, policy: LicencePolicy) -> str | None:
    for licence_id in licence_ids(licence):
        if (pattern := _matching(licence_id, policy.refuse)) is not None:
            return f"licence {licence_id} is refused (approval.licences.refuse: {pattern})"
        if policy.allow and _matching(licence_id, policy.allow) is None:
            return f"licence {licence_id} is not in approval.licences.allow {policy.allow}"
    return None


def _matching(licence_id: str, patterns: list[str]) -> str | None:
    for pattern in patterns:
        globs = _SHORTHANDS.get(pattern.lower(), (pattern,))
        if any(fnmatch.fnmatchcase(licence_id.lower(), g.lower()) for g in globs):
            return pattern
    return None
