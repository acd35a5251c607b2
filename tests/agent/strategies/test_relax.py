"""Empty results: the loosened query (agent/strategies/relax.py), and its trip through the graph (a
new proposal, gated, audited and approved like any other) over the real DuckDB test warehouse."""

from __future__ import annotations

import pytest

from agent.catalog.snapshot import CatalogSnapshot, ColumnProfile, TableProfile
from agent.context import Strategies
from agent.strategies.relax import is_empty, relax
from connectors.base import ColumnInfo, TableInfo
from tests.agent.conftest import MakeAgent, reply

SALES = TableInfo(
    "shop.main.sales",
    (
        ColumnInfo("region", "VARCHAR"),
        ColumnInfo("amount", "DECIMAL(10,2)"),
        ColumnInfo("sold_on", "DATE"),
        ColumnInfo("sold_at", "TIMESTAMP"),
    ),
)
TABLES = ["shop.main.sales"]


def snapshot(dialect: str = "duckdb", profiled: bool = False) -> CatalogSnapshot:
    profiles = {}
    if profiled:
        region = ColumnProfile(3, ("North", "South", "East"), complete=True)
        profiles = {"shop.main.sales": TableProfile(4, {"region": region})}
    return CatalogSnapshot(tables=(SALES,), dialect=dialect, profiles=profiles)


def test_text_matches_become_case_insensitive_in_each_dialect() -> None:
    sql = "SELECT SUM(amount) FROM sales WHERE region = 'north' AND region LIKE 'n%'"
    duck = relax(sql, snapshot("duckdb"), TABLES)
    assert duck is not None
    assert duck.sql == (
        "SELECT SUM(amount) FROM sales WHERE LOWER(region) = LOWER('north') AND region ILIKE 'n%'"
    )
    assert duck.changes == ("matched region case-insensitively",)
    lite = relax(sql, snapshot("sqlite"), TABLES)
    assert lite is not None and "LOWER(region) LIKE LOWER('n%')" in lite.sql

    listed = relax(
        "SELECT * FROM sales WHERE 'north' = region OR region IN ('a', 'B')", snapshot(), TABLES
    )
    assert listed is not None
    assert "LOWER(region) = LOWER('north')" in listed.sql
    assert "LOWER(region) IN (LOWER('a'), LOWER('B'))" in listed.sql


def test_a_value_known_to_occur_is_not_why_nothing_matched() -> None:
    sql = "SELECT SUM(amount) FROM sales WHERE region = 'North' AND sold_on > DATE '2030-01-01'"
    relaxed = relax(sql, snapshot(profiled=True), TABLES)
    assert relaxed is not None
    assert relaxed.sql == "SELECT SUM(amount) FROM sales WHERE region = 'North'"
    assert relaxed.changes == (
        "dropped the date filter on sold_on (sold_on > CAST('2030-01-01' AS DATE))",
    )


def test_the_narrowest_date_window_is_dropped_and_other_filters_kept() -> None:
    sql = (
        "SELECT SUM(s.amount) FROM sales AS s WHERE s.sold_at >= '2020-01-01' "
        "AND s.sold_on >= DATE '2026-10-01' AND s.sold_on < DATE '2026-11-01' AND s.amount > 3"
    )
    relaxed = relax(sql, snapshot(), TABLES)
    assert relaxed is not None
    assert relaxed.sql == (
        "SELECT SUM(s.amount) FROM sales AS s WHERE s.sold_at >= '2020-01-01' AND s.amount > 3"
    )
    only = relax("SELECT * FROM sales WHERE sold_on = CURRENT_DATE", snapshot(), TABLES)
    assert only is not None and only.sql == "SELECT * FROM sales"


def test_nothing_to_loosen() -> None:
    assert relax("SELECT * FROM sales WHERE amount > 1000", snapshot(), TABLES) is None
    # a disjunction is not a top-level AND term: dropping one side would narrow the result
    assert (
        relax("SELECT * FROM sales WHERE sold_on > '2030-01-01' OR amount > 1", snapshot(), TABLES)
        is None
    )
    assert relax("SELECT * FROM sales WHERE region <> 'North'", snapshot(), TABLES) is None
    # matching more under NOT (or inside CASE) would let fewer rows through
    assert relax("SELECT * FROM sales WHERE NOT region = 'north'", snapshot(), TABLES) is None
    case = "SELECT * FROM sales WHERE CASE WHEN region = 'n' THEN 0 ELSE 1 END = 1"
    assert relax(case, snapshot(), TABLES) is None
    not_in = "SELECT * FROM sales WHERE region NOT IN (SELECT region FROM sales WHERE region = 'n')"
    assert relax(not_in, snapshot(), TABLES) is None


def test_ctes_and_derived_tables_are_loosened() -> None:
    sql = (
        "WITH n AS (SELECT * FROM sales WHERE region = 'north') "
        "SELECT * FROM (SELECT * FROM n WHERE sold_on > DATE '2030-01-01') AS d"
    )
    relaxed = relax(sql, snapshot(), TABLES)
    assert relaxed is not None and "LOWER(region) = LOWER('north')" in relaxed.sql
    assert relax("not sql at all (", snapshot(), TABLES) is None
    # only text columns meet LOWER: a number compared with a string, an unknown column
    assert relax("SELECT * FROM sales WHERE amount = '5'", snapshot(), TABLES) is None
    assert relax("SELECT * FROM sales WHERE nowhere = 'x'", snapshot(), TABLES) is None


def test_empty_means_no_rows_or_only_nulls() -> None:
    assert is_empty(["a"], [], 0)
    assert is_empty(["a", "b"], [[None, None]], 1)
    assert not is_empty(["a"], [[0]], 1)
    assert not is_empty(["a"], [[None]], 2), "a row not kept may hold a value"


@pytest.mark.slow
def test_null_only_result_gets_a_relaxed_proposal_that_runs_after_approval(
    make_agent: MakeAgent,
) -> None:
    agent, model, spy = make_agent(
        [reply("SELECT SUM(amount) AS total FROM sales WHERE region = 'north'", "North sales.")]
    )
    first = agent.ask("t1", "sales in the north?", user="U1").proposal
    assert first
    second = agent.decide("t1", first.proposal_id, approved=True, user="U2")
    assert second.kind == "proposal" and second.proposal and second.answer
    assert second.answer.rows == [[None]] and second.answer.proposal_id == first.proposal_id
    assert "only empty (NULL) values" in second.message
    assert "matched region case-insensitively" in second.message
    assert "needs its own approval" in second.message
    relaxed = second.proposal
    assert "LOWER(region) = LOWER('north')" in relaxed.sql
    assert relaxed.proposal_id != first.proposal_id
    assert agent.pending_proposal("t1") == relaxed
    assert spy.runs == 1, "the relaxed query waits for approval"

    final = agent.decide("t1", relaxed.proposal_id, approved=True, user="U3")
    assert final.kind == "answer" and final.answer
    assert final.answer.rows == [[15]] and final.answer.approved_by == "U3"
    assert spy.runs == 2 and model.calls == 1, "loosening took no model call"
    events = [(e["event"], e["proposal_id"]) for e in agent.deps.audit.events(thread_id="t1")]
    assert events == [
        ("proposed", first.proposal_id),
        ("approved", first.proposal_id),
        ("executed", first.proposal_id),
        ("proposed", relaxed.proposal_id),
        ("approved", relaxed.proposal_id),
        ("executed", relaxed.proposal_id),
    ]


@pytest.mark.slow
def test_no_rows_in_a_date_window_drops_the_window(make_agent: MakeAgent) -> None:
    sql = (
        "SELECT region, SUM(amount) AS total FROM sales "
        "WHERE sold_on >= DATE '2025-01-01' AND sold_on < DATE '2025-02-01' GROUP BY region"
    )
    agent, _, _ = make_agent([reply(sql)])
    first = agent.ask("t1", "sales in January 2025?", user="U1").proposal
    assert first
    second = agent.decide("t1", first.proposal_id, approved=True, user="U2")
    assert second.kind == "proposal" and second.proposal and second.answer
    assert second.answer.total_rows == 0 and "returned no rows" in second.message
    assert "sold_on" not in second.proposal.sql.split("WHERE")[-1]
    final = agent.decide("t1", second.proposal.proposal_id, approved=True, user="U2")
    assert final.answer and final.answer.total_rows == 3


@pytest.mark.slow
def test_relaxed_once_only_and_rejecting_it_runs_nothing(make_agent: MakeAgent) -> None:
    agent, _, spy = make_agent(
        [reply("SELECT SUM(amount) AS total FROM sales WHERE region = 'west'")] * 2
    )
    first = agent.ask("t1", "sales in the west?", user="U1").proposal
    assert first
    relaxed = agent.decide("t1", first.proposal_id, approved=True, user="U2").proposal
    assert relaxed
    still_empty = agent.decide("t1", relaxed.proposal_id, approved=True, user="U2")
    assert still_empty.kind == "answer" and still_empty.answer
    assert still_empty.answer.rows == [[None]], "an empty relaxed result is the answer"
    assert agent.pending_proposal("t1") is None and spy.runs == 2

    first = agent.ask("t2", "sales in the west?", user="U1").proposal
    assert first
    relaxed = agent.decide("t2", first.proposal_id, approved=True, user="U2").proposal
    assert relaxed
    rejected = agent.decide("t2", relaxed.proposal_id, approved=False, user="U2")
    assert rejected.kind == "rejected" and spy.runs == 3


@pytest.mark.parametrize("relax_empty", [True, False])
def test_nothing_to_loosen_or_switched_off_leaves_the_empty_answer(
    make_agent: MakeAgent, relax_empty: bool
) -> None:
    sql = "SELECT SUM(amount) AS total FROM sales WHERE amount > 1000"
    if not relax_empty:
        sql = "SELECT SUM(amount) AS total FROM sales WHERE region = 'north'"
    agent, _, spy = make_agent([reply(sql)], strategies=Strategies(relax_empty=relax_empty))
    first = agent.ask("t1", "big sales?", user="U1").proposal
    assert first
    outcome = agent.decide("t1", first.proposal_id, approved=True, user="U2")
    assert outcome.kind == "answer" and outcome.answer and outcome.answer.rows == [[None]]
    assert spy.runs == 1 and agent.pending_proposal("t1") is None
    kinds = [s["kind"] for s in agent.explain("t1").steps]  # type: ignore[union-attr]
    assert ("not_relaxed" in kinds) is relax_empty
    assert Strategies().relax_empty, "on by default"
    assert ("relaxed" in kinds) is False
