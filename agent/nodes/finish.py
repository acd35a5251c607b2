"""Last step of every question: record the turn so follow-ups can build on it."""

from __future__ import annotations

from agent.outcome import Answer
from agent.state import ThreadState, Turn, Update

#: Characters of a question kept in the history (a refused 20,000-character one included).
QUESTION_KEPT = 2000


def finish(state: ThreadState) -> Update:
    final = state["final"]
    assert final is not None
    draft = state.get("draft")
    sql, explanation = (draft["sql"], draft["explanation"]) if draft else ("", "")
    columns: list[str] = []
    total_rows = 0
    if final.get("answer"):
        answer = Answer.from_dict(final["answer"])
        sql, explanation = answer.sql or sql, answer.explanation or explanation
        columns, total_rows = answer.columns, answer.total_rows
    turn: Turn = {
        "question": state["question"][:QUESTION_KEPT],
        "outcome": final["kind"],
        "sql": sql,
        "explanation": explanation,
        "columns": columns,
        "total_rows": total_rows,
        "steps": list(state.get("trace") or []),
        "identity": state.get("identity", ""),
    }
    governed = draft.get("metric") if draft else None
    if governed and final["kind"] == "answer":
        turn["metric"] = governed
    return {"turns": [turn]}
