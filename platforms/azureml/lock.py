"""The locks of the Azure ML environments: every package each image installs, with its hash.

`python -m platforms.azureml.lock` (network: PyPI) resolves each environment's packages at
constraints.txt's pins (`environment.pins`), with the rest of constraints.txt as pip's
constraints (`shared_pins.constraint_lines`: every package the image shares with this machine
at this machine's version, the inference server's own pins excepted), for the image's platform, linux x86_64 with glibc
2.35 (the Ubuntu 22.04 base) and CPython 3.11, wheels only, with pip's resolver
(`pip install --dry-run --report`, nothing installed), and writes `locks/<environment>.txt`: one
`name==version --hash=sha256:...` per package, the CUDA wheels torch pulls (nvidia-*, triton)
included. The Dockerfile installs that file with `--require-hashes --no-deps` and runs
`pip check`, so the image holds exactly the locked files, or its build fails.

A pinned package published only as a source archive (deepspeed, rouge-score) is locked at its
sdist's hash; its dependencies come from its metadata (pip builds it here, `--no-deps`) and are
resolved with the rest. Each lock's header keeps a hash of its inputs (the pins): a test says
which lock is stale when constraints.txt changes (run this again). Offline, nothing here runs.
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from packaging.requirements import Requirement

from platforms.azureml.environment import LOCKS, SERVING, SERVING_GPU, TRAINING, EnvSpec, normalize
from platforms.azureml.environment import pins as top_level_pins
from platforms.azureml.shared_pins import constraint_lines, drift

INDEX = "https://pypi.org/simple"
GLIBC = 35  # Ubuntu 22.04, the base image's
PLATFORM = [
    *(f"--platform=manylinux_2_{minor}_x86_64" for minor in range(GLIBC, 16, -1)),
    "--platform=manylinux2014_x86_64",
    "--python-version=3.11",
    "--implementation=cp",
    *("--abi=cp311", "--abi=abi3", "--abi=none"),
    "--only-binary=:all:",
]
NO_WHEEL = re.compile(r"No matching distribution found for ([A-Za-z0-9_.\-]+)==")


def inputs_hash(pins: list[str]) -> str:
    """What a lock was resolved from, as a short hash (its header's `inputs`)."""
    return hashlib.sha256("\n".join(sorted(pins)).encode()).hexdigest()[:16]


def _pip(args: list[str], report: Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "pip", "--isolated", "install", "--dry-run"]
    command += ["--ignore-installed", "--index-url", INDEX, "--report", str(report), *args]
    return subprocess.run(command, capture_output=True, text=True, check=False)


def _sdist(pin: str, tmp: Path) -> tuple[dict, list[str]]:
    """(report entry, runtime requirements) of a package published only as a source archive."""
    report = tmp / "sdist.json"
    done = _pip(["--no-deps", pin], report)
    if done.returncode:
        raise RuntimeError(f"pip could not read {pin}:\n{done.stderr[-2000:]}")
    [entry] = json.loads(report.read_text())["install"]
    needs = []
    for line in entry["metadata"].get("requires_dist", []):
        requirement = Requirement(line)
        if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
            requirement.marker = None
            needs.append(str(requirement))
    return entry, needs


def resolve(pins: list[str], constraints: Sequence[str] = ()) -> list[dict]:
    """Every package `pins` install on the image's platform, each package `constraints` names
    at its version there: pip's report entries."""
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        wanted, sdists = list(pins), []
        # the pins themselves are exact requirements (a pinned sdist must fail as "no wheel")
        named = {normalize(p.split("==")[0]) for p in pins}
        bound = tmp / "constraints.txt"
        bound.write_text(
            "".join(f"{c}\n" for c in constraints if normalize(c.split("==")[0]) not in named)
        )
        while True:
            report = tmp / "report.json"
            target = ["--target", str(tmp / "target"), "--constraint", str(bound)]
            done = _pip([*PLATFORM, *target, *wanted], report)
            if done.returncode == 0:
                return [*json.loads(report.read_text())["install"], *sdists]
            missing = NO_WHEEL.search(done.stderr)
            pin = next(
                (
                    p
                    for p in wanted
                    if missing and normalize(p.split("==")[0]) == normalize(missing[1])
                ),
                None,
            )
            if pin is None:  # not a pinned sdist-only package: a real conflict
                raise RuntimeError(f"no resolution for {pins}:\n{done.stderr[-3000:]}")
            entry, needs = _sdist(pin, tmp)
            sdists.append(entry)
            wanted = [p for p in wanted if p != pin] + needs


def lock_text(spec: EnvSpec, entries: list[dict], pins: list[str]) -> str:
    lines = [
        f"# The {spec.name} environment's every package (python -m platforms.azureml.lock):",
        "# linux x86_64, glibc 2.35, CPython 3.11, resolved by pip from PyPI.",
        f"# inputs: {inputs_hash(pins)}",
    ]
    for entry in sorted(entries, key=lambda e: normalize(e["metadata"]["name"])):
        name, version = entry["metadata"]["name"], entry["metadata"]["version"]
        sha = entry["download_info"]["archive_info"]["hashes"]["sha256"]
        lines.append(f"{normalize(name)}=={version} --hash=sha256:{sha}")
    return "\n".join(lines) + "\n"


def main(specs: tuple[EnvSpec, ...] = (TRAINING, SERVING, SERVING_GPU)) -> None:
    LOCKS.mkdir(exist_ok=True)
    for spec in specs:
        pins = top_level_pins(packages=spec.packages)
        entries = resolve(pins, constraint_lines(spec))
        text = lock_text(spec, entries, pins)
        differs = drift(spec, text)
        if differs:  # e.g. a package the image needs that constraints.txt does not pin
            raise SystemExit(
                f"{spec.name} would not agree with constraints.txt:\n" + "\n".join(differs)
            )
        (LOCKS / f"{spec.name}.txt").write_text(text)
        print(f"{spec.name}: {len(entries)} packages")


if __name__ == "__main__":
    main()
