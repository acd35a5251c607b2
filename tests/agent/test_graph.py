"""The question graph over a real DuckDB warehouse, the real gate and the scripted model."""

from __future__ import annotations

import json

import pytest

from agent.context import AgentLimits
from agent.conversation import Agent, sqlite_checkpointer
from agent.model.providers import ScriptedChatModel
from tests.agent.conftest import MakeAgent, clarify_reply, reply

BY_REGION = "SELECT region, SUM(amount) AS total FROM sales GROUP BY region ORDER BY total DESC"


@pytest.mark.slow
def test_question_proposal_approval_answer(make_agent: MakeAgent) -> None:
    agent, _, spy = make_agent([reply(BY_REGION)])
    outcome = agent.ask("t1", "revenue by region?", user="U1")
    assert outcome.kind == "proposal" and outcome.proposal
    assert spy.runs == 0, "nothing runs before approval"
    assert outcome.proposal.tables == ["shop.main.sales"]
    assert "LIMIT" in outcome.proposal.sql.upper()

    answer = agent.decide("t1", outcome.proposal.proposal_id, approved=True, user="U2").answer
    assert answer is not None
    assert answer.columns == ["region", "total"]
    assert answer.rows == [["North", 15], ["South", 7], ["East", 1.25]]
    assert (answer.total_rows, answer.capped, answer.approved_by) == (3, False, "U2")
    assert answer.connector == "duckdb" and spy.runs == 1
    assert agent.pending_proposal("t1") is None


def test_one_try_is_counted_in_words_that_agree(make_agent: MakeAgent) -> None:
    agent, model, _ = make_agent([reply("DELETE FROM sales")], limits=AgentLimits(max_attempts=1))
    outcome = agent.ask("t1", "delete every sale", user="U1")
    assert outcome.kind == "failed" and model.calls == 1
    assert "after 1 try." in outcome.message, outcome.message


def test_reject_runs_nothing(make_agent: MakeAgent) -> None:
    agent, _, spy = make_agent([reply(BY_REGION)])
    proposal = agent.ask("t1", "revenue by region?", user="U1").proposal
    assert proposal
    outcome = agent.decide("t1", proposal.proposal_id, approved=False, user="U2")
    assert outcome.kind == "rejected" and "U2" in outcome.message
    assert spy.runs == 0


@pytest.mark.slow
def test_stale_or_repeated_decision_changes_nothing(make_agent: MakeAgent) -> None:
    agent, _, spy = make_agent([reply(BY_REGION)])
    proposal = agent.ask("t1", "revenue by region?", user="U1").proposal
    assert proposal
    assert agent.decide("t1", "not-the-id", approved=True, user="U2").kind == "failed"
    assert agent.pending_proposal("t1") == proposal
    assert agent.decide("t1", proposal.proposal_id, approved=True, user="U2").kind == "answer"
    again = agent.decide("t1", proposal.proposal_id, approved=True, user="U2")
    assert again.kind == "failed" and "no longer waiting" in again.message
    assert agent.decide("unknown-thread", proposal.proposal_id, approved=True, user="U2").kind == (
        "failed"
    )
    assert spy.runs == 1


def test_validation_failure_is_repaired_with_the_gate_reason(make_agent: MakeAgent) -> None:
    agent, model, _ = make_agent([reply("SELECT regoin FROM sales"), reply(BY_REGION)])
    outcome = agent.ask("t1", "revenue by region?", user="U1")
    assert outcome.kind == "proposal"
    repair_prompt = model.seen[1][-1].content
    assert "regoin" in repair_prompt and "region" in repair_prompt


def test_three_validation_failures_end_with_a_clear_failure(make_agent: MakeAgent) -> None:
    bad = reply("DELETE FROM sales")
    agent, model, spy = make_agent([bad, bad, bad, reply(BY_REGION)])
    outcome = agent.ask("t1", "delete every sale", user="U1")
    assert outcome.kind == "failed"
    assert "after 3 tries" in outcome.message and "rephras" in outcome.message
    assert model.calls == 3 and spy.runs == 0
    assert agent.pending_proposal("t1") is None


def test_a_repair_is_answered_with_sql_not_a_question(make_agent: MakeAgent) -> None:
    """A small model asked to fix a draft tends to turn the problem list into a question for
    the person; the repair reply has no clarifying option, and one without SQL is asked again.
    (A draft naming missing columns is written afresh instead:
    tests/agent/nodes/test_redraft.py.)"""
    agent, model, _ = make_agent(
        [
            reply("DELETE FROM sales"),
            clarify_reply("Should I delete the sales?"),
            reply(BY_REGION),
        ]
    )
    outcome = agent.ask("t1", "revenue by region?", user="U1")
    assert outcome.kind == "proposal" and model.calls == 3
    assert "held no SQL" in model.seen[2][-1].content


def test_drafts_that_keep_naming_missing_columns_end_in_a_question(make_agent: MakeAgent) -> None:
    missing = reply("SELECT visitors FROM sales")
    agent, model, spy = make_agent([missing, missing, missing])
    outcome = agent.ask("t1", "how many website visitors per region?", user="U1")
    assert outcome.kind == "clarify" and model.calls == 3 and spy.runs == 0
    assert "Unknown column 'visitors'" in outcome.message
    assert "It has these tables: sales" in outcome.message


@pytest.mark.parametrize(
    "sql", ["SELECT 'last quarter' AS period", "SELECT NULL AS visitors", "SELECT current_date"]
)
def test_a_model_query_that_reads_no_table_ends_in_a_question(
    make_agent: MakeAgent, sql: str
) -> None:
    agent, model, spy = make_agent([reply(sql)])
    outcome = agent.ask("t1", "how are sales doing?", user="U1")
    assert outcome.kind == "clarify" and model.calls == 1 and spy.runs == 0
    assert "reads none of its tables" in outcome.message
    assert "It has these tables: sales" in outcome.message


def test_a_person_s_edit_that_reads_no_table_is_still_proposed(make_agent: MakeAgent) -> None:
    agent, _, _ = make_agent([reply(BY_REGION)])
    original = agent.ask("t1", "revenue by region?", user="U1").proposal
    assert original
    edited = agent.edit("t1", original.proposal_id, "SELECT 1 + 1 AS two", user="U2")
    assert edited.kind == "proposal" and edited.proposal


def test_unreadable_model_reply_is_retried_then_fails(make_agent: MakeAgent) -> None:
    agent, model, _ = make_agent(["this is not json", reply(BY_REGION)])
    assert agent.ask("t1", "revenue by region?", user="U1").kind == "proposal"
    assert "not valid JSON" in model.seen[1][-1].content

    agent, model, _ = make_agent(["nope", '{"kind": 3}', "[]"])
    outcome = agent.ask("t2", "revenue by region?", user="U1")
    assert outcome.kind == "failed" and "cannot read" in outcome.message
    assert model.calls == 3


@pytest.mark.slow
def test_runtime_error_is_repaired_and_approved_again(make_agent: MakeAgent) -> None:
    failing = "SELECT CAST(region AS INTEGER) AS r FROM sales"
    agent, model, spy = make_agent([reply(failing), reply(BY_REGION)])
    first = agent.ask("t1", "regions as numbers", user="U1").proposal
    assert first
    second = agent.decide("t1", first.proposal_id, approved=True, user="U2")
    assert second.kind == "proposal" and second.proposal
    assert second.proposal.proposal_id != first.proposal_id
    assert "warehouse returned an error" in model.seen[1][-1].content
    assert spy.runs == 1
    final = agent.decide("t1", second.proposal.proposal_id, approved=True, user="U2")
    assert final.kind == "answer" and spy.runs == 2


def test_clarifying_question(make_agent: MakeAgent) -> None:
    clarify = json.dumps({"kind": "clarify", "explanation": "Which year do you mean?", "sql": ""})
    agent, _, _ = make_agent([clarify])
    outcome = agent.ask("t1", "sales in the good year", user="U1")
    assert (outcome.kind, outcome.message) == ("clarify", "Which year do you mean?")


def test_empty_and_huge_questions_never_reach_the_model(make_agent: MakeAgent) -> None:
    agent, model, _ = make_agent([])
    empty = agent.ask("t1", "   ", user="U1")
    assert empty.kind == "failed" and "Ask me a question" in empty.message
    huge = agent.ask("t1", "é" * 20_000, user="U1")
    assert huge.kind == "failed" and "20,000 characters" in huge.message
    assert model.calls == 0
    assert agent.has_thread("t1")


def test_pasted_sql_is_gated_and_proposed_without_the_model(make_agent: MakeAgent) -> None:
    agent, model, _ = make_agent([])
    outcome = agent.ask("t1", f"```sql\n{BY_REGION};\n```", user="U1")
    assert outcome.kind == "proposal" and outcome.proposal
    assert outcome.proposal.tables == ["shop.main.sales"]
    assert model.calls == 0


@pytest.mark.slow
def test_follow_up_sees_the_earlier_turn(make_agent: MakeAgent) -> None:
    monthly = (
        "SELECT date_trunc('month', sold_on) AS month, SUM(amount) AS total FROM sales GROUP BY 1"
    )
    agent, model, _ = make_agent([reply(BY_REGION), reply(monthly)])
    proposal = agent.ask("t1", "revenue by region?", user="U1").proposal
    assert proposal
    agent.decide("t1", proposal.proposal_id, approved=True, user="U1")
    assert agent.ask("t1", "and by month?", user="U1").kind == "proposal"
    history = "\n".join(str(m.content) for m in model.seen[1])
    assert "revenue by region?" in history and f"SQL: {proposal.sql}" in history
    assert "Result columns: region, total (3 rows)" in history


def test_a_model_failure_fails_clearly_and_the_thread_continues(make_agent: MakeAgent) -> None:
    agent, model, _ = make_agent([])  # an empty script raises on the first call
    outcome = agent.ask("t1", "revenue by region?", user="U1")
    assert outcome.kind == "failed" and "ran out of replies" in outcome.message
    model.replies.append(reply(BY_REGION))
    assert agent.ask("t1", "revenue by region?", user="U1").kind == "proposal"


@pytest.mark.slow
def test_a_new_question_supersedes_a_pending_proposal(make_agent: MakeAgent) -> None:
    agent, _, spy = make_agent([reply(BY_REGION), reply("SELECT COUNT(*) AS n FROM sales")])
    old = agent.ask("t1", "revenue by region?", user="U1").proposal
    new = agent.ask("t1", "how many sales?", user="U1").proposal
    assert old and new and old.proposal_id != new.proposal_id
    assert agent.decide("t1", old.proposal_id, approved=True, user="U1").kind == "failed"
    answer = agent.decide("t1", new.proposal_id, approved=True, user="U1").answer
    assert answer and answer.rows == [[4]] and spy.runs == 1


@pytest.mark.slow
def test_state_survives_a_restart(make_agent: MakeAgent, tmp_path) -> None:
    state = tmp_path / "state.sqlite"
    agent, _, _ = make_agent([reply(BY_REGION)], checkpointer=sqlite_checkpointer(state))
    proposal = agent.ask("slack:C1:1.2", "revenue by region?", user="U1").proposal
    assert proposal
    del agent
    restarted, _, spy = make_agent([], checkpointer=sqlite_checkpointer(state))
    assert isinstance(restarted, Agent)
    assert restarted.pending_proposal("slack:C1:1.2") == proposal
    outcome = restarted.decide("slack:C1:1.2", proposal.proposal_id, approved=True, user="U2")
    assert outcome.kind == "answer" and spy.runs == 1


def test_scripted_model_reads_jsonl(tmp_path) -> None:
    path = tmp_path / "script.jsonl"
    path.write_text(reply("SELECT 1") + "\n\n" + json.dumps("raw text") + "\n", encoding="utf-8")
    model = ScriptedChatModel.from_jsonl(path)
    assert model.replies[1] == "raw text" and json.loads(model.replies[0])["sql"] == "SELECT 1"


def test_an_edit_is_gated_and_needs_its_own_approval(make_agent: MakeAgent) -> None:
    agent, model, spy = make_agent([reply(BY_REGION)])
    original = agent.ask("t1", "revenue by region?", user="U1").proposal
    assert original
    edited = agent.edit(
        "t1", original.proposal_id, "SELECT region FROM sales WHERE amount > 5", user="U2"
    )
    assert edited.kind == "proposal" and edited.proposal
    assert edited.proposal.proposal_id != original.proposal_id
    assert "amount > 5" in edited.proposal.sql and "U2" in edited.proposal.explanation
    assert spy.runs == 0 and model.calls == 1, "an edit runs nothing and asks no model"
    assert agent.decide("t1", original.proposal_id, approved=True, user="U2").kind == "failed"
    answer = agent.decide("t1", edited.proposal.proposal_id, approved=True, user="U3").answer
    assert answer and answer.rows == [["North"], ["South"]] and spy.runs == 1
    events = [e["event"] for e in agent.deps.audit.events("t1")]
    assert events == ["proposed", "proposed", "approved", "executed"]


@pytest.mark.slow
def test_a_broken_edit_changes_nothing(make_agent: MakeAgent) -> None:
    agent, _, spy = make_agent([reply(BY_REGION)])
    original = agent.ask("t1", "revenue by region?", user="U1").proposal
    assert original
    for broken in ("SELEC region FROM", "DROP TABLE sales", "SELECT nope FROM sales", ""):
        outcome = agent.edit("t1", original.proposal_id, broken, user="U2")
        assert outcome.kind == "failed" and "not accepted" in outcome.message
        assert outcome.proposal == original
        assert agent.pending_proposal("t1") == original
    assert agent.edit("t1", "stale", "SELECT 1", user="U2").kind == "failed"
    answer = agent.decide("t1", original.proposal_id, approved=True, user="U2").answer
    assert answer and spy.runs == 1


def test_a_run_is_keyed_by_the_approval_and_labelled(make_agent: MakeAgent) -> None:
    agent, _, spy = make_agent([reply(BY_REGION)])
    proposal = agent.ask("t1", "revenue by region?", user="U1").proposal
    assert proposal
    labels = {"slack_team": "T1", "slack_channel": "C1"}
    agent.decide("t1", proposal.proposal_id, approved=True, user="U2", labels=labels)
    context = spy.contexts[-1]
    assert context and context.job_key == proposal.proposal_id
    assert context.labels == {**labels, "requester": "U1", "approver": "U2"}


def test_the_prompt_names_the_engines_sql(make_agent: MakeAgent) -> None:
    agent, model, _ = make_agent([reply(BY_REGION)])
    agent.ask("t1", "revenue by region?", user="U1")
    system = str(model.seen[0][0].content)
    assert "DuckDB SQL" in system and "shop.main.sales" in system


class Crash(BaseException):
    """Stands for the process dying in the middle of a step (not an error the graph handles)."""


@pytest.mark.slow
def test_interrupted_decision_reads_where_an_approval_left_the_thread(
    make_agent: MakeAgent,
) -> None:
    agent, _, spy = make_agent([reply(BY_REGION), reply(BY_REGION)])
    first = agent.ask("t1", "revenue by region?", user="U1").proposal
    assert first
    # the approval never reached the graph: it still waits on the same proposal
    waiting = agent.interrupted_decision("t1", first.proposal_id)
    assert waiting and waiting.proposal and waiting.proposal.proposal_id == first.proposal_id
    assert agent.interrupted_decision("t1", "another-id") is None

    # the graph took the approval and finished: the outcome, as decide returned it
    done = agent.decide("t1", first.proposal_id, approved=True, user="U2")
    found = agent.interrupted_decision("t1", first.proposal_id)
    assert found and found.kind == "answer" and found.answer == done.answer

    # the graph took the approval and the process died while the query ran: unknown
    second = agent.ask("t1", "and again?", user="U1").proposal
    assert second
    assert agent.interrupted_decision("t1", first.proposal_id) is None  # the thread moved on
    original = spy.run

    def dies(sql: str, **kwargs: object) -> object:
        raise Crash

    spy.run = dies  # type: ignore[method-assign]
    with pytest.raises(Crash):
        agent.decide("t1", second.proposal_id, approved=True, user="U2")
    spy.run = original  # type: ignore[method-assign]
    assert agent.interrupted_decision("t1", second.proposal_id) is None
    assert agent.pending_proposal("t1") is None
    assert spy.runs == 1
