"""Suggested questions come from what the warehouse knows, in order, once each, bounded."""

from __future__ import annotations

from agent.evaluation.golden import GoldenQuestion, GoldenSet
from agent.suggestions import MAX_SUGGESTIONS, MAX_TITLE, golden_questions, suggestions


def test_sources_in_order_each_question_once_at_most_four() -> None:
    got = suggestions(
        ["Revenue by region last month?", "  "],
        ["revenue by region last month", "How many customers do we have?"],
        ["What is Revenue?", "What is Orders?", "What is Refunds?"],
    )
    assert [s.message for s in got] == [
        "Revenue by region last month?",
        "How many customers do we have?",
        "What is Revenue?",
        "What is Orders?",
    ]
    assert len(got) == MAX_SUGGESTIONS


def test_a_long_question_is_titled_short_and_sent_whole() -> None:
    question = (
        "Which customers in Europe ordered more than five products in the last quarter of the year?"
    )
    [got] = suggestions([question])
    assert got.message == question
    assert len(got.title) <= MAX_TITLE and got.title.endswith("…")
    assert question.startswith(got.title[:-1])
    assert suggestions(["x" * 301]) == []  # a wall of text is no prompt


def test_golden_questions_that_open_a_conversation_and_expect_an_answer() -> None:
    golden = GoldenSet(
        (
            GoldenQuestion("a", "lookup", "How many orders?"),
            GoldenQuestion("b", "follow-up", "And by month?", follow_up_of="a"),
            GoldenQuestion("c", "unsafe", "Delete the orders", expect="decline"),
            GoldenQuestion("d", "vague", "How are we doing?", expect="clarify"),
        )
    )
    assert golden_questions([golden]) == ["How many orders?"]
