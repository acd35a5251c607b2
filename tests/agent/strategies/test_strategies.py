"""Each answer-quality strategy's routing, with the scripted model over a real DuckDB warehouse."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest

from agent.context import AgentLimits, Strategies
from agent.memory.failures import FailureStore
from agent.model.question_context import ContextLimits
from agent.nodes.candidates import normalised
from bot.blocks.messages import proposal as proposal_message
from tests.agent.conftest import (
    NORTH,
    SOUTH,
    ByDraft,
    Make,
    check_reply,
    plan_reply,
    prompt_of,
    reply,
)

# -- self-check -----------------------------------------------------------------------------


@pytest.mark.slow
def test_self_check_failure_goes_to_repair_and_the_repaired_sql_passes(make: Make) -> None:
    agent, model, _ = make(
        [
            reply(SOUTH),
            check_reply(False, "The question asks about the North region, not South."),
            reply(NORTH),
            check_reply(True),
        ],
        "none,self_check",
    )
    outcome = agent.ask("t1", "What were total sales in the North?", user="U1")
    assert outcome.kind == "proposal" and outcome.proposal
    assert "'North'" in outcome.proposal.sql and model.calls == 4
    # the check saw the accepted SQL; the repair step saw the check's feedback
    assert "'South'" in prompt_of(model, 1) and "North region, not South" in prompt_of(model, 2)
    assert "'South'" in prompt_of(model, 2)
    usage = outcome.proposal.usage
    assert usage and usage["nodes"]["check"]["calls"] == 2
    assert usage["nodes"]["generate"]["calls"] == 2 and usage["calls"] == 4
    events = [e["event"] for e in agent.deps.audit.events("t1")]
    assert "self_check_failed" in events


@pytest.mark.slow
def test_a_self_check_doubt_with_no_attempts_left_reaches_the_person_as_a_warning(
    make: Make,
) -> None:
    agent, _, _ = make([reply(SOUTH), check_reply(False, "Wrong region.")], "none,self_check")
    agent.deps.limits = AgentLimits(max_attempts=1, profile_values=True)
    outcome = agent.ask("t1", "What were total sales in the North?", user="U1")
    assert outcome.kind == "proposal" and outcome.proposal
    assert any(
        "A second check doubted this query: Wrong region." in w for w in outcome.proposal.warnings
    )


def test_pasted_sql_is_not_self_checked(make: Make) -> None:
    agent, model, _ = make([], "none,self_check")
    outcome = agent.ask("t1", NORTH, user="U1")
    assert outcome.kind == "proposal" and model.calls == 0


# -- candidates -----------------------------------------------------------------------------


@pytest.mark.slow
def test_three_candidates_two_agreeing_propose_their_sql_and_say_so(make: Make) -> None:
    same = "select sum(AMOUNT) as total\nfrom SALES where REGION = 'North'"
    # the odd one out is the first draft: only agreement makes the other two win
    model = ByDraft(replies=[reply(SOUTH), reply(NORTH), reply(same)])
    agent, _, _ = make([], "none,candidates:3", model=model)
    outcome = agent.ask("t1", "What were total sales in the North?", user="U1")
    assert outcome.kind == "proposal" and outcome.proposal
    assert model.calls == 3
    assert "'North'" in outcome.proposal.sql
    assert normalised(NORTH, "duckdb") == normalised(same, "duckdb")
    assert "2 of 3 drafts agreed on this query." in outcome.proposal.warnings
    assert outcome.proposal.usage and outcome.proposal.usage["nodes"]["candidates"]["calls"] == 3
    drafts = [prompt_of(model, i) for i in range(3)]
    assert sum("Draft 2 of 3" in p or "Draft 3 of 3" in p for p in drafts) == 2


@pytest.mark.slow
def test_a_candidate_the_gate_refuses_loses_to_one_that_passes(make: Make) -> None:
    broken = "SELECT SUM(amount) AS total FROM sales WHERE regoin = 'North'"
    agent, _, _ = make([reply(broken), reply(broken), reply(NORTH)], "none,candidates:3")
    outcome = agent.ask("t1", "What were total sales in the North?", user="U1")
    assert outcome.kind == "proposal" and outcome.proposal
    assert "region = 'North'" in outcome.proposal.sql
    assert "1 of 3 drafts agreed on this query; 2 failed the checks." in outcome.proposal.warnings


@pytest.mark.slow
def test_candidates_that_agree_carry_no_note(make: Make) -> None:
    agent, _, _ = make([reply(NORTH)] * 3, "none,candidates:3")
    outcome = agent.ask("t1", "What were total sales in the North?", user="U1")
    assert outcome.proposal and not any("drafts" in w for w in outcome.proposal.warnings)


# -- plan first -----------------------------------------------------------------------------


@pytest.mark.slow
def test_a_plan_value_not_in_the_data_is_corrected_before_the_sql(make: Make) -> None:
    agent, model, _ = make([plan_reply(("sales.region", "north")), reply(NORTH)], "none,plan")
    outcome = agent.ask("t1", "What were total sales in the north?", user="U1")
    assert outcome.kind == "proposal" and outcome.proposal
    sql_prompt = prompt_of(model, 1)
    assert "sales.region: 'north' does not occur; use 'North'" in sql_prompt
    plan = outcome.proposal.plan
    assert plan and plan["filters"] == [
        {"column": "sales.region", "operator": "=", "value": "North", "asked": "north"}
    ]
    assert outcome.proposal.usage and outcome.proposal.usage["nodes"]["plan"]["calls"] == 1
    # the thread shows the plan with the proposal
    shown = json.dumps(proposal_message(outcome.proposal, requested_by="U1").blocks)
    assert "*How I read your question*" in shown
    assert "Filter: sales.region = 'North' (you wrote 'north', which does not occur)" in shown


@pytest.mark.slow
def test_a_plan_value_with_nothing_close_asks_before_any_sql(make: Make) -> None:
    agent, model, _ = make([plan_reply(("sales.region", "Atlantis"))], "none,plan")
    outcome = agent.ask("t1", "What were total sales in Atlantis?", user="U1")
    assert outcome.kind == "clarify" and model.calls == 1
    assert "I could not find 'Atlantis' in sales.region" in outcome.message
    assert "Which one do you mean?" in outcome.message


@pytest.mark.slow
def test_a_plan_that_holds_real_values_goes_to_the_sql_step_unchanged(make: Make) -> None:
    agent, model, _ = make([plan_reply(("sales.region", "South")), reply(SOUTH)], "none,plan")
    outcome = agent.ask("t1", "South sales?", user="U1")
    assert outcome.proposal and outcome.proposal.plan
    assert outcome.proposal.plan["corrections"] == []
    assert "Filter: sales.region = 'South'" in prompt_of(model, 1)


def test_a_plan_that_asks_back_ends_with_its_question(make: Make) -> None:
    asked = plan_reply(kind="clarify", explanation="Which period do you mean?")
    agent, model, _ = make([asked], "none,plan")
    outcome = agent.ask("t1", "How did sales go?", user="U1")
    assert (outcome.kind, outcome.message, model.calls) == (
        "clarify",
        "Which period do you mean?",
        1,
    )


# -- question variations --------------------------------------------------------------------


@pytest.fixture(scope="module")
def two_tables(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("vary") / "two.duckdb"
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE sales (region VARCHAR, amount DECIMAL(10, 2))")
    con.execute("INSERT INTO sales VALUES ('North', 10.5)")
    con.execute("CREATE TABLE staff (person VARCHAR, team VARCHAR)")
    con.execute("INSERT INTO staff VALUES ('Ann', 'Ops')")
    con.close()
    return path


def test_variations_widen_table_retrieval_only(make: Make, two_tables: Path) -> None:
    paraphrases = json.dumps({"questions": ["sales amount by region", "revenue per region"]})
    narrow = ContextLimits(full_schema_tokens=1, top_tables=1, max_tables=1)
    agent, model, _ = make(
        [paraphrases, reply("SELECT region, SUM(amount) FROM sales GROUP BY region")],
        "none,variations:2",
        path=two_tables,
        context_limits=narrow,
    )
    outcome = agent.ask("t1", "What did each area take in?", user="U1")
    assert outcome.kind == "proposal" and model.calls == 2
    sql_prompt = prompt_of(model, 1)
    assert "two.main.sales" in sql_prompt and "two.main.staff" not in sql_prompt
    # the paraphrases only steer the search: the model is asked the question as it was put
    assert "revenue per region" not in sql_prompt
    assert str(model.seen[1][-1].content) == "What did each area take in?"


def test_a_variations_call_that_fails_leaves_the_search_to_the_question(
    make: Make, two_tables: Path
) -> None:
    narrow = ContextLimits(full_schema_tokens=1, top_tables=1, max_tables=1)
    outage = json.dumps({"__error__": "the service is down"})
    agent, model, _ = make(
        [outage, reply("SELECT region, SUM(amount) FROM sales GROUP BY region")],
        "none,variations:2",
        path=two_tables,
        context_limits=narrow,
    )
    outcome = agent.ask("t1", "sales amount by region?", user="U1")
    assert outcome.kind == "proposal" and model.calls == 2
    assert "two.main.sales" in prompt_of(model, 1), "found by the question alone"
    account = agent.explain("t1")
    assert account is not None
    assert [s["text"] for s in account.steps if s["kind"] == "variations"] == [
        "The question could not be rephrased (ScriptedOutage), so tables were searched with "
        "the question alone."
    ]


def test_variations_cost_nothing_when_the_whole_schema_is_shown(make: Make) -> None:
    agent, model, _ = make([reply(NORTH)], "none,variations:2")
    assert agent.ask("t1", "North sales?", user="U1").kind == "proposal"
    assert model.calls == 1


# -- remember failures ----------------------------------------------------------------------


@pytest.mark.slow
def test_failures_in_a_thread_and_recurring_ones_become_avoid_hints(
    make: Make, tmp_path: Path
) -> None:
    store = FailureStore(tmp_path / "failures.sqlite")
    bad = reply("SELECT regoin FROM sales")
    good = reply(NORTH)
    other_mistake = reply("SELECT amout FROM sales")
    other_table = reply("SELECT region FROM returns")
    agent, model, _ = make(
        [bad, good, good, bad, good, good, other_mistake, good, other_table, good],
        "none,remember_failures",
        failures=store,
    )
    assert agent.ask("t1", "North sales?", user="U1").kind == "proposal"
    assert "Mistakes already made" not in prompt_of(model, 0)
    # the repair lists the draft's own problem once, not again as a hint
    assert "regoin" in prompt_of(model, 1) and "Mistakes already made" not in prompt_of(model, 1)
    # the next question in the same thread is warned
    assert agent.ask("t1", "North sales again?", user="U1").kind == "proposal"
    assert "Mistakes already made" in prompt_of(model, 2) and "regoin" in prompt_of(model, 2)
    # another thread: one failure elsewhere is not yet a pattern
    assert agent.ask("t2", "North sales?", user="U1").kind == "proposal"
    assert "Mistakes already made" not in prompt_of(model, 3)
    # a second thread met it: recurring, but never put before a new question's first draft
    assert agent.ask("t3", "North sales?", user="U1").kind == "proposal"
    assert "Mistakes already made" not in prompt_of(model, 5)
    # ... only before the repair of a draft that read the table it happened on
    assert agent.ask("t4", "North sales?", user="U1").kind == "proposal"
    assert "amout" in prompt_of(model, 7) and "regoin" in prompt_of(model, 7)
    assert agent.ask("t5", "Returns by region?", user="U1").kind == "proposal"
    assert "returns" in prompt_of(model, 9) and "regoin" not in prompt_of(model, 9)
    store.close()
    # kept across restarts (a file), per connector
    again = FailureStore(tmp_path / "failures.sqlite")
    assert any("regoin" in h for h in again.hints("duckdb", "t9", tables={"sales"}))
    assert again.hints("duckdb", "t9") == [], "no draft's tables: no other thread's mistake"
    assert again.hints("postgres", "t9", tables={"sales"}) == []
    # an evaluation keeps each question to itself
    alone = FailureStore(tmp_path / "failures.sqlite", across_threads=False)
    assert alone.hints("duckdb", "t9", tables={"sales"}) == []
    assert any("regoin" in h for h in alone.hints("duckdb", "t1", tables={"sales"}))


@pytest.mark.slow
def test_failures_are_not_hinted_when_the_strategy_is_off(make: Make) -> None:
    bad = reply("SELECT regoin FROM sales")
    agent, model, _ = make([bad, reply(NORTH), reply(NORTH)], "none")
    agent.ask("t1", "North sales?", user="U1")
    agent.ask("t1", "North sales again?", user="U1")
    assert "Mistakes already made" not in prompt_of(model, 2)


@pytest.mark.slow
def test_everything_on_at_once(make: Make) -> None:
    replies = [
        plan_reply(("sales.region", "north")),
        reply(NORTH),
        reply(NORTH),
        reply(SOUTH),
        check_reply(True),
    ]
    agent, model, _ = make(replies, "plan,self_check,candidates:3,variations:2")
    outcome = agent.ask("t1", "What were total sales in the north?", user="U1")
    assert outcome.kind == "proposal" and outcome.proposal and model.calls == 5
    assert "'North'" in outcome.proposal.sql
    answer = agent.decide("t1", outcome.proposal.proposal_id, approved=True, user="U2").answer
    assert answer and answer.rows == [[15]]
    assert answer.usage and set(answer.usage["nodes"]) == {"plan", "candidates", "check"}
    assert Strategies().remember_failures
