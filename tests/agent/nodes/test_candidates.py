"""The candidates strategy: drafts in flight at once, each statement screened once, the rule
between SQL and clarifying drafts, model faults, and the agreement note belonging to its draft
only (a repair, an edit, a run sent back or the loosened query has none)."""

from __future__ import annotations

import threading

import pytest

from agent.gate import Verdict
from agent.model.reply import SqlReply
from agent.nodes.candidates import Candidate, rank
from agent.screen import judge
from tests.agent.conftest import (
    NORTH,
    SOUTH,
    ByDraft,
    Make,
    check_reply,
    clarify_reply,
    error_reply,
    prompt_of,
    reply,
)

QUESTION = "What were total sales in the North?"
BROKEN = "SELECT SUM(amount) AS total FROM sales WHERE regoin = 'North'"
#: Passes every check, fails when it runs (DuckDB cannot cast 'North' to an integer).
FAILS_TO_RUN = "SELECT CAST(region AS INTEGER) AS r FROM sales"
#: Passes every check and returns no rows: the loosened query drops the date window.
EMPTY = "SELECT region, amount FROM sales WHERE sold_on > DATE '2030-01-01'"
AGREED = "2 of 3 drafts agreed on this query."


def agreement_notes(warnings: list[str]) -> list[str]:
    return [w for w in warnings if "drafts agreed" in w]


# -- concurrency and screening ----------------------------------------------------------------


@pytest.mark.slow
def test_the_drafts_are_in_flight_at_once(make: Make) -> None:
    # each call waits until all three have arrived: calls made one after another never get
    # past the barrier (its timeout only bounds how long a broken run takes to fail)
    barrier = threading.Barrier(3, timeout=30)
    model = ByDraft(replies=[reply(NORTH)] * 3, barrier=barrier)
    agent, _, _ = make([], "none,candidates:3", model=model)
    outcome = agent.ask("t1", QUESTION, user="U1")
    assert outcome.kind == "proposal", outcome.message
    assert model.calls == 3 and not barrier.broken


@pytest.mark.slow
def test_the_same_statement_is_screened_once(make: Make, monkeypatch: pytest.MonkeyPatch) -> None:
    screened: list[str] = []
    real = judge.screen

    def counting(sql: str, *args: object, **kwargs: str) -> judge.Screened:
        screened.append(sql)
        return real(sql, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr("agent.nodes.candidates.screen", counting)
    same = "select sum(AMOUNT) as total from SALES where REGION = 'North'"
    agent, _, _ = make([reply(NORTH), reply(same), reply(SOUTH)], "none,candidates:3")
    outcome = agent.ask("t1", QUESTION, user="U1")
    assert outcome.kind == "proposal" and outcome.proposal
    assert len(screened) == 2 and {"North" in s for s in screened} == {True, False}
    assert "'North'" in outcome.proposal.sql


# -- SQL against clarifying drafts --------------------------------------------------------------


def draft(index: int, sql: str = "", *, passed: bool = True) -> Candidate:
    """A candidate as the node builds it: SQL (its key is the SQL itself here) or, without
    SQL, a clarifying question."""
    if not sql:
        return Candidate(index, SqlReply(kind="clarify", explanation="Which one?"), None, "")
    problems = () if passed else ("refused",)
    checks = judge.Screened(Verdict(ok=True, sql=sql), None, problems, ())
    return Candidate(index, SqlReply(kind="sql", explanation="", sql=sql), checks, sql)


def test_sql_that_passes_wins_over_a_clarifying_minority() -> None:
    # two different queries, one vote each, and a lone clarifying question first
    best, votes = rank([draft(0), draft(1, NORTH), draft(2, SOUTH)])
    assert (best.key, votes) == (NORTH, 1)
    best, votes = rank([draft(0), draft(1), draft(2, NORTH)])
    assert (best.key, votes) == ("", 2), "most drafts ask: the question is asked"
    best, votes = rank([draft(0), draft(1, NORTH, passed=False), draft(2, SOUTH, passed=False)])
    assert (best.key, votes) == ("", 1), "no SQL passes the checks: the question is asked"
    best, votes = rank([draft(0), draft(1, NORTH)])
    assert best.key == NORTH, "half is not most"
    best, votes = rank([draft(0, NORTH, passed=False), draft(1, SOUTH, passed=False)])
    assert (best.key, votes) == (NORTH, 1), "no clarifying draft: the earliest SQL is repaired"


@pytest.mark.slow
def test_a_clarifying_draft_among_sql_drafts_is_noted(make: Make) -> None:
    agent, _, _ = make([clarify_reply(), reply(NORTH), reply(SOUTH)], "none,candidates:3")
    outcome = agent.ask("t1", QUESTION, user="U1")
    assert outcome.kind == "proposal" and outcome.proposal
    assert agreement_notes(outcome.proposal.warnings) == [
        "1 of 3 drafts agreed on this query; 1 asked a clarifying question instead."
    ]


@pytest.mark.slow
def test_most_drafts_asking_ends_with_their_question(make: Make) -> None:
    asked = "Which region do you mean?"
    agent, model, _ = make([clarify_reply(asked)] * 2 + [reply(NORTH)], "none,candidates:3")
    outcome = agent.ask("t1", QUESTION, user="U1")
    assert (outcome.kind, outcome.message, model.calls) == ("clarify", asked, 3)
    account = agent.explain("t1")
    assert account and "2 of 3 drafts asked a clarifying question" in account.summary()


# -- faults -------------------------------------------------------------------------------------


def test_drafts_that_all_fail_the_checks_go_to_one_repair(make: Make) -> None:
    agent, model, _ = make([reply(BROKEN)] * 3 + [reply(NORTH)], "none,candidates:3")
    outcome = agent.ask("t1", QUESTION, user="U1")
    assert outcome.kind == "proposal" and outcome.proposal
    assert model.calls == 4 and "region = 'North'" in outcome.proposal.sql
    repair = prompt_of(model, 3)
    assert "Your previous SQL was not accepted" in repair and "regoin" in repair
    assert not agreement_notes(outcome.proposal.warnings)
    assert outcome.usage and outcome.usage["nodes"]["generate"]["calls"] == 1
    steps = agent.explain("t1")
    assert steps is not None
    assert [s["kind"] for s in steps.steps][1:4] == ["candidates", "checks_failed", "repair"]
    assert "3 of 3 drafts agreed on the one kept; 3 failed the checks." in steps.steps[1]["text"]


def test_every_call_failing_ends_with_the_model_error_message(make: Make) -> None:
    agent, model, _ = make([error_reply()] * 3, "none,candidates:3")
    outcome = agent.ask("t1", QUESTION, user="U1")
    assert outcome.kind == "failed"
    assert "refused querybot's API key" in outcome.message and "GOOGLE_API_KEY" in outcome.message
    assert model.calls == 3 and agent.pending_proposal("t1") is None


@pytest.mark.slow
def test_some_calls_failing_leave_the_others_to_answer(make: Make) -> None:
    agent, model, _ = make([reply(NORTH), error_reply(), reply(NORTH)], "none,candidates:3")
    outcome = agent.ask("t1", QUESTION, user="U1")
    assert outcome.kind == "proposal" and outcome.proposal and model.calls == 3
    assert "'North'" in outcome.proposal.sql
    assert not agreement_notes(outcome.proposal.warnings), "both drafts that came back agree"
    account = agent.explain("t1")
    assert account is not None
    vote = next(s["text"] for s in account.steps if s["kind"] == "candidates")
    assert vote == (
        "3 drafts were written at once (1 model call failed); 2 of 2 drafts agreed on the one kept."
    )


@pytest.mark.slow
def test_unreadable_drafts_are_asked_again_once(make: Make) -> None:
    agent, model, _ = make(["not json", "{}", error_reply(), reply(NORTH)], "none,candidates:3")
    outcome = agent.ask("t1", QUESTION, user="U1")
    assert outcome.kind == "proposal" and model.calls == 4
    assert "None of your drafts was valid JSON" in prompt_of(model, 3)


# -- the agreement note belongs to its draft ----------------------------------------------------


def test_no_note_on_the_repair_after_a_self_check_failure(make: Make) -> None:
    agent, _, _ = make(
        [
            *(reply(SOUTH), reply(SOUTH), reply(NORTH)),
            check_reply(False, "North, not South."),
            *(reply(NORTH), check_reply(True)),
        ],
        "none,candidates:3,self_check",
    )
    outcome = agent.ask("t1", QUESTION, user="U1")
    assert outcome.kind == "proposal" and outcome.proposal
    assert "'North'" in outcome.proposal.sql
    assert not agreement_notes(outcome.proposal.warnings)


@pytest.mark.slow
def test_no_note_on_the_repair_after_an_execution_error(make: Make) -> None:
    agent, _, _ = make(
        [reply(FAILS_TO_RUN), reply(FAILS_TO_RUN), reply(SOUTH), reply(NORTH)],
        "none,candidates:3",
    )
    first = agent.ask("t1", QUESTION, user="U1").proposal
    assert first and agreement_notes(first.warnings) == [AGREED]
    repaired = agent.decide("t1", first.proposal_id, approved=True, user="U2")
    assert repaired.kind == "proposal" and repaired.proposal
    assert "'North'" in repaired.proposal.sql
    assert not agreement_notes(repaired.proposal.warnings)


def test_no_note_on_a_persons_edit(make: Make) -> None:
    agent, _, _ = make([reply(SOUTH), reply(SOUTH), reply(NORTH)], "none,candidates:3")
    first = agent.ask("t1", QUESTION, user="U1").proposal
    assert first and agreement_notes(first.warnings) == [AGREED]
    edited = agent.edit("t1", first.proposal_id, NORTH, user="U3")
    assert edited.kind == "proposal" and edited.proposal
    assert not agreement_notes(edited.proposal.warnings)


def test_no_note_on_the_loosened_proposal(make: Make) -> None:
    agent, _, _ = make([reply(EMPTY), reply(EMPTY), reply(NORTH)], "candidates:3")
    first = agent.ask("t1", QUESTION, user="U1").proposal
    assert first and agreement_notes(first.warnings) == [AGREED]
    loosened = agent.decide("t1", first.proposal_id, approved=True, user="U2")
    assert loosened.kind == "proposal" and loosened.proposal
    assert "2030" not in loosened.proposal.sql, "the date window was dropped"
    assert not agreement_notes(loosened.proposal.warnings)
