"""A real Azurite Blob endpoint (the `azurite-blob` of `npm ci`) for the tests that need blob
storage: tests/platforms/test_azurite.py and the fake Azure ML service's datastore (tests/azureml/).

The `azurite` fixture in conftest.py starts one per test module.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
AZURITE = ROOT / "node_modules" / ".bin" / "azurite-blob"
# Azurite's documented development account (public, local only).
KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
START_SECONDS = 60


@contextmanager
def azurite_blob(workdir: Path) -> Iterator[str]:
    """Azurite on a free loopback port, its data in `workdir`; yields its connection string and
    kills it after. Fails the test if Azurite is missing or does not start."""
    if not AZURITE.exists() or shutil.which("node") is None:
        pytest.fail("Azurite is not installed: run `make test` (it runs npm ci)")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [
            str(AZURITE),
            "--blobHost",
            "127.0.0.1",
            "--blobPort",
            str(port),
            "--location",
            str(workdir),
            "--silent",
            "--skipApiVersionCheck",
            "--loose",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    connection = (
        f"DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey={KEY};"
        f"BlobEndpoint=http://127.0.0.1:{port}/devstoreaccount1;"
    )
    deadline = time.monotonic() + START_SECONDS
    try:
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    pytest.fail("Azurite did not start")
                time.sleep(0.3)
        yield connection
    finally:
        proc.kill()  # Azurite drains connections for a long time after SIGTERM
        proc.wait(30)
