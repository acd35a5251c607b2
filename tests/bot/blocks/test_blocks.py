"""bot.blocks: every message fits Slack's limits and shows model/user text safely.

Each message is checked with the stand-in's validator (slack_sdk's models plus Slack's
message-level limits) and its mrkdwn checker, the same checks the end-to-end tests rely on.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent.explain import Explanation
from agent.outcome import Answer, Proposal
from bot import blocks
from bot.blocks import APPROVE_ACTION, EDIT_ACTION, REJECT_ACTION, Message
from bot.blocks.messages import card_of
from tests.support.message_checks import sections, texts, valid
from tests.support.standin import check_view, mrkdwn_problems

NASTY = "a < b && c > d <!channel> <@U123|x> ``` *bold* _it_ ~s~ `code` &amp; <https://x.io|x>"
UNICODE = "売上 📈 Umsätze — ¿cuánto? עברית"


def make_proposal(**changes: Any) -> Proposal:
    fields: dict[str, Any] = {
        "proposal_id": "0123456789abcdef0123456789abcdef",
        "question": "which region had the most revenue?",
        "sql": "SELECT r.region_name, SUM(i.quantity) AS units\nFROM demo.main.regions AS r",
        "explanation": "Units sold by region.",
        "tables": ["demo.main.regions", "demo.main.order_items"],
        "sql_sha256": "ab" * 32,
    }
    return Proposal(**(fields | changes))


def make_answer(columns: int = 2, rows: int = 3, **changes: Any) -> Answer:
    fields: dict[str, Any] = {
        "question": "q",
        "sql": "SELECT 1",
        "explanation": "Revenue by region.",
        "tables": ["demo.main.orders"],
        "columns": [f"col_{i}" for i in range(columns)],
        "rows": [[r * 1000 + c + 0.5 for c in range(columns)] for r in range(rows)],
        "total_rows": rows,
        "capped": False,
        "elapsed_s": 0.1234,
        "connector": "duckdb",
        "approved_by": "U0BOB0001",
    }
    return Answer(**(fields | changes))


# -- proposal -------------------------------------------------------------------------------


def test_proposal_shows_sql_explanation_tables_and_three_buttons() -> None:
    message = valid(blocks.proposal(make_proposal(), requested_by="U0ALICE01"))
    body = texts(message)
    assert "Units sold by region." in body
    assert "```\\nSELECT r.region_name, SUM(i.quantity) AS units\\nFROM demo.main.regions" in body
    assert "`demo.main.regions`, `demo.main.order_items`" in body
    assert "<@U0ALICE01>" in body
    actions = [b for b in message.blocks if b["type"] == "actions"]
    assert len(actions) == 1
    buttons = {e["action_id"]: e for e in actions[0]["elements"]}
    assert set(buttons) == {APPROVE_ACTION, REJECT_ACTION, EDIT_ACTION}
    # each names the proposal and the SQL shown, and nothing else (the SQL stays in the store)
    assert {card_of(e["value"]) for e in buttons.values()} == {
        ("0123456789abcdef0123456789abcdef", "ab" * 32)
    }
    assert buttons[APPROVE_ACTION]["style"] == "primary"


def test_proposal_button_values_never_carry_sql() -> None:
    prop = make_proposal(sql="SELECT secret_column FROM demo.main.orders")
    actions = [
        b for b in blocks.proposal(prop, requested_by="U1X").blocks if b["type"] == "actions"
    ]
    assert "secret_column" not in json.dumps(actions)


def test_proposal_with_huge_sql_stays_within_limits_and_says_so() -> None:
    sql = "SELECT\n" + ",\n".join(f"  col_{i} <> 'x&y'" for i in range(20_000))
    message = valid(blocks.proposal(make_proposal(sql=sql), requested_by="U1X"))
    assert len(message.blocks) <= 50
    assert all(len(t) <= 3000 for t in sections(message))
    assert "only the start is shown" in texts(message)
    assert message.blocks[-1]["type"] == "actions"


def test_proposal_sql_pieces_follow_the_sql_in_order() -> None:
    sql = "\n".join(f"-- line {i:05d} & <more>" for i in range(600))
    message = valid(blocks.proposal(make_proposal(sql=sql), requested_by="U1X"))
    code = [t.removeprefix("```\n").removesuffix("\n```") for t in sections(message)[1:]]
    joined = "\n".join(code).replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">")
    assert joined == sql


def test_proposal_escapes_markdown_breaking_text() -> None:
    prop = make_proposal(
        sql=f"SELECT '{NASTY}' AS x", explanation=NASTY, tables=["a<b>", "c&d"], warnings=[NASTY]
    )
    message = valid(blocks.proposal(prop, requested_by="<!here>"))
    body = texts(message)
    assert "<!channel>" not in body and "<!here>" not in body
    assert "&lt;!channel&gt;" in body
    # A fence in the SQL cannot close the code block early.
    assert all(s.count("```") == 2 for s in sections(message)[1:])


def test_proposal_keeps_unicode() -> None:
    message = valid(blocks.proposal(make_proposal(explanation=UNICODE), requested_by="U1X"))
    assert UNICODE in texts(message)


def test_proposal_with_cost_estimate() -> None:
    prop = make_proposal(estimated_bytes=5 * 1024 * 1024, estimated_cost_usd=0.031)
    body = texts(valid(blocks.proposal(prop, requested_by="U1X")))
    assert "5 MiB" in body and "$0.03" in body


def test_proposal_note_and_long_explanation() -> None:
    prop = make_proposal(explanation="x" * 10_000)
    note = f"Edited by {blocks.mention('U0BOB0001')}: {blocks.escape('a < b')}"
    message = valid(blocks.proposal(prop, requested_by="U1X", note=note))
    assert message.blocks[0]["type"] == "context"
    assert "Edited by <@U0BOB0001>: a &lt; b" in texts(message)


def test_edit_modal_holds_the_sql_and_only_the_id_and_hash() -> None:
    prop = make_proposal(sql="SELECT 1 -- <x> & " + "y" * 2900)
    view = blocks.edit_modal(prop)
    assert check_view(view, "modal") == view
    metadata = json.loads(view["private_metadata"])
    assert metadata == {"proposal_id": prop.proposal_id, "sql_sha256": prop.sql_sha256}
    field = next(b for b in view["blocks"] if b["type"] == "input")["element"]
    assert field["initial_value"] == prop.sql and field["max_length"] == 3000


def test_edit_modal_refuses_sql_longer_than_an_input_takes() -> None:
    with pytest.raises(ValueError, match="does not fit"):
        blocks.edit_modal(make_proposal(sql="SELECT " + "1" * 3000))


def test_many_tables_are_listed_within_limits() -> None:
    prop = make_proposal(tables=[f"demo.main.table_{i}" for i in range(500)])
    assert "more" in texts(valid(blocks.proposal(prop, requested_by="U1X")))


# -- decided, working, help, clarify, failure ------------------------------------------------


@pytest.mark.parametrize(
    ("verdict", "shown"),
    [
        (blocks.approved_by("U0BOB0001"), "Approved by <@U0BOB0001>"),
        (blocks.rejected_by("U0BOB0001"), "Rejected by <@U0BOB0001>"),
        (blocks.SUPERSEDED, "Replaced by a newer question"),
    ],
)
def test_decided_replaces_the_buttons_with_the_verdict(verdict: str, shown: str) -> None:
    message = valid(blocks.decided(make_proposal(), requested_by="U1X", verdict=verdict))
    assert all(b["type"] != "actions" for b in message.blocks)
    assert shown in message.blocks[-1]["elements"][0]["text"]
    assert "SELECT r.region_name" in texts(message)


def test_mention_of_a_non_slack_user_is_escaped_text() -> None:
    assert blocks.mention("U0BOB0001") == "<@U0BOB0001>"
    assert blocks.mention("bob <x>") == "bob &lt;x&gt;"


def test_working_and_help() -> None:
    assert "Working on it" in texts(valid(blocks.working()))
    help_text = texts(valid(blocks.help_message()))
    assert "Approve" in help_text and "which region" in help_text


@pytest.mark.parametrize("builder", [blocks.clarify, blocks.failure])
def test_clarify_and_failure_escape_and_cut(builder: Any) -> None:
    message = valid(builder(NASTY + " " + UNICODE + "y" * 5000))
    assert UNICODE in texts(message)
    assert "<!channel>" not in texts(message)
    assert all(len(t) <= 3000 for t in sections(message))


# -- results ----------------------------------------------------------------------------------


def test_result_table_summary_sql_and_sources() -> None:
    answer = make_answer(bytes_processed=2048)
    message = valid(blocks.result(answer, display_rows=20))
    table = next(b for b in message.blocks if b["type"] == "table")
    cells = [[c["text"] for c in row] for row in table["rows"]]
    assert cells[0] == ["Col 0", "Col 1"]
    assert cells[1:] == [["0.50", "1.50"], ["1,000.50", "1,001.50"], ["2,000.50", "2,001.50"]]
    assert table["column_settings"] == [{"align": "right"}, {"align": "right"}]
    body = texts(message)
    assert "*3 rows*" in body and "first" not in body
    assert "SELECT 1" in body
    sources = message.blocks[-1]["elements"][0]["text"]
    for part in ("`demo.main.orders`", "3 rows", "0.12 s", "duckdb", "2 KiB", "<@U0BOB0001>"):
        assert part in sources


def test_result_links_the_warehouse_job() -> None:
    url = "https://console.cloud.google.com/bigquery?project=p&j=bq:EU:querybot_1"
    message = valid(blocks.result(make_answer(job_url=url), display_rows=20))
    sources = message.blocks[-1]["elements"][0]["text"]
    assert "<https://console.cloud.google.com/bigquery?project=p&amp;j=bq:EU:querybot_1|job>" in (
        sources
    )
    assert "|job>" not in texts(valid(blocks.result(make_answer(), display_rows=20)))


def test_result_with_200_rows_shows_display_rows_and_the_total() -> None:
    message = valid(blocks.result(make_answer(rows=200, total_rows=200), display_rows=20))
    table = next(b for b in message.blocks if b["type"] == "table")
    assert len(table["rows"]) == 21
    assert "*200 rows* (first 20 shown)" in texts(message)


def test_result_capped_says_more_rows_may_exist() -> None:
    answer = make_answer(rows=5, total_rows=1000, capped=True)
    assert "1,000+ rows" in texts(valid(blocks.result(answer, display_rows=5)))


def test_result_with_30_columns_falls_back_to_monospaced_text() -> None:
    message = valid(blocks.result(make_answer(columns=30, rows=200), display_rows=20))
    assert all(b["type"] != "table" for b in message.blocks)
    code = [t for t in sections(message) if t.startswith("```") and "Col 29" in t]
    assert code, "the header of a wide table is shown"
    assert all(len(t) <= 3000 for t in sections(message))
    assert "first" in texts(message)


def test_result_display_rows_beyond_the_table_limit_use_text() -> None:
    message = valid(blocks.result(make_answer(rows=200), display_rows=150))
    assert all(b["type"] != "table" for b in message.blocks)
    assert all(len(t) <= 3000 for t in sections(message))


def test_result_without_table_block_on_request() -> None:
    message = valid(blocks.result(make_answer(), display_rows=20, use_table=False))
    assert all(b["type"] != "table" for b in message.blocks)
    assert "1,000.50" in texts(message)


def test_result_cells_null_bool_text_unicode_and_huge_values() -> None:
    answer = replace(
        make_answer(columns=4, rows=2),
        columns=["n", "flag", "name", "blob"],
        rows=[[None, True, UNICODE, "z" * 10_000], [7, False, NASTY, ""]],
    )
    message = valid(blocks.result(answer, display_rows=20))
    cells = next(b for b in message.blocks if b["type"] == "table")["rows"]
    assert [c["text"] for c in cells[1][:3]] == ["NULL", "true", UNICODE]
    assert len(cells[1][3]["text"]) <= blocks.CELL_TEXT
    assert cells[2][3]["text"] == "(empty)"


def test_result_with_no_columns() -> None:
    answer = make_answer(columns=0, rows=0, total_rows=0)
    assert "*0 rows*" in texts(valid(blocks.result(answer, display_rows=20)))


@pytest.mark.parametrize(
    ("value", "shown"),
    [(1234567, "1,234,567"), (0.005, "0.005"), (0.0, "0.00"), (-12.345, "-12.35"), ("", "(empty)")],
)
def test_cell_text(value: Any, shown: str) -> None:
    assert blocks.cell_text(value) == shown


def test_code_pieces_never_split_an_entity() -> None:
    pieces = blocks.code_pieces("&" * 1000, 99)
    assert all(len(p) <= 99 for p in pieces)
    assert "".join(pieces) == "&amp;" * 1000


@given(st.text(alphabet="ab&<>\n`ü", max_size=400), st.integers(min_value=6, max_value=60))
def test_code_pieces_fit_and_keep_every_character(text: str, budget: int) -> None:
    pieces = blocks.code_pieces(text, budget)
    assert all(len(p) <= budget for p in pieces)
    shown = "".join(pieces).replace("\n", "").replace("\u200b", "")
    expected = blocks.escape(text).replace("\n", "")
    assert shown == expected


@given(st.text(alphabet="ab&<>ü", max_size=200), st.integers(min_value=2, max_value=80))
def test_escaped_fits_and_never_ends_inside_an_entity(text: str, limit: int) -> None:
    out = blocks.escaped(text, limit)
    assert len(out) <= limit
    assert not mrkdwn_problems(out, [])


# -- answer buttons, the explanation, follow-ups --------------------------------------------


def answer_buttons(message: Message) -> dict[str, dict[str, Any]]:
    actions = [b for b in message.blocks if b["type"] == "actions"]
    assert len(actions) <= 1
    return {e["action_id"]: e for a in actions for e in a["elements"]}


def test_result_has_follow_up_and_explain_buttons_within_slack_limits() -> None:
    long_question = "Break this down by " + "a very long & <odd> “dimension” name " * 200
    answer = make_answer(
        proposal_id="f" * 32,
        follow_ups=[
            "Break this down by channel",
            "Compare with the previous period",
            long_question,
        ],
    )
    message = valid(blocks.result(answer, display_rows=20))
    buttons = answer_buttons(message)
    assert list(buttons) == ["follow_up:0", "follow_up:1", "follow_up:2", blocks.EXPLAIN_ACTION]
    assert buttons[blocks.EXPLAIN_ACTION]["value"] == "f" * 32
    assert buttons[blocks.EXPLAIN_ACTION]["text"]["text"] == "How did you get this?"
    assert all(len(b["value"]) <= 2000 and len(b["text"]["text"]) <= 75 for b in buttons.values())
    pid, question = blocks.follow_up_of(buttons["follow_up:2"]["value"]) or ("", "")
    assert pid == "f" * 32 and question.startswith("Break this down by a very long & <odd>")
    assert blocks.follow_up_of(buttons["follow_up:0"]["value"]) == (
        "f" * 32,
        "Break this down by channel",
    )
    assert message.blocks[-1]["type"] == "context", "the sources line stays the footer"
    # without a proposal (nothing to explain) there are no buttons
    assert answer_buttons(valid(blocks.result(make_answer(), display_rows=20))) == {}


@pytest.mark.parametrize("value", ["", "not json", "[1]", '{"p": "x"}', '{"p": 1, "q": "a"}'])
def test_a_forged_follow_up_value_is_not_a_question(value: str) -> None:
    assert blocks.follow_up_of(value) is None


def test_empty_results_say_so_plainly() -> None:
    none = valid(blocks.result(make_answer(rows=0), display_rows=20))
    assert "The query returned no rows" in texts(none)
    nulls = valid(blocks.result(replace(make_answer(1, 1), rows=[[None]]), display_rows=20))
    assert "Every value in the result is empty (NULL)" in texts(nulls)
    assert "returned no rows" not in texts(valid(blocks.result(make_answer(), display_rows=20)))


def test_explanation_lists_steps_with_mentions_and_fits_any_length() -> None:
    steps = (
        {"kind": "question", "text": f"U0ALICE01 asked: “{NASTY}”", "by": "U0ALICE01"},
        {"kind": "model", "text": "The model wrote the SQL (attempt 1)."},
        {"kind": "gate_fix", "text": "The gate changed it: row cap added (LIMIT 1000)."},
        {"kind": "approved", "text": "Approved by U0BOB0001.", "by": "U0BOB0001"},
    )
    message = valid(blocks.explanation(Explanation(question="q", steps=steps)))
    body = texts(message)
    assert "1. <@U0ALICE01> asked" in body and "4. Approved by <@U0BOB0001>." in body
    assert "row cap added (LIMIT 1000)" in body and "no model call" in body
    assert "<!channel>" not in body

    many = tuple({"kind": "repair", "text": f"{NASTY} {i} " * 40} for i in range(300))
    long = valid(blocks.explanation(Explanation(question="q", steps=many)))
    assert len(long.blocks) <= 50 and "The first 260 steps are left out." in texts(long)
    valid(blocks.unknown_explanation())


def test_follow_up_note_names_who_asked() -> None:
    message = valid(blocks.asked("U0ALICE01", f"Drill into “{NASTY}”"))
    assert "<@U0ALICE01> asked: Drill into" in texts(message)
