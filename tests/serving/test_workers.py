"""Scoring processes: a deployment with `workers` > 1 answers from its own processes, stops them
when it goes, survives a worker's death, and refuses a model no worker can load."""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from platforms.endpoint import LocalEndpointBackend
from serving.client import EndpointClient, RunningEndpoint
from serving.workers import ProcessScorer, WorkerDied

TICKETS = [
    {
        "question": "Which city did the order leave from?",
        "context": f"Order {i} left the warehouse in {city} and arrived after {i + 2} days.",
    }
    for i, city in enumerate(["Porto", "Lyon", "Graz", "Turku", "Cork", "Bari", "Gent", "Brno"])
]


def _scoring_processes() -> set[int]:
    return {
        p.pid
        for p in multiprocessing.active_children()
        if p.name.startswith("tunegate-scoring") and p.pid is not None
    }


@pytest.mark.slow
def test_a_deployment_with_workers_scores_in_its_own_processes(
    client: EndpointClient, running: RunningEndpoint, qa_model_dir: Path
) -> None:
    before = _scoring_processes()
    rollout = LocalEndpointBackend(running.url, running.settings.key_file, workers=2)
    rollout.deploy("procs", str(qa_model_dir), "qa:3")  # as a rollout with rollout.workers=2 does
    try:
        started = _scoring_processes() - before
        assert len(started) == 2  # the server runs in this process: its workers are our children
        (info,) = [d for d in client.status().deployments if d.name == "procs"]
        assert info.workers == 2
        with ThreadPoolExecutor(8) as pool:  # concurrent: batched, both workers busy
            bodies = list(pool.map(lambda t: client.score(t, "procs").body, TICKETS * 3))
        for ticket, body in zip(TICKETS * 3, bodies, strict=True):  # nobody got another's answer
            assert ticket["context"][body["start"] : body["end"]] == body["answer"] != ""
        in_server = [client.score(t, "blue").body["answer"] for t in TICKETS]
        one_by_one = [client.score(t, "procs").body["answer"] for t in TICKETS]
        assert one_by_one == in_server  # the same model answers alike in either place
        assert client.metrics().deployments["procs"].model_calls < len(TICKETS) * 4
    finally:
        client.delete_deployment("procs")
    assert not started & _scoring_processes()  # deleting the deployment stopped them


@pytest.mark.slow
def test_a_dead_scoring_process_fails_its_batch_and_is_replaced(qa_model_dir: Path) -> None:
    scorer = ProcessScorer(qa_model_dir, workers=1)
    try:
        assert scorer.score(TICKETS[:2])[0]["answer"]
        (pid,) = scorer.pids()
        assert pid is not None
        os.kill(pid, signal.SIGKILL)
        with pytest.raises(WorkerDied, match=f"pid {pid}.*restarted, send the request again"):
            scorer.score(TICKETS[:2])
        answers = scorer.score(TICKETS[:2])  # a fresh process loaded the model and answers
        assert [a["answer"] for a in answers] and scorer.pids() != [pid]
    finally:
        scorer.close()
    assert not _scoring_processes()


@pytest.mark.slow
def test_a_model_no_worker_can_load_is_refused_with_the_reason(tmp_path: Path) -> None:
    (tmp_path / "model_info.json").write_text(
        json.dumps({"task": "extractive-qa", "base_model": "x", "adapter": False})
    )  # model info, but no weights or tokenizer
    with pytest.raises(ValueError, match=f"cannot load {tmp_path} in a scoring process: .*Error"):
        ProcessScorer(tmp_path, workers=2)
    assert not _scoring_processes()  # none left behind
