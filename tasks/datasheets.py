"""Where each input's datasheet is read: the config, a sidecar file, a `datasets` folder's card.

Three places, the nearer to the run winning field by field:
1. the config's input entry (`ingest.inputs: [{path: ..., licence: ..., source: ...}]`, kept as
   `ingest.datasheets` by the input as given: a file, a folder or a glob);
2. a sidecar file beside the data, `<file>.datasheet.yaml` (`<folder>.datasheet.yaml` for a
   folder), holding the same fields;
3. a `datasets` folder's own card, its `README.md` front matter as Hugging Face writes it
   (`license:`, `license_name:` for `other`, `source_datasets:`).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable
from typing import Any, TypeVar

import fsspec
import yaml
from pydantic import ValidationError

from platforms.blob import AzureStorageConfig, storage_options
from platforms.datasheet import DataRights, Datasheet, InputRights

SIDECAR_SUFFIX = ".datasheet.yaml"
CARD = "README.md"
T = TypeVar("T")


def is_sidecar(path: str) -> bool:
    """Whether a file is a datasheet beside the data (never an input of its own)."""
    return path.endswith(SIDECAR_SUFFIX)


def read_rights(
    files: list[str], configured: dict[str, Datasheet], azure: AzureStorageConfig
) -> DataRights:
    """The datasheet of every input (files and `datasets` folders, as `expand_inputs` lists
    them); a ValueError names a sidecar or card that cannot be read."""
    sheet_of = by_input(configured, azure)
    found = []
    for uri in files:
        fs, path = fsspec.core.url_to_fs(uri, **storage_options(uri, azure))
        sheet, where = Datasheet(), []
        for origin, read in (
            (f"{uri.rstrip('/')}/{CARD}", _card if fs.isdir(path) else None),
            (uri.rstrip("/") + SIDECAR_SUFFIX, _sidecar),
            ("config", None),
        ):
            if origin == "config":
                given = sheet_of(uri)
            elif read is None:
                continue
            else:
                given = read(fs, path, origin)
            if given is not None and not given.empty:
                sheet = given.over(sheet)
                where.append(origin)
        found.append(InputRights(input=uri, datasheet=sheet, found_in=where))
    return DataRights(inputs=found)


def by_input(configured: dict[str, T], azure: AzureStorageConfig) -> Callable[[str], T | None]:
    """What the config gives an input (a datasheet, a profile) by the input as given: a file, a
    folder or a glob, as `ingest.inputs` names them. The returned lookup takes an input as
    `expand_inputs` lists it and answers with the entry that names it most closely (the file
    itself, a folder it is in, or a glob it matches), or None."""
    listed = {_as_listed(spec, azure): value for spec, value in configured.items()}

    def lookup(uri: str) -> T | None:
        matches = [
            spec
            for spec in listed
            if uri == spec.rstrip("/")
            or uri.startswith(spec.rstrip("/") + "/")
            or fnmatch.fnmatchcase(uri, spec)
        ]
        return listed[max(matches, key=len)] if matches else None

    return lookup


def _as_listed(spec: str, azure: AzureStorageConfig) -> str:
    """An input as given (a relative path, a glob) as `expand_inputs` lists what it names."""
    _, path = fsspec.core.url_to_fs(spec, **storage_options(spec, azure))
    return spec.split("://", 1)[0] + "://" + path if "://" in spec else path


def _sidecar(fs: Any, path: str, origin: str) -> Datasheet | None:
    sidecar = path.rstrip("/") + SIDECAR_SUFFIX
    if not fs.isfile(sidecar):
        return None
    value = _yaml(fs, sidecar, origin)
    if not isinstance(value, dict):
        raise ValueError(f"{origin}: a datasheet is a mapping of source, licence, owner, basis")
    return _sheet(value, origin)


def _card(fs: Any, path: str, origin: str) -> Datasheet | None:
    """The datasheet a `datasets` folder's card gives (its README.md front matter)."""
    card = f"{path.rstrip('/')}/{CARD}"
    if not fs.isfile(card):
        return None
    with fs.open(card, "rb") as f:
        text = f.read().decode("utf-8", errors="replace")
    if not text.startswith("---"):
        return None
    front = text.split("---", 2)[1] if text.count("---") >= 2 else ""
    try:
        meta = yaml.safe_load(front) or {}
    except yaml.YAMLError as exc:
        raise ValueError(f"{origin}: its front matter is not YAML: {exc}") from None
    if not isinstance(meta, dict):
        return None
    licence = meta.get("license")
    if isinstance(licence, list):  # a card may list several: all of them apply
        licence = " AND ".join(str(x) for x in licence) if licence else None
    if str(licence).lower() == "other" and meta.get("license_name"):
        licence = f"LicenseRef-{meta['license_name']}"
    sources = meta.get("source_datasets")
    fields = {
        "licence": licence,
        "source": meta.get("source") or (", ".join(map(str, sources)) if sources else None),
        "owner": meta.get("owner"),
        "basis": meta.get("basis"),
    }
    return _sheet({k: v for k, v in fields.items() if v is not None}, origin)


def _yaml(fs: Any, path: str, origin: str) -> Any:
    try:
        with fs.open(path, "rb") as f:
            return yaml.safe_load(f.read().decode("utf-8"))
    except (UnicodeDecodeError, yaml.YAMLError) as exc:
        raise ValueError(f"{origin}: not a YAML datasheet: {exc}") from None


def _sheet(value: dict[str, Any], origin: str) -> Datasheet:
    try:
        return Datasheet.model_validate(value)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(map(str, e['loc'])) or 'datasheet'}: "
            + e["msg"].removeprefix("Value error, ")
            for e in exc.errors()
        )
        raise ValueError(f"{origin}: {problems}") from None
