"""The `watch-inbox` flow: new files in the nightly run's inbox become a Prefect event.

Each run lists the inputs of the retrain request it is given (the nightly deployment's:
`inbox/*.jsonl`, or a Blob container), and announces the files whose content the store has not
seen (tasks/inbox.py) as one `tunegate.data.arrived` event on the model's resource
(`tunegate.model.<name>`), with their URIs and hashes. The retrain deployment's trigger starts a
run from it, with the URIs as the run's inputs (flows/deployments.py). Its deployment runs it
every minute.
"""

from __future__ import annotations

from prefect import flow
from prefect.events import emit_event

from flows.config import RetrainRequest
from platforms.notify import model_resource
from tasks.inbox import Arrival, new_arrivals

DATA_ARRIVED = "tunegate.data.arrived"


@flow(name="watch-inbox", flow_run_name="watch-inbox", log_prints=True)
def watch_inbox(request: RetrainRequest = RetrainRequest()) -> list[Arrival]:  # noqa: B008
    """Announce the request's input files that hold content not seen before."""
    config = request.config()
    store = config.open_store()
    found = new_arrivals(store, list(config.ingest.inputs), config.azure, config.task.value)
    if found:
        model = config.registry.name_for(config.task.value)
        emit_event(
            event=DATA_ARRIVED,
            resource=model_resource(model),
            payload={
                "model": model,
                "uris": [a.uri for a in found],
                "sha256": [a.sha256 for a in found],
                "bytes": sum(a.bytes for a in found),
            },
        )
        print(
            f"watch-inbox: {len(found)} new file(s) for {model}: " + ", ".join(a.uri for a in found)
        )
    return found
