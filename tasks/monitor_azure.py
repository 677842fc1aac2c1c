"""What Azure ML's data collector wrote for a managed online endpoint, read back as the records
the local collector writes (`serving/collect.py`), for the monitor (tasks/monitor.py).

The layout (Microsoft Learn, "Collect production data from models for real-time inferencing",
section "Store collected data in Blob Storage"): under the collector's root, by default
`azureml://datastores/workspaceblobstore/paths/modelDataCollector`,
`{endpoint}/{deployment}/{collection}/{yyyy}/{MM}/{dd}/{HH}/{instance_id}.jsonl` (the
collector's default rolling rate, an hour), one JSON object a line: `specversion`, `id`,
`source`, `type` (`azureml.inference.model_inputs` ...), `datacontenttype`, `time` (ISO 8601, to
the second), `data` (the logged DataFrame's rows, `orient="records"`), `correlationid`,
`xrequestid`, `modelversion`, `collectdatatype`, `agent`, `contentrange`; a payload over 4 MB is
kept elsewhere and its line's `data` is that file's URL (`datainblob`).

What tunegate's scoring script logs there (`serving.collect.AzureMLSink`): the request's records
in `model_inputs` and its answers in `model_outputs`, both masked first, under one correlation
id (the exchange's id) and one time (when it was answered), with `modelversion` the deployment's
version label (`name:version`), and how the request was routed in the correlation id
(`serving.collect.correlation_id`: `named-<id>` for a request that named its deployment, such as
a rollout's smoke and replayed requests; read back as the record's `routed`). A request with
inputs and no outputs got no answer: refused (400) when it had no readable record, failed (500)
otherwise. Latency and error text are not collected there.

Reading a window [since, until) lists only the hour folders it covers (and those of
`baseline_hours` before it, for the score reference), hour by hour, joins each hour's inputs and
outputs by correlation id (an input whose output is not in its hour waits one more hour), and
accounts for every line in `AzureReadCounts`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from serving.collect import INPUTS, OUTPUTS, routed_of

HOUR = timedelta(hours=1)


@dataclass
class AzureReadCounts:
    """Every line read, by what became of it."""

    files: int = 0
    lines: int = 0
    requests: int = 0  # joined records handed on (every version's)
    malformed: int = 0  # not a JSON object, no `data` list, no correlation id or time
    in_blob: int = 0  # payloads over 4 MB kept elsewhere by the collector: not read
    unanswered: int = 0  # requests with inputs and no outputs (refused or failed)
    unmatched_outputs: int = 0  # outputs lines whose inputs were not in the hours read
    unpaired: int = 0  # requests whose input and output rows differ in number
    unversioned: int = 0  # requests without a `name:version` label (not this monitor's)

    def as_dict(self) -> dict[str, int]:
        return dict(vars(self))


@dataclass
class AzureCollected:
    """One endpoint's collected traffic on Blob storage: `records(since, until)` yields what
    `serving.collect.read_records` yields for a local endpoint."""

    uri: str  # az://<container>/<path>/<endpoint>
    storage_options: dict[str, Any]
    deployments: tuple[str, ...] = ()
    baseline_hours: float = 48.0
    counts: AzureReadCounts = field(default_factory=AzureReadCounts)
    source: str = "azureml"

    def read_counts(self) -> dict[str, int]:
        """What the last `records` found (every line accounted for)."""
        return self.counts.as_dict()

    def records(self, since: datetime, until: datetime) -> Iterator[dict[str, Any]]:
        """The records of the hours from `baseline_hours` before `since` to `until`, an hour at
        a time, in time order within each."""
        import fsspec

        self.counts = AzureReadCounts()
        fs, root = fsspec.core.url_to_fs(self.uri, **self.storage_options)
        fs.invalidate_cache()  # a long-lived worker lists new hours each run
        deployments = self.deployments or tuple(_folders(fs, root))
        pending: dict[tuple[str, str], _Request] = {}
        for hour in hours(since - timedelta(hours=self.baseline_hours), until):
            stamp = hour.strftime("%Y/%m/%d/%H")
            for deployment in deployments:
                for collection in (INPUTS, OUTPUTS):
                    for line in _lines(
                        fs, f"{root}/{deployment}/{collection}/{stamp}", self.counts
                    ):
                        self._take(pending, deployment, collection, line, hour)
            yield from self._ready(pending, hour)
        yield from self._ready(pending, None)

    def _take(
        self,
        pending: dict[tuple[str, str], _Request],
        deployment: str,
        collection: str,
        line: bytes,
        hour: datetime,
    ) -> None:
        event = parse_event(line)
        if event is None:
            self.counts.malformed += 1
            return
        if event.in_blob:
            self.counts.in_blob += 1
            return
        request = pending.setdefault((deployment, event.correlation), _Request(hour))
        (request.inputs if collection == INPUTS else request.outputs).append(event)

    def _ready(
        self, pending: dict[tuple[str, str], _Request], hour: datetime | None
    ) -> Iterator[dict[str, Any]]:
        """The joined requests of `pending`, and those that waited an hour for their other half
        (all of them when `hour` is None: nothing more is read)."""
        done = [
            key
            for key, r in pending.items()
            if hour is None or (r.inputs and r.outputs) or r.hour < hour
        ]
        out = []
        for key in done:
            request = pending.pop(key)
            if not request.inputs:
                self.counts.unmatched_outputs += len(request.outputs)
                continue
            out.append(self._record(key[0], key[1], request))
        yield from sorted(out, key=lambda r: r["time"])

    def _record(self, deployment: str, correlation: str, request: _Request) -> dict[str, Any]:
        first = min(request.inputs, key=lambda e: e.time)
        inputs = [row for e in request.inputs for row in e.rows]
        outputs = [row for e in request.outputs for row in e.rows] if request.outputs else None
        if outputs is None:
            self.counts.unanswered += 1
            status = 400 if not inputs else 500
        else:
            status = 200
            if len(outputs) != len(inputs):
                self.counts.unpaired += 1
        version = first.version if first.version and ":" in first.version else None
        self.counts.unversioned += version is None
        self.counts.requests += 1
        return {
            "deployment": deployment,
            "version": version,
            "status": status,
            "latency_ms": None,
            "inputs": inputs,
            "outputs": outputs,
            "error": None,
            "time": first.time.isoformat(),
            "id": correlation,
            "routed": routed_of(correlation),
        }


@dataclass
class _Request:
    hour: datetime  # the hour its first line was read in
    inputs: list[_Event] = field(default_factory=list)
    outputs: list[_Event] = field(default_factory=list)


@dataclass(frozen=True)
class _Event:
    correlation: str
    time: datetime
    rows: list[Any]
    version: str | None
    in_blob: bool = False


def parse_event(line: bytes) -> _Event | None:
    """One collector line, or None when it is not one (a torn or foreign line)."""
    try:
        found = json.loads(line)
    except ValueError:
        return None
    if not isinstance(found, dict):
        return None
    correlation = found.get("correlationid")
    at = _time(found.get("time"))
    if not isinstance(correlation, str) or not correlation or at is None:
        return None
    version = found.get("modelversion")
    version = version if isinstance(version, str) else None
    if str(found.get("datainblob", "")).lower() == "true":
        return _Event(correlation, at, [], version, in_blob=True)
    rows = found.get("data")
    if not isinstance(rows, list):
        return None
    return _Event(correlation, at, rows, version)


def _time(value: Any) -> datetime | None:
    try:
        if isinstance(value, int | float) and not isinstance(value, bool):
            return datetime.fromtimestamp(value, UTC)
        found = datetime.fromisoformat(str(value))
    except (ValueError, OverflowError, OSError):
        return None
    return found.astimezone(UTC) if found.tzinfo else found.replace(tzinfo=UTC)


def hours(start: datetime, end: datetime) -> list[datetime]:
    """The hour folders [start, end) touches, oldest first."""
    if start >= end:
        return []
    hour = start.astimezone(UTC).replace(minute=0, second=0, microsecond=0)
    found = []
    while hour < end:
        found.append(hour)
        hour += HOUR
    return found


def _folders(fs: Any, path: str) -> list[str]:
    try:
        entries = fs.ls(path, detail=True)
    except FileNotFoundError:
        return []
    return sorted(
        e["name"].rstrip("/").rsplit("/", 1)[-1] for e in entries if e["type"] == "directory"
    )


def _lines(fs: Any, folder: str, counts: AzureReadCounts) -> Iterator[bytes]:
    try:
        files = sorted(fs.ls(folder, detail=False))
    except FileNotFoundError:
        return
    for path in files:
        if not path.endswith(".jsonl"):
            continue
        counts.files += 1
        with fs.open(path, "rb") as f:
            for line in f:
                if line.strip():
                    counts.lines += 1
                    yield line
