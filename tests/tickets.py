"""The flow tests' input: support tickets as extractive-QA records, one broken line at the end.

A plain helper module (not a test module), so that any test can import it.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import write_jsonl

CTX = "Agent Kenji Watanabe reset the VPN token for the Lisbon office; the outage lasted 3 days."
QUESTIONS = ["How long did the outage last?", "What was reset?", "Who reset the token?"]
ANSWERS = ["3 days", "the VPN token", "Kenji Watanabe"]


def qa_tickets(tmp_path: Path, n_contexts: int = 12) -> Path:
    """Write `tmp_path/tickets.jsonl`: `n_contexts` tickets ("Ticket {c}: ..."), each with the
    three QUESTIONS (ids `t{c}-q{q}`, answers at their offsets), then one line of broken JSON.
    Returns its path."""
    lines = []
    for c in range(n_contexts):
        context = f"Ticket {c}: {CTX}"
        for q, (question, answer) in enumerate(zip(QUESTIONS, ANSWERS, strict=True)):
            lines.append(
                json.dumps(
                    {
                        "id": f"t{c}-q{q}",
                        "question": question,
                        "context": context,
                        "answers": {"text": [answer], "answer_start": [context.index(answer)]},
                    }
                )
            )
    lines.append("{broken")
    return write_jsonl(tmp_path / "tickets.jsonl", lines)
