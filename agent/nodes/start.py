"""First step of every question: keep a proposal still waiting as a superseded turn, reset the
per-question fields, refuse bad input early, and take SQL a person pasted (`pasted_sql`)
as the draft."""

from __future__ import annotations

from agent.context import AgentDeps
from agent.nodes.finish import QUESTION_KEPT
from agent.outcome import Proposal
from agent.screen.pasted import pasted_sql
from agent.state import Step, ThreadState, Turn, Update, failed, reset_for_question

EXAMPLE = "Which region had the most revenue last month?"


def start(state: ThreadState, deps: AgentDeps) -> Update:
    update = reset_for_question()
    waiting = state.get("proposal") if not state.get("final") else None
    if waiting:
        # a question asked over a waiting proposal often refines it ("and by month?"): its
        # history, and the question's words, are the proposal's too
        update["turns"] = [superseded(Proposal.from_dict(waiting), state.get("trace") or [])]
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
        # the person's SQL is judged as written (the paste step), never sent to the model
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


def superseded(proposal: Proposal, trace: list[Step]) -> Turn:
    """The turn of a question whose proposal was left waiting for a new question."""
    return {
        "question": proposal.question[:QUESTION_KEPT],
        "outcome": "superseded",
        "sql": proposal.sql,
        "explanation": proposal.explanation,
        "columns": [],
        "total_rows": 0,
        "steps": trace,
        "identity": proposal.run_as,
    }
