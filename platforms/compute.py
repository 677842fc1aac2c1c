"""Compute for the data stages: a Dask cluster, local by default or an existing scheduler.

One client per process is shared by every stage of a run (starting workers and loading the
screening model in each is the slow part, so it is done once). `map_partitions` runs a function
over items on the cluster with a progress bar and returns results in item order.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar, cast

import dask
from distributed import Client, LocalCluster, as_completed
from pydantic import BaseModel, ConfigDict, Field
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

T = TypeVar("T")
log = logging.getLogger(__name__)


class DaskConfig(BaseModel):
    """Where the data stages run: a LocalCluster on this machine, or an existing scheduler."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    address: str | None = Field(
        None,
        description="Scheduler address (tcp://host:8786) of an existing Dask cluster. "
        "Empty: start a LocalCluster on this machine.",
    )
    n_workers: int = Field(2, ge=1, le=256, description="LocalCluster worker processes.")
    threads_per_worker: int = Field(
        1, ge=1, le=64, description="Threads per LocalCluster worker (screening is CPU-bound)."
    )
    memory_limit: str = Field("4GiB", description="Memory limit per LocalCluster worker.")
    partition_rows: int = Field(
        1000, ge=10, le=1_000_000, description="Records per partition written by ingest."
    )


_clients: dict[DaskConfig, Client] = {}
# Dask settings for the LocalCluster's workers (an operator's cluster: set them on its workers,
# docs/stages.md). Dask's statistical profiler samples each worker's stack every 10 ms for the
# dashboard's profile page, which this cluster does not serve: it takes the GIL from the
# screening thread, 7% of the workers' CPU on the screen stage (2026-11-30, two workers).
WORKER_SETTINGS = {"distributed.worker.profile.enabled": False}


def shared_client(config: DaskConfig) -> Client:
    """The process-wide client for this config, started on first use and closed at exit."""
    client = _clients.get(config)
    if client is not None and client.status == "running":
        return client
    if config.address:
        log.info("connecting to Dask scheduler at %s", config.address)
        client = Client(config.address, timeout="30s")
    else:
        with _environment_kept(), dask.config.set(WORKER_SETTINGS):
            cluster = LocalCluster(
                n_workers=config.n_workers,
                threads_per_worker=config.threads_per_worker,
                memory_limit=config.memory_limit,
                processes=True,
                dashboard_address=None,
                # its HTTP server (health, metrics) on a free loopback port: on :8787, taken by
                # another cluster, Dask warns "Port 8787 is already in use" on the terminal
                scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
                silence_logs=logging.WARNING,
            )
        client = Client(cluster)
    atexit.register(_close_quietly, client, None if config.address else cluster)
    _clients[config] = client
    return client


def _close_quietly(client: Client, cluster: LocalCluster | None) -> None:
    """Close the client and the cluster we started at exit, without Dask's lines on the
    terminal after the run's own last words: its INFO lines of closing (18 of them:
    "Remove client", "Closing Nanny", "Lost all workers"), which reach the console through
    Prefect's handler, a `CommClosedError` traceback when a worker's stream closes first, or
    a worker slow to stop on a busy machine ("Worker process still alive after 4.0 seconds,
    killing"). Errors still show."""
    from distributed.utils import silence_logging_cmgr

    dask_log = logging.getLogger("distributed")
    level = dask_log.level
    dask_log.setLevel(logging.ERROR)
    try:
        with silence_logging_cmgr(logging.ERROR):
            client.close()
            if cluster is not None:
                cluster.close()
    finally:
        dask_log.setLevel(level)


@contextlib.contextmanager
def _environment_kept() -> Iterator[None]:
    """This process's environment as it was before the block, whatever the block set.

    Dask's nanny writes its workers' settings (`OMP_NUM_THREADS=1`, `MKL_NUM_THREADS=1`,
    `OPENBLAS_NUM_THREADS=1`, `PYTHONHASHSEED`, ...) into the *parent's* environment before
    spawning them. Everything this process started afterwards inherited them: the training
    subprocess and the evaluation ran torch on one thread, at half speed on 2 CPUs.
    """
    before = dict(os.environ)
    try:
        yield
    finally:
        for name in set(os.environ) - set(before):
            del os.environ[name]
        os.environ.update(before)


class _LazyClient:
    """Stands for the shared client of a config and starts it on first use, so a stage that
    finds its output already built (by hash) starts no cluster."""

    def __init__(self, config: DaskConfig) -> None:
        self._config = config

    def __getattr__(self, name: str) -> Any:
        return getattr(shared_client(self._config), name)


def lazy_client(config: DaskConfig) -> Client:
    """The shared client for `config`, started only when a stage really computes."""
    return cast(Client, _LazyClient(config))


def map_partitions(
    client: Client,
    fn: Callable[..., T],
    *iterables: Sequence[Any],
    description: str,
    records: Callable[[T], int] | None = None,
    total_records: int | None = None,
    **kwargs: Any,
) -> list[T]:
    """Run `fn(*items, **kwargs)` over zipped iterables on the cluster; results in order.

    Iterables may hold futures (they are resolved on the workers); kwargs are constants.
    Progress shows as a bar on a terminal, else as a line per partition done
    (`screen: partition 1/2 done, 265 of 530 records, 12.3 s`: `records` counts a result's
    records, `total_records` is all of them).

    A failing partition raises its own exception here after the others were cancelled, so an
    error is never swallowed and nothing half-written is published (stages commit afterwards).
    """
    if not iterables or not iterables[0]:
        return []
    futures = client.map(fn, *iterables, pure=False, **kwargs)
    index = {f.key: i for i, f in enumerate(futures)}
    results: list[Any] = [None] * len(futures)
    terminal = sys.stderr.isatty()
    if not terminal:  # what the wait until the first partition is for
        of = f" of {total_records} records" if total_records else ""
        workers = len(client.nthreads())
        log.info("%s: %d partitions%s on %d Dask workers", description, len(futures), of, workers)
    start, done, done_records = time.perf_counter(), 0, 0
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        disable=not terminal,
        transient=False,
    ) as progress:
        bar = progress.add_task(description, total=len(futures))
        for future in as_completed(futures):
            if future.status == "error":
                error, traceback = future.exception(), future.traceback()
                client.cancel(futures)
                raise error.with_traceback(traceback)
            result = future.result()
            results[index[future.key]] = result
            progress.advance(bar)
            done += 1
            if records is not None:
                done_records += records(result)
            if not terminal:  # the bar's line, once per partition
                log.info(
                    "%s",
                    partition_line(
                        description,
                        done,
                        len(futures),
                        done_records if records is not None else None,
                        total_records,
                        time.perf_counter() - start,
                    ),
                )
    if terminal:  # the bar's last state, in the run's logs (else each partition said it)
        log.info("%s: %d partitions done", description, len(futures))
    return results


def partition_line(
    description: str,
    done: int,
    total: int,
    records: int | None,
    total_records: int | None,
    seconds: float,
) -> str:
    """`screen: partition 1/2 done, 265 of 530 records, 12.3 s`."""
    line = f"{description}: partition {done}/{total} done"
    if records is not None:
        line += (
            f", {records} of {total_records} records" if total_records else f", {records} records"
        )
    return f"{line}, {seconds:.1f} s"
