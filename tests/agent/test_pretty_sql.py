"""Issue 17 item 3: a proposal's SQL is the gate's pretty text in the warehouse's dialect (one
clause a line), and that same text is hashed for approval, run, recorded and answered with.

Over the real graph, gate and DuckDB warehouse (the scripted model proposes on one line)."""

from __future__ import annotations

import pytest

from agent.memory.audit import sql_sha256
from tests.agent.conftest import MakeAgent, reply

#: A WITH query with a join and GROUP BY, on one line as a model writes it.
BEST_REGION = (
    "WITH by_region AS (SELECT region, SUM(amount) AS total FROM sales GROUP BY region) "
    "SELECT s.region, COUNT(*) AS sales, b.total FROM sales AS s "
    "JOIN by_region AS b ON b.region = s.region GROUP BY s.region, b.total ORDER BY b.total DESC"
)

PRETTY = """WITH by_region AS (
  SELECT
    region,
    SUM(amount) AS total
  FROM shop.main.sales
  GROUP BY
    region
)
SELECT
  s.region,
  COUNT(*) AS sales,
  b.total
FROM shop.main.sales AS s
JOIN by_region AS b
  ON b.region = s.region
GROUP BY
  s.region,
  b.total
ORDER BY
  b.total DESC
LIMIT 1000"""


@pytest.mark.slow
def test_a_with_query_is_proposed_pretty_and_that_text_is_approved_and_run(
    make_agent: MakeAgent,
) -> None:
    agent, _, spy = make_agent([reply(BEST_REGION, "Sales and revenue by region.")])
    proposal = agent.ask("t1", "sales and revenue by region?", user="U1").proposal
    assert proposal is not None
    assert proposal.sql == PRETTY
    assert proposal.sql_sha256 == sql_sha256(PRETTY)

    outcome = agent.decide(
        "t1", proposal.proposal_id, approved=True, user="U2", sql_sha256=sql_sha256(PRETTY)
    )
    assert outcome.kind == "answer" and outcome.answer is not None, outcome.message
    assert spy.runs == 1
    assert outcome.answer.sql == PRETTY
    assert outcome.answer.rows[0] == ["North", 2, 15.0]
    events = {e["event"]: e for e in agent.deps.audit.events("t1")}
    assert events["proposed"]["sql"] == PRETTY
    assert events["approved"]["sql_sha256"] == sql_sha256(PRETTY)
    assert events["executed"]["sql"] == PRETTY


def test_a_person_s_one_line_edit_comes_back_pretty(make_agent: MakeAgent) -> None:
    agent, _, spy = make_agent([reply("SELECT region FROM sales")])
    proposal = agent.ask("t1", "regions?", user="U1").proposal
    assert proposal is not None
    assert proposal.sql == "SELECT\n  region\nFROM shop.main.sales\nLIMIT 1000"
    edited = agent.edit("t1", proposal.proposal_id, BEST_REGION, user="U2").proposal
    assert edited is not None and edited.proposal_id != proposal.proposal_id
    assert edited.sql == PRETTY and edited.sql_sha256 == sql_sha256(PRETTY)
    assert spy.runs == 0
