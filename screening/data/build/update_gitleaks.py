"""Refresh the vendored gitleaks catalogue: `python screening/data/build/update_gitleaks.py v8.30.1`.

Downloads (at update time only; nothing is downloaded at run time) gitleaks' generated
`config/gitleaks.toml` and its LICENSE at a release tag, writes them beside this script with a
header naming the tag and commit, and loads the result with `screening.finders.credential_rules` so a rule
whose regex no longer translates fails here. Run tests/screening/test_credentials.py afterwards.
"""

from __future__ import annotations

import json
import sys
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]  # screening/data, where the built files go
RAW = "https://raw.githubusercontent.com/gitleaks/gitleaks/{ref}/{path}"
API = "https://api.github.com/repos/gitleaks/gitleaks/commits/{ref}"


def _get(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=60) as response:
        return response.read()


def main(tag: str) -> None:
    commit = json.loads(_get(API.format(ref=tag)))["sha"]
    config = _get(RAW.format(ref=commit, path="config/gitleaks.toml")).decode("utf-8")
    header = (
        f"# Vendored from https://github.com/gitleaks/gitleaks/blob/{tag}/config/gitleaks.toml\n"
        f"# source: gitleaks {tag} commit {commit}\n"
        "# MIT licence (Copyright (c) 2019 Zachary Rice): see gitleaks.LICENSE. "
        "Refresh with screening/data/build/update_gitleaks.py.\n"
    )
    (HERE / "gitleaks.toml").write_text(header + config, encoding="utf-8")
    (HERE / "gitleaks.LICENSE").write_bytes(_get(RAW.format(ref=commit, path="LICENSE")))
    sys.path.insert(0, str(HERE.parents[1]))  # the repository root
    from screening.finders.credential_rules import load_catalogue

    catalogue = load_catalogue(HERE / "gitleaks.toml")
    print(f"{catalogue.version}: {len(catalogue.rules)} rules, {len(catalogue.skipped)} left out")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "master")
