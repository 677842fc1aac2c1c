"""One set of versions: every package an Azure ML image shares with constraints.txt (what this
machine's tests ran on) is at constraints.txt's version, but for the exceptions listed, with
their reasons, in platforms/azureml/shared_pins.py."""

from __future__ import annotations

import re

import pytest

from platforms.azureml.environment import SERVING, SERVING_GPU, TRAINING, EnvSpec, lock_file
from platforms.azureml.shared_pins import IMAGE_ONLY, SERVER_PINS, drift, excepted

SPECS = [TRAINING, SERVING, SERVING_GPU]
IDS = ["training", "serving", "serving-gpu"]


def _locked(spec: EnvSpec) -> dict[str, str]:
    return dict(re.findall(r"^([a-z0-9-]+)==(\S+)", lock_file(spec).read_text(), re.MULTILINE))


@pytest.mark.parametrize("spec", SPECS, ids=IDS)
def test_every_package_an_image_shares_with_constraints_is_at_its_version(spec: EnvSpec) -> None:
    differs = drift(spec, lock_file(spec).read_text())
    assert not differs, (
        f"{lock_file(spec).name} disagrees with constraints.txt (run python -m "
        "platforms.azureml.lock, or list a justified exception in shared_pins.py):\n"
        + "\n".join(differs)
    )


def test_a_drifted_version_is_found() -> None:
    """What the locks held before they were resolved against constraints.txt (pandas 3.1.1 and
    fastapi 0.165.0 where this machine has 2.3.3 and 0.154.0) is drift, named per package."""
    text = lock_file(TRAINING).read_text()
    text = re.sub(r"^pandas==\S+", "pandas==3.1.1", text, flags=re.MULTILINE)
    text = re.sub(r"^fastapi==\S+", "fastapi==0.165.0", text, flags=re.MULTILINE)
    text += "left-pad==1.0 --hash=sha256:" + "0" * 64 + "\n"
    assert drift(TRAINING, text) == [
        "fastapi: 0.165.0 in the lock, 0.154.0 in constraints.txt",
        "left-pad: 1.0 in the lock, not in constraints.txt",
        "pandas: 3.1.1 in the lock, 2.3.3 in constraints.txt",
    ]
    # the inference server's pins are exceptions in the serving images only
    pydantic = re.sub(
        r"^pydantic==\S+", "pydantic==2.12.5", lock_file(TRAINING).read_text(), flags=re.M
    )
    assert drift(TRAINING, pydantic) == ["pydantic: 2.12.5 in the lock, 2.14.3 in constraints.txt"]
    assert not excepted(TRAINING) and excepted(SERVING) == SERVER_PINS


@pytest.mark.parametrize("spec", [SERVING, SERVING_GPU], ids=IDS[1:])
def test_each_server_exception_is_needed(spec: EnvSpec) -> None:
    """An exception that no longer differs is taken off the list (it would hide future drift)."""
    from tests.azureml.test_environment import _constraints

    locked, constraints = _locked(spec), _constraints()
    for name in SERVER_PINS:
        assert locked[name] != constraints[name], f"{name} agrees now: drop it from SERVER_PINS"


def test_each_image_only_entry_is_in_an_image() -> None:
    names = set().union(*(_locked(spec) for spec in SPECS))
    for pattern in IMAGE_ONLY:
        assert any(re.fullmatch(pattern, n) for n in names), f"{pattern}: in no image"
