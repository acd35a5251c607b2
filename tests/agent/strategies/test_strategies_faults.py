"""The strategy steps when their model call fails or answers in a form that cannot be read: the
question is never lost, the trace (and so "How did you get this?") says what was skipped, the
person approving sees a proposal the self-check could not judge, and a model that is down for
every call ends in the clear model-error message."""

from __future__ import annotations

import json

from agent.context import AgentLimits
from agent.conversation import Agent
from bot.blocks.messages import proposal as proposal_message
from tests.agent.conftest import NORTH, Make, check_reply, error_reply, prompt_of, reply

QUESTION = "What were total sales in the North?"
#: A call that fails once, not retried (a scripted outage without a provider status).
OUTAGE = json.dumps({"__error__": "the service is down"})


def steps_of(agent: Agent, kind: str) -> list[str]:
    account = agent.explain("t1")
    assert account is not None
    return [s["text"] for s in account.steps if s["kind"] == kind]


# -- plan -------------------------------------------------------------------------------------


def test_an_unreadable_plan_leaves_the_question_to_the_sql_step(make: Make) -> None:
    agent, model, _ = make(["this is not a plan", reply(NORTH)], "none,plan")
    outcome = agent.ask("t1", QUESTION, user="U1")
    assert outcome.kind == "proposal" and outcome.proposal and model.calls == 2
    assert QUESTION in prompt_of(model, 1) and "How the question was read" not in prompt_of(
        model, 1
    )
    assert not outcome.proposal.plan
    assert steps_of(agent, "plan") == [
        "No plan was made: the model's plan could not be read. The SQL was written without one."
    ]
    account = agent.explain("t1")
    assert account and "no plan was made (the model's plan could not be read)" in account.summary()


def test_a_plan_call_that_fails_leaves_the_question_to_the_sql_step(make: Make) -> None:
    agent, model, _ = make([OUTAGE, reply(NORTH)], "none,plan")
    outcome = agent.ask("t1", QUESTION, user="U1")
    assert outcome.kind == "proposal" and outcome.proposal and model.calls == 2
    assert QUESTION in prompt_of(model, 1)
    shown = json.dumps(proposal_message(outcome.proposal, requested_by="U1").blocks)
    assert "How I read your question" not in shown
    (step,) = steps_of(agent, "plan")
    assert step.startswith("No plan was made: the plan step failed (ScriptedOutage")
    account = agent.explain("t1")
    assert account and "no plan was made (the plan step failed)" in account.summary()
    assert outcome.usage and outcome.usage["nodes"]["plan"]["calls"] == 1


def test_a_model_down_for_every_call_ends_in_the_model_error_message(make: Make) -> None:
    agent, model, _ = make([error_reply()] * 2, "none,plan,self_check")
    outcome = agent.ask("t1", QUESTION, user="U1")
    assert outcome.kind == "failed" and model.calls == 2
    assert "refused querybot's API key" in outcome.message and "GOOGLE_API_KEY" in outcome.message


def test_a_rate_limit_on_plan_and_sql_steps_ends_in_the_quota_message(make: Make) -> None:
    limits = AgentLimits(profile_values=True, model_backoff_s=0.01, model_attempts=2)
    quota = error_reply("Resource has been exhausted", 429)
    agent, model, _ = make([quota] * 4, "none,plan", limits=limits)
    outcome = agent.ask("t1", QUESTION, user="U1")
    assert outcome.kind == "failed" and model.calls == 4
    assert "rate limit or quota (tried 2 times)" in outcome.message


# -- self-check -------------------------------------------------------------------------------


def test_a_self_check_call_that_fails_is_shown_as_not_checked(make: Make) -> None:
    agent, model, _ = make([reply(NORTH), OUTAGE], "none,self_check")
    outcome = agent.ask("t1", QUESTION, user="U1")
    assert outcome.kind == "proposal" and outcome.proposal and model.calls == 2
    warning = (
        "Not double-checked: the check's model call failed (ScriptedOutage). Only the safety "
        "and schema checks passed it."
    )
    assert warning in outcome.proposal.warnings
    shown = json.dumps(proposal_message(outcome.proposal, requested_by="U1").blocks)
    assert "Not double-checked: the check's model call failed" in shown
    assert steps_of(agent, "self_check") == [
        "The self-check could not run: the check's model call failed (ScriptedOutage)."
    ]
    account = agent.explain("t1")
    assert account and "it was not double-checked" in account.summary()


def test_an_unreadable_self_check_verdict_is_shown_as_not_checked(make: Make) -> None:
    agent, _, _ = make([reply(NORTH), '{"valid": "perhaps"}'], "none,self_check")
    outcome = agent.ask("t1", QUESTION, user="U1")
    assert outcome.kind == "proposal" and outcome.proposal
    assert any(
        w.startswith("Not double-checked: the check's verdict could not be read.")
        for w in outcome.proposal.warnings
    )


def test_a_self_check_that_passes_adds_no_warning(make: Make) -> None:
    agent, _, _ = make([reply(NORTH), check_reply(True)], "none,self_check")
    outcome = agent.ask("t1", QUESTION, user="U1")
    assert outcome.proposal and not any("check" in w for w in outcome.proposal.warnings)
