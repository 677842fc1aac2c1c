"""What reading Azure ML's data collector output costs as it grows: time and peak traced memory
of one day's window read from Blob storage (Azurite, started here; `npm ci` installs it).

    python benchmarks/monitor_azure.py --sizes 12000 24000 48000

For each size N, uploads N requests of one deployment, spread over 24 hour folders, as the
collector lays them out (an inputs line and an outputs line each, tasks/monitor_azure.py), then
reads the day with `AzureCollected.records`: the joined requests, as `tunegate monitor` with
monitor.source azureml reads them. Prints a row a size: seconds, microseconds a request and the
peak memory Python allocated while reading (tracemalloc, which also slows the reading). Reading
is one hour at a time, so the peak follows the busiest hour, not the window. Never run in CI.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
import tracemalloc
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
START = datetime(2026, 11, 1, tzinfo=UTC)
CONTEXT = "The parcel left the depot on Monday and reached the sorting centre on Tuesday. " * 4


def _upload(container: object, prefix: str, n: int) -> None:
    per_hour = n // 24
    for hour in range(24):
        at = START + timedelta(hours=hour)
        lines: dict[str, list[str]] = {"model_inputs": [], "model_outputs": []}
        for i in range(per_hour):
            base = {
                "specversion": "1.0",
                "time": (at + timedelta(seconds=i % 3600)).strftime("%Y-%m-%dT%H:%M:%SZ"),
                "correlationid": uuid.uuid4().hex,
                "modelversion": "bench:1",
            }
            question = {"question": f"where is parcel {i}?", "context": CONTEXT}
            answer = {"answer": "Monday", "score": 0.8, "start": 10, "end": 16}
            for collection, row in (("model_inputs", question), ("model_outputs", answer)):
                event = {**base, "type": f"azureml.inference.{collection}", "data": [row]}
                lines[collection].append(json.dumps(event))
        for collection, found in lines.items():
            path = f"{prefix}/blue/{collection}/{at:%Y/%m/%d/%H}/instance.jsonl"
            container.upload_blob(path, "\n".join(found) + "\n")  # type: ignore[attr-defined]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[12000, 24000, 48000])
    args = parser.parse_args()
    from azure.storage.blob import BlobServiceClient

    from tasks.monitor_azure import AzureCollected
    from tests.azurite import azurite_blob

    with tempfile.TemporaryDirectory() as work, azurite_blob(Path(work)) as connection:
        container = BlobServiceClient.from_connection_string(connection).get_container_client(
            "bench"
        )
        container.create_container()
        for n in args.sizes:
            _upload(container, f"mdc{n}/endpoint", n)
            reader = AzureCollected(
                uri=f"az://bench/mdc{n}/endpoint",
                storage_options={"connection_string": connection},
                baseline_hours=0,
            )
            tracemalloc.start()
            started = time.perf_counter()
            read = sum(1 for _ in reader.records(START, START + timedelta(hours=24)))
            seconds = time.perf_counter() - started
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
            print(
                f"{n:>7} requests: {read} read in {seconds:.1f} s "
                f"({seconds / read * 1e6:.0f} us a request), peak {peak / 1e6:.1f} MB, "
                f"malformed {reader.counts.malformed}"
            )


if __name__ == "__main__":
    main()
