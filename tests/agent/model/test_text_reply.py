"""Reading a SQL reply written as text (agent/model/text_reply.py) into the structured repair
reply."""

from __future__ import annotations

import json

import pytest

from agent.model.reply import SqlRepair
from agent.model.text_reply import read_reply

FENCE = "```"


@pytest.mark.parametrize(
    ("text", "sql", "explanation"),
    [
        (
            f"Counts the orders.\n{FENCE}sql\nSELECT count(*) FROM orders;\n{FENCE}",
            "SELECT count(*) FROM orders",
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
    assert read_reply(text) == SqlRepair(explanation=explanation, sql=sql)


def test_a_reply_in_the_structured_form_is_read_as_it_is() -> None:
    text = json.dumps({"kind": "sql", "explanation": "All of it.", "sql": "SELECT * FROM t"})
    assert read_reply(text) == SqlRepair(explanation="All of it.", sql="SELECT * FROM t")


@pytest.mark.parametrize(
    "text",
    [
        "Which quarter do you mean?",
        "I cannot select customers by mood: no table records it.",
        json.dumps({"kind": "clarify", "explanation": "Which quarter?", "sql": ""}),
    ],
)
def test_prose_alone_holds_no_sql(text: str) -> None:
    """A sentence (even one that says "select") is no query: the SQL step asks again."""
    assert read_reply(text).sql == ""


@pytest.mark.parametrize("text", ["", "   \n ", "Clarify:"])
def test_an_empty_reply_cannot_be_read(text: str) -> None:
    with pytest.raises(ValueError, match="empty"):
        read_reply(text)
