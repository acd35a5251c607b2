"""First step of every question: reset the per-question fields, refuse bad input early, and take
SQL a person pasted (agent/pasted.py) as the draft."""

from __future__ import annotations

from agent.context import AgentDeps
from agent.pasted import pasted_sql
from agent.state import Step, ThreadState, Update, failed, reset_for_question

EXAMPLE = "Which region had the most revenue last month?"


def start(state: ThreadState, deps: AgentDeps) -> Update:
    update = reset_for_question()
    question = (state.get("question") or "").strip()
    limit = deps.limits.max_question_chars
    user = state.get("user") or "Someone"
    asked: Step = {"kind": "question", "text": f"{user} asked: “{question[:300]}”", "by": user}
    if not question:
        refused = failed(f"Ask me a question about the data, for example: “{EXAMPLE}”")
        return {**update, **refused, "trace": [asked, *refused["trace"]]}
    if len(question) > limit:
        refused = failed(
            f"Your question is {len(question):,} characters long; I take at most {limit:,}. "
            "Ask it in a sentence or two, or paste just the SQL you want checked."
        )
        return {**update, **refused, "trace": [asked, *refused["trace"]]}
    if (sql := pasted_sql(question, deps.connector.dialect)) is not None:
        # the person's SQL is judged as written (agent/nodes/paste.py), never sent to the model
        pasted = "The question was SQL, so it was checked as written (no model call)."
        return {
            **update,
            "pasted": True,
            "draft": {
                "kind": "sql",
                "explanation": "The SQL you pasted, checked and ready to run.",
                "sql": sql,
            },
            "trace": [asked, {"kind": "pasted", "text": pasted}],
        }
    return {**update, "trace": [asked]}
