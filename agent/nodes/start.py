"""First step of every question: reset the per-question fields, refuse bad input early, and take
SQL a person pasted (agent/pasted.py) as the draft."""

from __future__ import annotations

from typing import Any

from agent.context import AgentDeps
from agent.pasted import pasted_sql
from agent.state import ThreadState, reset_for_question

EXAMPLE = "Which region had the most revenue last month?"


def start(state: ThreadState, deps: AgentDeps) -> dict[str, Any]:
    update = reset_for_question()
    question = (state.get("question") or "").strip()
    limit = deps.limits.max_question_chars
    user = state.get("user") or "Someone"
    asked = f"{user} asked: “{question[:300]}”"
    update["trace"] = [{"kind": "question", "text": asked, "by": user}]
    if not question:
        update["final"] = {
            "kind": "failed",
            "message": f"Ask me a question about the data, for example: “{EXAMPLE}”",
        }
    elif len(question) > limit:
        update["final"] = {
            "kind": "failed",
            "message": (
                f"Your question is {len(question):,} characters long; I take at most {limit:,}. "
                "Ask it in a sentence or two, or paste just the SQL you want checked."
            ),
        }
    elif (sql := pasted_sql(question, deps.connector.dialect)) is not None:
        # the person's SQL is judged as written (agent/nodes/paste.py), never sent to the model
        update["pasted"] = True
        update["draft"] = {
            "kind": "sql",
            "explanation": "The SQL you pasted, checked and ready to run.",
            "sql": sql,
        }
        pasted = "The question was SQL, so it was checked as written (no model call)."
        update["trace"].append({"kind": "pasted", "text": pasted})
    return update
