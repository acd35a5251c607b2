"""The demo mode's recorded model: replies found by question, in any order; a follow-up's reply
by the question before it; an unknown question answered with the list of known ones."""

from __future__ import annotations

from langchain_core.messages import HumanMessage, SystemMessage

from agent.model.prompts import HISTORY
from agent.model.recorded import RecordedChatModel, Recording
from agent.model.reply import SqlReply


def _sql(text: str) -> dict[str, str]:
    return {"kind": "sql", "explanation": text, "sql": f"SELECT '{text}'"}


MODEL = RecordedChatModel(
    replies=[],
    recordings=[
        Recording(question="Revenue by region", reply=_sql("first")),
        Recording(question="Customers?", reply=_sql("customers")),
        Recording(question="Show this by month", after="Revenue by region", reply=_sql("monthly")),
        Recording(question="Show this by month", after="Customers?", reply=_sql("signups")),
    ],
)


def _asked(question: str, before: str | None = None) -> str:
    messages = [SystemMessage("rules")]
    if before:
        messages.append(HumanMessage(HISTORY.format(turns=f"Q: {before}\nSQL: SELECT 1")))
    messages.append(HumanMessage(question))
    return MODEL.with_structured_output(SqlReply).invoke(messages).explanation


def test_questions_match_in_any_order_case_and_question_mark_aside() -> None:
    assert _asked("customers") == "customers"
    assert _asked("  revenue   BY region? ") == "first"


def test_a_follow_up_gets_the_reply_recorded_after_the_question_before_it() -> None:
    assert _asked("Show this by month", before="revenue by region?") == "monthly"
    assert _asked("Show this by month", before="Customers?") == "signups"


def test_an_unknown_question_lists_those_recorded() -> None:
    said = _asked("Show this by week", before="Customers?")
    assert "no recorded reply" in said
    assert "- Revenue by region\n- Customers?\n- Show this by month" in said
