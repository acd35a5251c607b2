"""Issue 17 item 3 in Slack: the gate's pretty SQL keeps its line breaks in the proposal, its
decided and running forms, the answer and the Edit SQL modal; what a card shows is exactly the
text its buttons' hash covers; SQL too long for a message stays within Slack's limits, says so,
and is whole in a file.

The SQL comes from the real agent (scripted model, real gate, real DuckDB warehouse)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest
from langgraph.checkpoint.memory import InMemorySaver

from agent.context import AgentDeps
from agent.conversation import Agent
from agent.memory.audit import sql_sha256
from agent.model.providers import ScriptedChatModel
from agent.outcome import Answer, Proposal
from bot import blocks
from bot.blocks import APPROVE_ACTION, Message
from bot.blocks.attachments import sql_file
from bot.blocks.base import SECTION_TEXT
from bot.blocks.messages import card_of
from connectors.duckdb.connector import DuckDBConnector
from tests.support import slack_flow as flow
from tests.support.message_checks import valid
from tests.support.standin import check_view

BY_REGION = (
    "WITH totals AS (SELECT region, SUM(amount) AS total FROM sales GROUP BY region) "
    "SELECT s.region, COUNT(*) AS n, t.total FROM sales AS s "
    "JOIN totals AS t ON t.region = s.region GROUP BY s.region, t.total ORDER BY t.total DESC"
)
#: One line of 30,000+ characters: 1,500 computed columns (about 45,000 once pretty printed).
WIDE = "SELECT " + ", ".join(f"amount + {i} AS plus_{i:04d}" for i in range(1500)) + " FROM sales"


@pytest.fixture
def shop(tmp_path: Path) -> Iterator[DuckDBConnector]:
    path = tmp_path / "shop.duckdb"
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE sales (region VARCHAR, amount DECIMAL(10, 2))")
    con.execute("INSERT INTO sales VALUES ('North', 10.5), ('North', 4.5), ('South', 7)")
    con.close()
    connector = DuckDBConnector(path)
    yield connector
    connector.close()


def proposed(shop: DuckDBConnector, sql: str) -> tuple[Agent, Proposal]:
    reply = json.dumps({"kind": "sql", "explanation": "Sales by region.", "sql": sql})
    agent = Agent(
        AgentDeps(connector=shop, model=ScriptedChatModel(replies=[reply])), InMemorySaver()
    )
    outcome = agent.ask("t1", "sales by region?", user="U0ALICE01")
    assert outcome.proposal is not None, outcome.message
    return agent, outcome.proposal


def card_hash(message: Message) -> str:
    [actions] = [b for b in message.blocks if b["type"] == "actions"]
    value = next(e["value"] for e in actions["elements"] if e["action_id"] == APPROVE_ACTION)
    return card_of(value)[1]


def test_the_proposal_shows_the_pretty_sql_its_hash_covers(shop: DuckDBConnector) -> None:
    _, proposal = proposed(shop, BY_REGION)
    assert proposal.sql.startswith("WITH totals AS (\n  SELECT\n    region,\n")
    message = valid(blocks.proposal(proposal, requested_by="U0ALICE01"))
    assert flow.shown_sql(message) == proposal.sql
    assert sql_sha256(flow.shown_sql(message)) == card_hash(message) == proposal.sql_sha256
    [code] = [
        b["text"]["text"] for b in message.blocks if "```" in b.get("text", {}).get("text", "")
    ]
    assert "\nFROM shop.main.sales AS s\nJOIN totals AS t\n  ON t.region = s.region\n" in code
    for form in (
        blocks.decided(proposal, requested_by="U0ALICE01", verdict=blocks.approved_by("U0BOB0001")),
        blocks.running_card(proposal, requested_by="U0ALICE01", verdict="Running… 1 s"),
    ):
        assert flow.shown_sql(valid(form)) == proposal.sql


def test_the_answer_keeps_the_line_breaks(shop: DuckDBConnector) -> None:
    agent, proposal = proposed(shop, BY_REGION)
    outcome = agent.decide("t1", proposal.proposal_id, approved=True, user="U0BOB0001")
    answer = outcome.answer
    assert answer is not None and answer.sql == proposal.sql
    assert flow.shown_sql(valid(blocks.result(answer, display_rows=20))) == proposal.sql
    assert len(proposal.sql.splitlines()) > 15


def test_the_edit_modal_starts_from_the_pretty_sql(shop: DuckDBConnector) -> None:
    _, proposal = proposed(shop, BY_REGION)
    view = check_view(blocks.edit_modal(proposal), "modal")
    field = next(b for b in view["blocks"] if b["type"] == "input")["element"]
    assert field["multiline"] is True
    assert field["initial_value"] == proposal.sql and "\n  ON t.region = s.region\n" in proposal.sql


@pytest.mark.slow
def test_sql_too_long_for_a_message_is_cut_at_a_line_within_limits_and_whole_in_a_file(
    shop: DuckDBConnector,
) -> None:
    _, proposal = proposed(shop, WIDE)
    assert len(proposal.sql) > 40_000 and proposal.sql.count("\n") > 1500
    assert blocks.sql_cut(proposal.sql)
    for message in (
        blocks.proposal(proposal, requested_by="U0ALICE01"),
        blocks.decided(proposal, requested_by="U0ALICE01", verdict=blocks.approved_by("U1")),
    ):
        valid(message)
        assert len(message.blocks) <= 50
        assert all(len(b["text"]["text"]) <= SECTION_TEXT for b in message.blocks if "text" in b)
        shown = flow.shown_sql(message)
        assert 25_000 < len(shown) < len(proposal.sql)
        assert proposal.sql.startswith(shown + "\n"), "cut at a line end, nothing reordered"
        notes = json.dumps(message.blocks)
        assert f"{len(proposal.sql):,} characters long; only the start is shown" in notes
        assert f"`{blocks.PROPOSED_SQL_FILE}`" in notes
    file = sql_file(proposal.sql, blocks.PROPOSED_SQL_FILE, "The proposed SQL")
    assert file.content.decode("utf-8") == proposal.sql
    assert sql_sha256(file.content.decode("utf-8")) == proposal.sql_sha256

    answer = Answer(
        question="q",
        sql=proposal.sql,
        explanation="Wide.",
        tables=list(proposal.tables),
        columns=["plus_0000"],
        rows=[[1]],
        total_rows=1,
        capped=False,
        elapsed_s=0.1,
        connector="duckdb",
        approved_by="U0BOB0001",
    )
    result = valid(blocks.result(answer, display_rows=20))
    assert len(result.blocks) <= 50 and proposal.sql.startswith(flow.shown_sql(result) + "\n")
    assert f"the whole statement is in the file `{blocks.RAN_SQL_FILE}`" in json.dumps(
        result.blocks
    )


def test_sql_that_fits_is_never_cut(shop: DuckDBConnector) -> None:
    _, proposal = proposed(shop, BY_REGION)
    assert not blocks.sql_cut(proposal.sql)
    assert "only the start" not in json.dumps(blocks.proposal(proposal, requested_by="U1").blocks)
