"""Build `.venv-serving`: Azure ML's inference server beside the scoring code's packages.

`python -m tests.azureml.serving_venv .venv-serving` (run by `make test`). The serving
environment (platforms/azureml/environment.py `SERVING`) installs azureml-inference-server-http
with torch, transformers and peft; the server pins pydantic~=2.12 and OpenTelemetry 1.33, older
than Prefect's in `.venv`, so it cannot live there. Installing torch again would take minutes,
so this venv holds the server and its own dependencies, and finds every other package of `.venv`
(constraints.txt's versions, what the serving environment pins) through links in one folder
added after its own site-packages. Left out of that folder: whatever the server's venv has
itself, the `azure` and `opentelemetry` namespace packages (their portions would mix versions),
`.pth` files and the editable tunegate (the server imports only the staged scoring code, as on
Azure ML).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NAMESPACES = {"azure", "opentelemetry"}


def server_requirement(constraints: Path = ROOT / "constraints.txt") -> str:
    for line in constraints.read_text().splitlines():
        if line.lower().startswith("azureml-inference-server-http=="):
            return line.strip()
    raise ValueError(f"{constraints} pins no azureml-inference-server-http")


def _site_packages(python: Path) -> Path:
    out = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    )
    return Path(out.stdout.strip())


def _top_level(name: str) -> str:
    """The import or distribution name an entry of site-packages stands for."""
    stem = name.split("-")[0] if name.endswith((".dist-info", ".egg-info")) else name
    return stem.removesuffix(".py").lower().replace("-", "_")


def build(venv: Path) -> None:
    shutil.rmtree(venv, ignore_errors=True)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", server_requirement()], check=True
    )
    own_site = _site_packages(python)
    own = {_top_level(p.name) for p in own_site.iterdir()}
    links = venv / "models-site"
    links.mkdir()
    for entry in Path(sysconfig.get_paths()["purelib"]).iterdir():
        top = _top_level(entry.name)
        if (
            top in own
            or top in NAMESPACES
            or entry.suffix == ".pth"
            or entry.name.startswith(("__editable__", "tunegate", "_distutils_hack"))
            or entry.name == "__pycache__"
        ):
            continue
        (links / entry.name).symlink_to(entry)
    (own_site / "tunegate-models.pth").write_text(str(links.resolve()) + "\n")


if __name__ == "__main__":
    build(Path(sys.argv[1]).resolve())
