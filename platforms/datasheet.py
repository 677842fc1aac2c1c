"""Datasheets: where an input came from and with what right it is used.

Every input of a run can carry a `Datasheet` (its source, its licence as an SPDX id, its owner
and the basis it was collected on), read by tasks/datasheets.py from the config, a sidecar file
or a `datasets` folder's card. `DataRights` is what a run knows of all its inputs: the approval
record signs it, the lineage keeps it, the review and the model card show it.

Licences are SPDX ids (`CC-BY-4.0`, `MIT`), checked against the ids tunegate ships
(platforms/data/spdx_licences.txt, a subset of the SPDX License List); any other licence is
written `LicenseRef-<name>`, SPDX's own form for one. Case is forgiven (`cc-by-nc-4.0`, as
Hugging Face cards write it); a simple expression (`MIT OR Apache-2.0`) names each of its ids.
A card's `other` is `LicenseRef-other`; `unknown` is no licence at all.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, field_validator

SPDX_FILE = Path(__file__).parent / "data" / "spdx_licences.txt"
_OPERATORS = {"AND", "OR", "WITH"}
_REF = re.compile(r"^(DocumentRef-[\w.-]+:)?LicenseRef-[\w.-]+$")
_TOKENS = re.compile(r"\(|\)|[^\s()]+")
UNKNOWN = "unknown"  # what a card says when it does not know: no licence


@cache
def spdx_ids() -> dict[str, str]:
    """The SPDX ids tunegate knows, by lower case."""
    lines = SPDX_FILE.read_text(encoding="utf-8").splitlines()
    ids = [line.strip() for line in lines if line.strip() and not line.startswith("#")]
    return {i.lower(): i for i in ids}


def spdx_licence(value: str) -> str:
    """The licence as SPDX writes it (ids in their case, operators upper case); a ValueError
    names an id that is not known and says how to give another licence."""
    tokens = _TOKENS.findall(value.strip())
    if not tokens:
        raise ValueError("licence is empty: give an SPDX id (e.g. CC-BY-4.0)")
    if len(tokens) == 1 and tokens[0].lower() == "other":  # a Hugging Face card's
        return "LicenseRef-other"
    out, after_with = [], False
    for token in tokens:
        if token in "()" or token.upper() in _OPERATORS:
            out.append(token if token in "()" else token.upper())
            after_with = token.upper() == "WITH"
            continue
        if after_with or _REF.match(token):  # an exception id, or a licence of one's own
            out.append(token)
        elif (known := spdx_ids().get(token.lower().removesuffix("+"))) is not None:
            out.append(known + ("+" if token.endswith("+") else ""))
        else:
            raise ValueError(
                f"licence {value!r}: {token!r} is not an SPDX id tunegate knows (e.g. "
                "CC-BY-4.0, CC-BY-NC-4.0, MIT, Apache-2.0, CC0-1.0; the list: "
                "platforms/data/spdx_licences.txt); write another licence as LicenseRef-<name>"
            )
        after_with = False
    return " ".join(out).replace("( ", "(").replace(" )", ")")


def licence_ids(expression: str) -> list[str]:
    """The licence ids an expression names (not its operators nor its exceptions)."""
    ids, after_with = [], False
    for token in _TOKENS.findall(expression):
        if token in "()" or token.upper() in _OPERATORS:
            after_with = token.upper() == "WITH"
            continue
        if not after_with:
            ids.append(token.removesuffix("+"))
        after_with = False
    return ids


class Datasheet(BaseModel):
    """What is known of one input's origin and rights; every field optional."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)
    source: str | None = Field(
        None, description="Where the data came from: a URL, a system, a vendor, a team."
    )
    licence: str | None = Field(
        None,
        validation_alias=AliasChoices("licence", "license"),
        description="Its licence as an SPDX id (CC-BY-4.0, CC-BY-NC-4.0, MIT; another as "
        "LicenseRef-<name>); `unknown` or none: flagged to the reviewer.",
    )
    owner: str | None = Field(
        None, description="Who is responsible for the data (a person or team, e.g. an e-mail)."
    )
    basis: str | None = Field(
        None,
        description="The basis it was collected on (consent, contract, legitimate interest, "
        "public data ...).",
    )

    @field_validator("licence", mode="before")
    @classmethod
    def _spdx(cls, value: object) -> object:
        if value is None or (isinstance(value, str) and value.strip().lower() in ("", UNKNOWN)):
            return None
        return spdx_licence(value) if isinstance(value, str) else value

    def over(self, base: Datasheet) -> Datasheet:
        """This datasheet's fields where set, `base`'s elsewhere."""
        return base.model_copy(update=self.model_dump(exclude_none=True))

    @property
    def empty(self) -> bool:
        return not self.model_dump(exclude_none=True)


class InputRights(BaseModel):
    """One input of a run (a file or `datasets` folder) with its datasheet and where it was read."""

    model_config = ConfigDict(frozen=True)
    input: str
    datasheet: Datasheet = Field(default_factory=Datasheet)
    found_in: list[str] = Field(
        default_factory=list,
        description="Where the datasheet's fields were read: config, a sidecar file, a card.",
    )

    @property
    def licence(self) -> str | None:
        return self.datasheet.licence


class DataRights(BaseModel):
    """What a run knows of the rights to all its inputs (the rights stage's hand-off)."""

    model_config = ConfigDict(frozen=True)
    inputs: list[InputRights] = Field(default_factory=list)

    @property
    def unlicensed(self) -> list[str]:
        """The inputs without a licence: flagged to the reviewer."""
        return [i.input for i in self.inputs if i.licence is None]

    @property
    def licences(self) -> list[str]:
        """Every licence among the inputs, sorted, once each."""
        return sorted({i.licence for i in self.inputs if i.licence is not None})

    @property
    def owners(self) -> list[str]:
        """Every owner the inputs' datasheets name (who may not approve the data)."""
        return sorted({i.datasheet.owner for i in self.inputs if i.datasheet.owner})

    @property
    def sources(self) -> list[str]:
        return sorted({i.datasheet.source for i in self.inputs if i.datasheet.source})
