"""Last step of every question: record the turn so follow-ups can build on it."""

from __future__ import annotations

from typing import Any

from agent.state import ThreadState, Turn

#: Characters of a question kept in the history (a refused 20,000-character one included).
QUESTION_KEPT = 2000


def finish(state: ThreadState) -> dict[str, Any]:
    final = state["final"]
    assert final is not None
    answer = final.get("answer") or {}
    draft = state.get("draft") or {}
    turn: Turn = {
        "question": state["question"][:QUESTION_KEPT],
        "outcome": final["kind"],
        "sql": answer.get("sql") or draft.get("sql", ""),
        "explanation": answer.get("explanation") or draft.get("explanation", ""),
        "columns": answer.get("columns", []),
        "total_rows": answer.get("total_rows", 0),
        "steps": list(state.get("trace") or []),
    }
    return {"turns": [turn]}
