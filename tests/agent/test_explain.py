"""The "How did you get this?" account: `Agent.explain` reads the question's steps back from
the thread's state, with no model call, across later questions and a restart."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent.conversation import sqlite_checkpointer
from bot.blocks.explain import explanation
from tests.agent.conftest import (
    NORTH,
    SOUTH,
    Make,
    MakeAgent,
    check_reply,
    plan_reply,
    reply,
)

BY_REGION = "SELECT region, SUM(amount) AS total FROM sales GROUP BY region ORDER BY total DESC"


def kinds(steps: tuple[dict[str, str], ...]) -> list[str]:
    return [s["kind"] for s in steps]


@pytest.mark.slow
def test_explains_a_repair_and_a_gate_fix_without_a_model_call(make_agent: MakeAgent) -> None:
    agent, model, _ = make_agent(
        [reply("SELECT regoin FROM sales"), reply(f"```sql\n{BY_REGION};\n```")]
    )
    proposal = agent.ask("t1", "revenue by region?", user="U1").proposal
    assert proposal
    answer = agent.decide("t1", proposal.proposal_id, approved=True, user="U2").answer
    assert answer and answer.proposal_id == proposal.proposal_id
    calls, seen = model.calls, len(model.seen)

    account = agent.explain("t1", proposal.proposal_id)
    assert account is not None
    assert (model.calls, len(model.seen)) == (calls, seen) == (2, 2), "no model call"
    assert kinds(account.steps) == [
        "question",
        "model",
        "checks_failed",
        "redraft",  # a missing column: written afresh (the redraft strategy)
        "gate_fix",
        "proposed",
        "approved",
        "executed",
    ]
    text = {s["kind"]: s["text"] for s in account.steps}
    assert "regoin" in text["checks_failed"]
    assert "row cap added (LIMIT 1000)" in text["gate_fix"]
    assert "stripped markdown fence" in text["gate_fix"]
    assert "removed trailing semicolon" in text["gate_fix"]
    # each change, for counting; the row cap is not among them (every statement may get one)
    fix = next(s for s in account.steps if s["kind"] == "gate_fix")
    assert fix.get("changes") == ["stripped markdown fence", "removed trailing semicolon"]
    assert text["approved"] == "Approved by U2." and account.steps[6]["by"] == "U2"
    assert text["executed"].endswith("3 rows.")
    assert account.question == "U1 asked: “revenue by region?”"
    assert account.summary() == (
        "The model wrote the SQL; it was corrected once, adjusted by the gate."
    )


@pytest.mark.slow
def test_explains_an_edit_and_a_failed_run_sent_back(make_agent: MakeAgent) -> None:
    failing = "SELECT CAST(region AS INTEGER) AS r FROM sales"
    agent, _, _ = make_agent([reply(BY_REGION), reply(BY_REGION)])
    first = agent.ask("t1", "regions as numbers", user="U1").proposal
    assert first
    edited = agent.edit("t1", first.proposal_id, failing, user="U3").proposal
    assert edited
    repaired = agent.decide("t1", edited.proposal_id, approved=True, user="U2").proposal
    assert repaired
    agent.decide("t1", repaired.proposal_id, approved=True, user="U2")
    account = agent.explain("t1", repaired.proposal_id)
    assert account is not None
    steps = kinds(account.steps)
    assert steps[:6] == ["question", "model", "gate_fix", "proposed", "edited", "gate_fix"]
    assert steps[6:] == [
        "proposed",
        "approved",
        "execution_failed",
        "repair",
        "gate_fix",
        "proposed",
        "approved",
        "executed",
    ]
    failed = account.steps[8]["text"]
    assert failed.startswith("The warehouse returned an error") and "corrected" in failed
    assert account.steps[4]["by"] == "U3"
    assert account.summary() == (
        "The model wrote the SQL; it was corrected once, adjusted by the gate, edited by a person."
    )
    # every proposal of the question names the same account
    assert agent.explain("t1", first.proposal_id) == account


def test_pasted_sql_and_the_right_question_among_several(make_agent: MakeAgent) -> None:
    agent, model, _ = make_agent([reply(BY_REGION)])
    first = agent.ask("t1", "revenue by region?", user="U1").proposal
    assert first
    agent.decide("t1", first.proposal_id, approved=True, user="U2")
    second = agent.ask("t1", "SELECT COUNT(*) AS n FROM sales", user="U1").proposal
    assert second
    latest = agent.explain("t1")
    assert latest is not None and kinds(latest.steps)[:2] == ["question", "pasted"]
    assert latest.summary().startswith("The SQL was pasted")
    earlier = agent.explain("t1", first.proposal_id)
    assert earlier is not None and earlier.question == "U1 asked: “revenue by region?”"
    assert agent.explain("t1", "no-such-proposal") is None
    assert agent.explain("unknown-thread") is None
    assert model.calls == 1


def test_the_account_survives_a_restart(make_agent: MakeAgent, tmp_path: Path) -> None:
    path = tmp_path / "state.sqlite"
    agent, _, _ = make_agent([reply(BY_REGION)], checkpointer=sqlite_checkpointer(path))
    proposal = agent.ask("t1", "revenue by region?", user="U1").proposal
    assert proposal
    agent.decide("t1", proposal.proposal_id, approved=True, user="U2")
    before = agent.explain("t1", proposal.proposal_id)

    reopened, model, _ = make_agent([], checkpointer=sqlite_checkpointer(path))
    after = reopened.explain("t1", proposal.proposal_id)
    assert after == before and after is not None and model.calls == 0
    assert kinds(after.steps)[-1] == "executed"


@pytest.mark.slow
def test_the_account_names_the_strategy_steps(make: Make) -> None:
    doubt = "The question asks about the North, not the South."
    agent, model, _ = make(
        [
            plan_reply(("sales.region", "north")),
            *(reply(SOUTH), reply(SOUTH), reply(NORTH)),
            check_reply(False, doubt),
            reply(NORTH),
            check_reply(True),
        ],
        "none,plan,candidates:3,self_check",
    )
    proposal = agent.ask("t1", "What were total sales in the north?", user="U1").proposal
    assert proposal and "'North'" in proposal.sql
    calls = model.calls
    account = agent.explain("t1", proposal.proposal_id)
    assert account is not None and model.calls == calls == 7, "no model call"
    assert kinds(account.steps) == [
        "question",
        "plan",
        "candidates",
        "proposed",
        "self_check",
        "repair",
        "proposed",
        "self_check",
    ]
    text = [s["text"] for s in account.steps]
    assert "'north' to 'North' in sales.region" in text[1]
    assert text[2] == "3 drafts were written at once; 2 of 3 drafts agreed on the one kept."
    assert text[4] == f"A second check found a problem, so the SQL was rewritten: {doubt}"
    assert text[7].startswith("A second model call checked the SQL") and "no problem" in text[7]
    assert account.summary() == (
        "The model wrote the SQL; it planned the query first, correcting 'north' to 'North' in "
        "sales.region; 2 of 3 drafts agreed on the one kept; a second check had it rewritten "
        f"({doubt}); a second check passed it; it was corrected once."
    )
    shown = json.dumps(explanation(account).blocks, ensure_ascii=False)
    assert "a second check had it rewritten" in shown
