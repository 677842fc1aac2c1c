"""`tunegate endpoint serve|status|invoke|traffic`: the local online endpoints (model serving, not
the Prefect deployments of `tunegate deployments`): serve one, show their status, send a request,
summarise the traffic they collected (`list` and `stop`, their processes: cli/endpoint_local.py).

Each registered model has its own local endpoint, `{store}/endpoints/{model}` (its state folder,
port and keys): `--model` picks one; `status` without it shows every endpoint of the store."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from cli.common import console, fail, print_table

endpoint_app = typer.Typer(
    help="The local online endpoint (Azure ML managed online endpoint shape): serve, status, invoke.",
    no_args_is_help=True,
)

DEFAULT_STORE = Path(".tunegate")
MASKER = "screening.outputs:traffic_masker"  # what masks the collected traffic (serving.collect)
LOOPBACK = ("127.0.0.1", "localhost", "::1")

StateDirOpt = Annotated[
    Path | None,
    typer.Option(
        help="Where the endpoint keeps its deployments and traffic (and key, by default). "
        "Default: <store>/endpoints/<model>."
    ),
]
StoreOpt = Annotated[
    Path, typer.Option(help="The local store whose endpoints (one per model) are meant.")
]
ModelOpt = Annotated[
    str | None,
    typer.Option(
        help="The registered model whose endpoint is meant (each model has its own). Default: "
        "the store's only endpoint; status shows every one."
    ),
]
KeyFileOpt = Annotated[
    Path | None,
    typer.Option(help="The endpoint key file (mode 0600). Default: <state-dir>/key."),
]
UrlOpt = Annotated[
    str | None,
    typer.Option(
        envvar="TUNEGATE_ENDPOINT_URL",
        help="The endpoint's base URL. Default: the endpoint a rollout started for --state-dir "
        "(its server.json), else http://127.0.0.1:8000.",
    ),
]


@endpoint_app.command()
def serve(
    host: Annotated[
        str, typer.Option(help="Interface to listen on; keep it loopback.")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="TCP port.")] = 8000,
    key_file: KeyFileOpt = None,
    state_dir: StateDirOpt = None,
    store: StoreOpt = DEFAULT_STORE,
    model: ModelOpt = None,
    max_body_bytes: Annotated[int, typer.Option(help="Larger request bodies get 413.")] = 1024
    * 1024,
    max_batch_size: Annotated[int, typer.Option(help="Requests per model call, at most.")] = 8,
    max_wait_ms: Annotated[float, typer.Option(help="How long a batch waits to fill.")] = 5.0,
    max_input_chars: Annotated[
        int, typer.Option(help="Characters the model reads per record; more get 413.")
    ] = 20_000,
    max_input_tokens: Annotated[
        int, typer.Option(help="Tokens the model reads per record; more get 413.")
    ] = 4096,
    max_request_records: Annotated[
        int, typer.Option(help="Records one request may hold ({'inputs': [...]}); more get 413.")
    ] = 5_000,
    max_request_tokens: Annotated[
        int, typer.Option(help="Tokens the model reads for one request's records; more get 413.")
    ] = 300_000,
    score_timeout: Annotated[
        float, typer.Option(help="Seconds before an unanswered request gets 504.")
    ] = 60.0,
    collect: Annotated[
        bool,
        typer.Option(
            envvar="TUNEGATE_COLLECT",
            help="Write every scoring request and its answer, masked by the screen's "
            "recognizers, to <state-dir>/collected/ (`tunegate endpoint traffic` reads them). "
            "TUNEGATE_COLLECT=0 turns it off, also for the endpoints a rollout starts.",
        ),
    ] = True,
    collect_max_mb: Annotated[
        float, typer.Option(help="A collected file is rotated at this size (3 kept).")
    ] = 8.0,
) -> None:
    """Start the endpoint in the foreground (Ctrl-C stops it).

    Deployments and traffic are kept in --state-dir and come back on restart. Every route but
    /health/live and /health/ready needs 'Authorization: Bearer <key>': the scoring key in
    --key-file may only POST /score, the admin key beside it (admin-<name>) may do everything
    (both generated on first start, mode 0600).
    """
    from serving.server import run_server
    from serving.settings import ServerSettings

    if state_dir is None:
        if model is None:
            fail("give --model (its endpoint's folder is <store>/endpoints/<model>) or --state-dir")
        state_dir = store / "endpoints" / model
    key_file = key_file or state_dir / "key"
    if host not in LOOPBACK:
        console.print(f"[yellow]listening on {host}: reachable from other machines[/yellow]")
    settings = ServerSettings(
        key_file=key_file,
        state_dir=state_dir,
        max_body_bytes=max_body_bytes,
        max_batch_size=max_batch_size,
        max_wait_ms=max_wait_ms,
        max_input_chars=max_input_chars,
        max_input_tokens=max_input_tokens,
        max_request_records=max_request_records,
        max_request_tokens=max_request_tokens,
        score_timeout_s=score_timeout,
        collect=collect,
        collect_max_bytes=max(4096, int(collect_max_mb * 1024 * 1024)),
    )
    console.print(f"endpoint http://{host}:{port}  key file {key_file}  state {state_dir}")
    try:
        run_server(settings, host, port, MASKER)
    except ValueError as exc:
        fail(str(exc))


@endpoint_app.command()
def status(
    url: UrlOpt = None,
    key_file: KeyFileOpt = None,
    state_dir: StateDirOpt = None,
    store: StoreOpt = DEFAULT_STORE,
    model: ModelOpt = None,
) -> None:
    """Deployments, versions, traffic, mirror and metrics (requests, errors, latency) as a table
    per endpoint: the model's, or every model's of the store (with the admin key, kept beside
    the scoring key as admin-<name>)."""
    for name, where, key in _targets(url, key_file, state_dir, store, model):
        _status(name, where, key)


def _status(model: str | None, url: str, key_file: Path) -> None:
    from serving.auth import admin_key_file

    with _client(url, admin_key_file(key_file)) as client:
        current = _call(lambda: client.status())
        metrics = _call(lambda: client.metrics()).deployments
    tasks = sorted({d.task for d in current.deployments if d.task})
    title = f"endpoint {url}" + (f" (model {model})" if model else "")
    table = Table(title=title + (f", {', '.join(tasks)}" if tasks else ""))
    # what fits 80 columns: the mirror's share beside the traffic, mirrored requests and errors
    # beside the requests (the task is the model's: in the title)
    for column in ("deployment", "version", "workers", "traffic", "requests", "p50/p95/p99 ms"):
        table.add_column(column)
    for d in current.deployments:
        m = metrics.get(d.name)
        requests, latency = "", ""
        if m is not None:
            requests = f"{m.requests}, {m.errors} errors"
            requests += f", {m.mirrored} mirrored" if m.mirrored else ""
            latency = "/".join(_ms(m.latency_ms.get(p)) for p in ("p50", "p95", "p99"))
        mirror = f" + {d.mirror_traffic}% mirror" if d.mirror_traffic else ""
        table.add_row(
            d.name + (" (fault drill)" if d.fault else ""),
            d.version or "",
            str(d.workers),
            f"{d.traffic}%{mirror}",
            requests,
            latency,
        )
    for name in current.creating:
        table.add_row(name, "(creating)", *[""] * 4)
    for name in current.failed:
        table.add_row(name, "(failed)", *[""] * 4)
    print_table(table)
    for name, why in current.failed.items():
        console.print(f"[red]{name}: {why}[/red]")


@endpoint_app.command()
def invoke(
    request: Annotated[
        str,
        typer.Argument(help="The JSON request, @file to read it from a file, or - for stdin."),
    ],
    url: UrlOpt = None,
    key_file: KeyFileOpt = None,
    state_dir: StateDirOpt = None,
    store: StoreOpt = DEFAULT_STORE,
    model: ModelOpt = None,
    deployment: Annotated[
        str | None, typer.Option(help="Send to this deployment regardless of traffic.")
    ] = None,
) -> None:
    """Send one scoring request and print the JSON response.

    Example: tunegate endpoint invoke '{"question": "Who?", "context": "Ana wrote it."}'
    """
    text = _request_text(request)
    try:
        payload = json.loads(text)
    except json.JSONDecodeError as exc:
        fail(f"the request is not JSON: {exc}")
    targets = _targets(url, key_file, state_dir, store, model)
    if len(targets) > 1:
        names = ", ".join(str(name) for name, _, _ in targets)
        fail(f"{store} has an endpoint per model ({names}): pass --model")
    _, url, key = targets[0]
    with _client(url, key) as client:
        result = _call(lambda: client.score(payload, deployment))
    console.print(f"answered by {result.deployment}")
    print(json.dumps(result.body, indent=2))


@endpoint_app.command()
def traffic(
    state_dir: StateDirOpt = None,
    store: StoreOpt = DEFAULT_STORE,
    model: ModelOpt = None,
    examples: Annotated[
        int, typer.Option(help="The latest masked requests shown per deployment.")
    ] = 3,
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
) -> None:
    """What each endpoint collected (no server needed): per deployment and version, requests,
    refusals (4xx), errors (5xx), latency p50/p95/p99 of the answered ones, and the latest
    requests with their answers, masked as they were written."""
    from dataclasses import asdict

    from serving.collect import COLLECTED, read_records, summarise

    if state_dir is not None:
        folders = {model or str(state_dir): state_dir}
    else:
        from platforms.endpoint import local_endpoints

        folders = local_endpoints(store)
        if model is not None:
            if model not in folders:
                fail(
                    f"no local endpoint of model {model!r} in {store} (endpoints: "
                    f"{', '.join(folders) or 'none yet'})"
                )
            folders = {model: folders[model]}
    if not folders:
        fail(f"no local endpoint in {store}: a rollout starts one per model")
    out: dict[str, Any] = {}
    for name, folder in folders.items():
        summaries = summarise(read_records(folder / COLLECTED), examples)
        out[name] = [asdict(s) for s in summaries]
        if as_json:
            continue
        table = Table(title=f"traffic of {name} ({folder / COLLECTED})")
        for column in (
            "deployment",
            "version",
            "requests",
            "4xx",
            "5xx",
            "p50/p95/p99 ms",
            "from",
            "to",
        ):
            table.add_column(column)
        for s in summaries:
            table.add_row(
                s.deployment,
                s.version or "",
                str(s.requests),
                str(s.client_errors),
                str(s.errors),
                "/".join(_ms(s.latency_ms.get(p)) for p in ("p50", "p95", "p99")),
                (s.first or "")[:19],
                (s.last or "")[:19],
            )
        print_table(table)
        if not summaries:
            console.print("nothing collected yet")
        for s in summaries:
            for r in s.examples:
                shown = {k: r.get(k) for k in ("status", "inputs", "outputs", "error") if r.get(k)}
                text = json.dumps(shown, ensure_ascii=False)
                console.print(
                    f"{s.deployment} {r.get('time', '')[:19]} " + text[:400],
                    markup=False,
                    highlight=False,
                )
    if as_json:
        print(json.dumps(out, indent=2, ensure_ascii=False))


def _request_text(request: str) -> str:
    if request == "-":
        return sys.stdin.read()
    if request.startswith("@"):
        path = Path(request[1:])
        if not path.is_file():
            fail(f"no request file {path}")
        return path.read_text()
    return request


def _targets(
    url: str | None, key_file: Path | None, state_dir: Path | None, store: Path, model: str | None
) -> list[tuple[str | None, str, Path]]:
    """(model, url, scoring key file) of each endpoint meant: the --state-dir's, the one at
    --url with --key-file, or the store's endpoints (--model's, else every one)."""
    if state_dir is not None:
        return [(model, _url(url, state_dir), key_file or state_dir / "key")]
    if url and key_file:
        return [(model, url, key_file)]
    from platforms.endpoint import local_endpoints

    found = local_endpoints(store)
    if model is not None:
        if model not in found:
            known = ", ".join(found) or "none yet"
            fail(
                f"no local endpoint of model {model!r} in {store} (endpoints: {known}); a "
                "rollout of the model starts it"
            )
        found = {model: found[model]}
    if not found:
        fail(
            f"no local endpoint in {store}: a rollout starts one per model "
            f"({store}/endpoints/<model>); or pass --url and --key-file"
        )
    return [(name, _url(url, d), key_file or d / "key") for name, d in found.items()]


def _url(url: str | None, state_dir: Path) -> str:
    """The URL given, or the one of the detached endpoint recorded in `state_dir`."""
    if url:
        return url
    record = state_dir / "server.json"
    if record.exists():
        return str(json.loads(record.read_text())["url"])
    return "http://127.0.0.1:8000"


def _client(url: str, key_file: Path) -> Any:
    from serving.auth import read_key
    from serving.client import EndpointClient

    try:
        return EndpointClient(url, read_key(key_file))
    except ValueError as exc:
        fail(str(exc))


def _call(fn: Any) -> Any:
    import httpx

    from serving.client import EndpointError

    try:
        return fn()
    except EndpointError as exc:
        fail(str(exc), 1)
    except httpx.TransportError as exc:
        fail(
            f"cannot reach the endpoint ({exc}): start one with `tunegate endpoint serve` "
            "or pass --url"
        )


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f}"
