"""Issue 17 item 4 in Slack's Block Kit: an answer reads like a person wrote it.

A single value (or one short row) is a sentence with a readable label, not a one-cell table
headed `count_star()`, and a column named by an expression is headed in words in tables and
charts; every count agrees in number; the notification text (the `text` field)
shows a mention as a mention, never as `&lt;@U…&gt;`; an answer that ran the SQL of the card just
approved above refers to that card instead of repeating the SQL, and shows it otherwise.

Each message is checked with the stand-in's validator and mrkdwn checker, as Slack would read it.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from slack_sdk import WebClient

from agent.explain import Explanation
from agent.outcome import Answer, Proposal
from bot import blocks
from bot.blocks import Message
from bot.blocks.attachments import csv_file
from bot.blocks.base import fit
from bot.conversations.answers import Answers
from bot.slack_thread import SlackThread
from tests.support.message_checks import sections, texts, valid
from tests.support.standin import SlackStandin

ALICE = "U0ALICE01"
BOB = "U0BOB0001"
SQL = "SELECT\n  COUNT(*)\nFROM demo.main.orders\nLIMIT 1000"
#: Escaped Slack control sequences: what a mention looks like once escaped by mistake.
ESCAPED_CONTROL = ("&lt;@", "&lt;#", "&lt;!")


def footer(message: Message) -> str:
    return message.blocks[-1]["elements"][0]["text"]


def code_blocks(message: Message) -> list[str]:
    return [s for s in sections(message) if s.startswith("```")]


def answer(columns: list[str], rows: list[list[Any]], **changes: Any) -> Answer:
    fields: dict[str, Any] = {
        "question": "how many orders?",
        "sql": SQL,
        "explanation": "Counts all orders.",
        "tables": ["demo.main.orders"],
        "columns": columns,
        "rows": rows,
        "total_rows": len(rows),
        "capped": False,
        "elapsed_s": 0.05,
        "connector": "duckdb",
        "approved_by": BOB,
        "proposal_id": "0123456789abcdef0123456789abcdef",
    }
    return Answer(**(fields | changes))


# -- a single value, one short row ----------------------------------------------------------


@pytest.mark.parametrize(
    ("column", "label"),
    [
        ("count_star()", "Count"),  # DuckDB's COUNT(*)
        ("COUNT(*)", "Count"),  # Snowflake's
        ("count", "Count"),  # PostgreSQL's
        ("sum(amount)", "Sum of amount"),
        ("avg(s.net_revenue)", "Average of net revenue"),
        ("count(DISTINCT region)", "Count of distinct region"),
        ("round(avg(amount), 2)", "Average of amount"),
        ("f0_", "Value"),  # BigQuery's unnamed column
        ("orders", "Orders"),
        ("total_revenue", "Total revenue"),
        ("TOTAL_REVENUE", "Total revenue"),
    ],
)
def test_a_single_value_is_a_sentence_with_a_readable_label(column: str, label: str) -> None:
    message = valid(blocks.result(answer([column], [[5000]]), display_rows=20))
    assert [b["type"] for b in message.blocks if b["type"] == "table"] == []
    assert sections(message)[0] == f"{label}: *5,000*\nCounts all orders."
    assert message.text == f"{label}: 5,000 — Counts all orders."


def test_a_one_row_answer_of_a_few_columns_is_a_line_for_each() -> None:
    columns = ["region_name", "sum(net_revenue)", "count_star()"]
    message = valid(blocks.result(answer(columns, [["Europe", 1234.5, 7]]), display_rows=20))
    assert sections(message)[0] == (
        "Region name: *Europe*\nSum of net revenue: *1,234.50*\nCount: *7*\nCounts all orders."
    )
    assert message.text == (
        "Region name: Europe; Sum of net revenue: 1,234.50; Count: 7 — Counts all orders."
    )
    assert "table" not in {b["type"] for b in message.blocks}


def test_a_single_value_escapes_what_it_holds_and_keeps_a_line_break_out_of_bold() -> None:
    message = valid(blocks.result(answer(["note"], [["a < b & *c*"]]), display_rows=20))
    assert sections(message)[0].startswith("Note: *a &lt; b &amp; *c**\n")
    multi = valid(blocks.result(answer(["note"], [["one\ntwo"]]), display_rows=20))
    assert sections(multi)[0].startswith("Note: one\ntwo\n")


def test_a_single_empty_value_still_says_nothing_matched() -> None:
    message = valid(blocks.result(answer(["sum(amount)"], [[None]]), display_rows=20))
    first = sections(message)[0]
    assert first.startswith("Sum of amount: *NULL*\n:mag: Every value in the result is empty")


@pytest.mark.parametrize(
    "shape",
    [
        {"columns": [f"c{i}" for i in range(5)], "rows": [list(range(5))]},  # too wide
        {"columns": ["n"], "rows": [[1], [2]]},  # two rows
        {"columns": ["n"], "rows": [[1]], "total_rows": 2},  # one of more rows
    ],
    ids=["five-columns", "two-rows", "one-row-shown-of-two"],
)
def test_other_results_stay_a_table(shape: dict[str, Any]) -> None:
    made = answer(shape["columns"], shape["rows"])
    made = replace(made, total_rows=shape.get("total_rows", made.total_rows))
    message = valid(blocks.result(made, display_rows=20))
    assert any(b["type"] == "table" for b in message.blocks)


def test_table_headers_are_in_words_as_one_row_answers_are() -> None:
    made = answer(["status", "count_star()", "sum(amount)"], [["open", 3, 1.5], ["done", 4, 2.0]])
    message = valid(blocks.result(made, display_rows=20))
    [table] = [b for b in message.blocks if b["type"] == "table"]
    assert [c["text"] for c in table["rows"][0]] == ["Status", "Count", "Sum of amount"]
    text = valid(blocks.result(made, display_rows=20, use_table=False))
    assert "Status  Count  Sum of amount" in sections(text)[1]


# -- counts agree in number ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rows", "total", "capped", "summary", "counted"),
    [
        (0, 0, False, "*0 rows*", "0 rows"),
        (2, 2, False, "*2 rows*", "2 rows"),
        (1, 2, False, "*2 rows* (first 1 shown)", "2 rows"),
        (3, 1000, True, "*1,000+ rows* (first 3 shown)", "1,000+ rows"),
    ],
)
def test_row_counts_agree_in_number(
    rows: int, total: int, capped: bool, summary: str, counted: str
) -> None:
    made = answer(["n"], [[i] for i in range(rows)], total_rows=total, capped=capped)
    message = valid(blocks.result(made, display_rows=20))
    assert sections(message)[0].startswith(summary)
    assert f" · {counted} · " in footer(message)
    assert message.text.startswith(counted)


def test_a_one_row_answer_says_1_row() -> None:
    message = valid(blocks.result(answer(["count_star()"], [[1]]), display_rows=20))
    assert " · 1 row · " in footer(message)
    assert "1 rows" not in texts(message) + message.text


@pytest.mark.parametrize(
    ("calls", "tokens", "said"),
    [(1, 1, "1 model call, 1 token"), (2, 999, "2 model calls, 999 tokens")],
)
def test_usage_agrees_in_number(calls: int, tokens: int, said: str) -> None:
    usage = {"calls": calls, "input_tokens": tokens, "output_tokens": 0, "by_node": {}}
    made = replace(answer(["n"], [[1], [2]]), usage=usage)  # type: ignore[arg-type]
    assert footer(valid(blocks.result(made, display_rows=20))).endswith(said)


def test_one_left_out_step_is_one_step() -> None:
    steps = tuple({"kind": "note", "text": f"step {i}"} for i in range(41))
    message = valid(blocks.explanation(Explanation(question="q", steps=steps)))
    assert "The first step is left out." in texts(message)


def test_a_csv_of_one_row_is_titled_one_row() -> None:
    made = answer(["n"], [[1]], total_rows=1)
    assert csv_file(made).title == "All 1 row (CSV)"
    assert csv_file(replace(made, total_rows=5)).title == "First 1 row (CSV)"


# -- the notification text -------------------------------------------------------------------


def proposal() -> Proposal:
    return Proposal(
        proposal_id="0123456789abcdef0123456789abcdef",
        question="how many orders?",
        sql=SQL,
        explanation="Counts all orders.",
        tables=["demo.main.orders"],
        sql_sha256="ab" * 32,
    )


def test_a_cancel_notification_names_who_cancelled_with_a_mention() -> None:
    message = valid(blocks.cancelled(ALICE))
    assert message.text == f"Cancelled by <@{ALICE}>: the query was stopped and returned nothing."
    assert valid(blocks.cancelled(None)).text == (
        "Cancelled: the query was stopped and returned nothing."
    )


def test_a_follow_up_notification_names_who_asked_and_escapes_the_question() -> None:
    message = valid(blocks.asked(ALICE, "and <!channel> by region?"))
    assert message.text == f"<@{ALICE}> asked: and &lt;!channel&gt; by region?"


def test_a_terminal_user_name_in_a_notification_is_escaped_text() -> None:
    message = valid(blocks.cancelled("alice<@U1>"))
    assert message.text.startswith("Cancelled by alice&lt;@U1&gt;:")


@pytest.mark.parametrize(
    "message",
    [
        blocks.cancelled(ALICE),
        blocks.asked(ALICE, "why?"),
        blocks.proposal(proposal(), requested_by=ALICE),
        blocks.decided(proposal(), requested_by=ALICE, verdict=blocks.approved_by(BOB)),
        blocks.running_card(proposal(), requested_by=ALICE, verdict=blocks.approved_by(BOB)),
        blocks.result(answer(["count_star()"], [[3]]), display_rows=20),
        blocks.result(answer(["n"], [[3], [4]]), display_rows=20),
        blocks.explanation(Explanation("q", ({"kind": "question", "text": "x", "by": ALICE},))),
        blocks.failure(f"Cancelled by {ALICE}."),
    ],
    ids=lambda m: m.text[:30],
)
def test_no_notification_text_shows_an_escaped_mention(message: Message) -> None:
    valid(message)
    assert not any(seq in message.text for seq in ESCAPED_CONTROL), message.text


@given(st.text(alphabet="ab<>@U1&;|", max_size=120), st.integers(min_value=2, max_value=60))
def test_fit_never_ends_inside_an_entity_or_a_control_sequence(text: str, limit: int) -> None:
    mrkdwn = blocks.escape(text).replace("&lt;@U1&gt;", "<@U1>")
    out = fit(mrkdwn, limit)
    assert len(out) <= limit
    if out != mrkdwn:
        kept = out.removesuffix("…")
        assert mrkdwn.startswith(kept)
        assert kept.rfind("<") <= kept.rfind(">"), out
        amp = kept.rfind("&")
        assert amp == -1 or ";" in kept[amp:], out


# -- the SQL just approved above -------------------------------------------------------------


def test_an_answer_to_the_card_above_refers_to_it_instead_of_repeating_the_sql() -> None:
    made = answer(["count_star()"], [[3]])
    above = valid(blocks.result(made, display_rows=20, approved_above=True))
    assert code_blocks(above) == [] and "COUNT(*)" not in texts(above)
    assert "The SQL is the query approved above, run exactly as shown there." in texts(above)
    assert f"approved by <@{BOB}>" in footer(above)  # the evidence stays
    assert "`demo.main.orders`" in footer(above) and " · 1 row · " in footer(above)
    alone = valid(blocks.result(made, display_rows=20))
    assert code_blocks(alone) == [f"```\n{SQL}\n```"]
    assert "approved above" not in texts(alone)


def test_long_sql_approved_above_is_whole_in_its_file() -> None:
    long = "SELECT\n" + ",\n".join(f"  {i} AS c{i}" for i in range(4000)) + "\nFROM t"
    assert blocks.sql_cut(long)
    made = replace(answer(["count_star()"], [[3]]), sql=long)
    message = valid(blocks.result(made, display_rows=20, approved_above=True))
    assert code_blocks(message) == []
    assert f"the whole statement is in the file `{blocks.RAN_SQL_FILE}`" in texts(message)


@pytest.mark.parametrize(("approved", "repeated"), [(SQL, False), ("SELECT 2", True), (None, True)])
def test_answers_repeat_the_sql_only_when_the_approved_card_does_not_show_it(
    slack: SlackStandin, approved: str | None, repeated: bool
) -> None:
    client = WebClient(token="xoxb-test", base_url=slack.url)
    thread = SlackThread(team="T0TEST", channel="C0ANSWERS", ts="1800000000.000001")
    Answers(client, display_rows=20).post(thread, answer(["n"], [[1], [2]]), approved_sql=approved)
    [posted] = slack.thread("C0ANSWERS", "1800000000.000001")
    assert ("```" in posted.all_text()) is repeated
    assert ("approved above" in posted.all_text()) is not repeated


def test_a_chart_names_an_expression_column_in_words() -> None:
    months = [[f"2025-{m:02d}-01", m * 10] for m in range(1, 7)]
    made = answer(["month", "count_star()"], months, explanation="Orders by month.")
    message = blocks.chart(made)
    assert message is not None
    [block] = message.blocks
    assert block["chart"]["axis_config"]["y_label"] == "Count"
    assert [s["name"] for s in block["chart"]["series"]] == ["Count"]
    assert block["chart"]["axis_config"]["x_label"] == "Month"
