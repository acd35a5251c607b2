"""Reading the SQL step's text reply (agent/text_reply.py) into the model's structured reply."""

from __future__ import annotations

import pytest

from agent.reply import SqlRepair, SqlReply
from agent.text_reply import read_reply

FENCE = "```"


@pytest.mark.parametrize(
    ("text", "sql", "explanation"),
    [
        (
            f"Counts the orders.\n{FENCE}sql\nSELECT count(*) FROM orders;\n{FENCE}",
            "SELECT count(*) FROM orders;",
            "Counts the orders.",
        ),
        # no info string, prose after the block
        (f"{FENCE}\nSELECT 1\n{FENCE}\nThis returns one.", "SELECT 1", "This returns one."),
        # an unclosed fence runs to the end
        (f"Here:\n{FENCE}sql\nSELECT a\nFROM t", "SELECT a\nFROM t", "Here:"),
        # no fence: from the first line that starts a query
        (
            "The query:\nwith x as (select 1)\nselect * from x",
            "with x as (select 1)\nselect * from x",
            "The query:",
        ),
        # the first block is the answer; a second (an example result) is not SQL to run
        (
            f"{FENCE}sql\nSELECT 2\n{FENCE}\nResult:\n{FENCE}\n| 2 |\n{FENCE}",
            "SELECT 2",
            "Result:",
        ),
    ],
)
def test_sql_is_read_with_the_prose_that_explains_it(text: str, sql: str, explanation: str) -> None:
    reply = read_reply(text, SqlReply)
    assert isinstance(reply, SqlReply)
    assert (reply.kind, reply.sql, reply.explanation) == ("sql", sql, explanation)


@pytest.mark.parametrize(
    "text",
    [
        "Which quarter do you mean?",
        "Clarify: Which quarter do you mean?",
        "**Clarifying question:** Which quarter do you mean?",
        "  Question:   Which quarter\n do you mean?  ",
    ],
)
def test_prose_alone_is_a_clarifying_question(text: str) -> None:
    reply = read_reply(text, SqlReply)
    assert isinstance(reply, SqlReply)
    assert (reply.kind, reply.sql, reply.explanation) == (
        "clarify",
        "",
        "Which quarter do you mean?",
    )


def test_a_sentence_that_mentions_select_is_no_query() -> None:
    reply = read_reply("I cannot select customers by mood: no table records it.", SqlReply)
    assert reply.kind == "clarify" if isinstance(reply, SqlReply) else False


def test_a_repair_must_hold_sql() -> None:
    repaired = read_reply(f"Fixed the join.\n{FENCE}sql\nSELECT 1\n{FENCE}", SqlRepair)
    assert repaired == SqlRepair(explanation="Fixed the join.", sql="SELECT 1")
    with pytest.raises(ValueError, match="no ```sql code block"):
        read_reply("Which table holds the orders?", SqlRepair)


@pytest.mark.parametrize("text", ["", "   \n ", "Clarify:"])
def test_an_empty_reply_cannot_be_read(text: str) -> None:
    with pytest.raises(ValueError, match="empty"):
        read_reply(text, SqlReply)
