"""Hugging Face `datasets` folders, as `save_to_disk` writes them: how to tell one, what it holds.

A `Dataset` folder holds `state.json` (which lists its `data-*.arrow` files, in order),
`dataset_info.json` and the Arrow files; a `DatasetDict` folder holds `dataset_dict.json` (its
split names) and one `Dataset` folder per split. Ingest reads either as one input, with pyarrow
alone, so the Dask workers need no `datasets`; the splits it holds are all read, and tunegate
draws its own split later.
"""

from __future__ import annotations

import json
import posixpath
from typing import Any

STATE = "state.json"
DATASET_DICT = "dataset_dict.json"
MARKERS = (STATE, DATASET_DICT)


def arrow_files(fs: Any, path: str) -> list[str]:
    """Every Arrow file of a datasets folder in reading order: split by split as
    `dataset_dict.json` lists them, each split's files as its `state.json` lists them."""
    if fs.isfile(f"{path}/{DATASET_DICT}"):
        splits = _read_json(fs, f"{path}/{DATASET_DICT}").get("splits")
        if not isinstance(splits, list) or not all(isinstance(s, str) for s in splits):
            raise ValueError(f"{path}/{DATASET_DICT}: 'splits' must be a list of split names")
        return [file for split in splits for file in arrow_files(fs, f"{path}/{split}")]
    data_files = _read_json(fs, f"{path}/{STATE}").get("_data_files")
    if not isinstance(data_files, list) or not all(
        isinstance(d, dict) and isinstance(d.get("filename"), str) for d in data_files
    ):
        raise ValueError(f"{path}/{STATE}: '_data_files' must be a list of {{filename}} objects")
    return [f"{path}/{d['filename']}" for d in data_files]


def group_listing(paths: list[str]) -> tuple[list[str], list[str]]:
    """(datasets folders, other files) among file paths (a recursive listing, glob matches).

    A folder holding a marker file is one input; the files inside it (its Arrow files, its JSON
    metadata, a `DatasetDict`'s split folders) are not inputs of their own.
    """
    roots = {posixpath.dirname(p) for p in paths if posixpath.basename(p) in MARKERS}
    outermost = sorted(r for r in roots if not any(_inside(r, other) for other in roots))
    others = [p for p in paths if not any(_inside(p, root) for root in outermost)]
    return outermost, others


def _inside(path: str, folder: str) -> bool:
    return path != folder and path.startswith(folder.rstrip("/") + "/")


def _read_json(fs: Any, path: str) -> dict[str, Any]:
    try:
        with fs.open(path, "rb") as f:
            value = json.load(f)
    except FileNotFoundError:
        raise ValueError(f"{path} is missing: not a datasets folder") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path} is not valid JSON: {exc}") from None
    if not isinstance(value, dict):
        raise ValueError(f"{path} must hold a JSON object")
    return value
