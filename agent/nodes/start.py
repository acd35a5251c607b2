"""First step of every question: reset the per-question fields and refuse bad input early."""

from __future__ import annotations

from typing import Any

import sqlglot
from sqlglot import exp

from agent.context import AgentDeps
from agent.state import ThreadState, reset_for_question

EXAMPLE = "Which region had the most revenue last month?"


def looks_like_sql(text: str, dialect: str) -> bool:
    """True when the question is itself a query over tables (someone pasted SQL)."""
    body = text.strip().strip("`").removeprefix("sql").strip()
    if body.split(None, 1)[0].lower() not in {"select", "with"} if body else True:
        return False
    try:
        tree = sqlglot.parse_one(body, read=dialect)
    except sqlglot.errors.SqlglotError:
        return False
    return isinstance(tree, exp.Query) and tree.find(exp.Table) is not None


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
    elif looks_like_sql(question, deps.connector.dialect):
        update["draft"] = {
            "kind": "sql",
            "explanation": "The SQL you pasted, checked and ready to run.",
            "sql": question,
        }
        pasted = "The question was SQL, so it was checked as written (no model call)."
        update["trace"].append({"kind": "pasted", "text": pasted})
    return update
