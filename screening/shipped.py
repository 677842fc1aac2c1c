"""The shipped data files of `screening/data/`, each read once per process."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent / "data"


@cache
def word_lists(name: str) -> dict[str, Any]:
    """A JSON file of `screening/data/` (word lists and regex tables by name), read once."""
    return json.loads((DATA / name).read_text(encoding="utf-8"))
