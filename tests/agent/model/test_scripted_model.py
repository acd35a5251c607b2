"""The scripted model's outage line: one call fails like a provider outage, the next answers;
a script that runs out is told as a test set-up problem, not an outage."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from langchain_core.messages import HumanMessage

from agent.model.errors import user_message
from agent.model.providers import ScriptedChatModel, ScriptedOutage, ScriptExhausted
from tests.agent.conftest import MakeAgent, reply

BY_REGION = "SELECT region, SUM(amount) AS total FROM sales GROUP BY region"


def test_an_error_line_fails_that_call_only(tmp_path: Path) -> None:
    path = tmp_path / "script.jsonl"
    lines = [{"__error__": "503 Service Unavailable"}, "after the outage", {"__error__": 1, "x": 2}]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    model = ScriptedChatModel.from_jsonl(path)
    with pytest.raises(ScriptedOutage, match="503 Service Unavailable"):
        model.invoke([HumanMessage("q")])
    assert model.invoke([HumanMessage("q")]).content == "after the outage"
    # an object with other keys is a normal reply, not an outage
    assert json.loads(str(model.invoke([HumanMessage("q")]).content)) == lines[2]
    assert model.calls == 3


def test_a_used_up_script_says_so() -> None:
    model = ScriptedChatModel(replies=["only one"])
    model.invoke([HumanMessage("q")])
    with pytest.raises(ScriptExhausted, match=r"ran out of replies after 1 reply$"):
        model.invoke([HumanMessage("q")])
    with pytest.raises(ScriptExhausted, match=r"after 0 replies$"):
        ScriptedChatModel(replies=[]).invoke([HumanMessage("q")])


def test_running_out_of_script_is_told_as_a_set_up_problem(make_agent: MakeAgent) -> None:
    agent, model, spy = make_agent([reply(BY_REGION)])
    assert agent.ask("t1", "revenue by region?", user="U1").kind == "proposal"
    outcome = agent.ask("t2", "revenue by region?", user="U1")
    assert outcome.kind == "failed"
    assert "ran out of replies" in outcome.message and "has 1 reply" in outcome.message
    assert "test set-up problem, not a provider outage" in outcome.message
    assert "Try again in a" not in outcome.message and "tried" not in outcome.message
    assert model.calls == 1 and spy.runs == 0


def test_a_model_failure_during_a_repair_keeps_the_reasons() -> None:
    reasons = ["Unknown table 'salez'.", "The warehouse returned an error: no such column"]
    message = user_message(ScriptExhausted(2), attempts=1, problems=reasons)
    assert message.startswith("The scripted model")
    assert message.endswith(
        "It was correcting SQL that had these problems:\n"
        "• Unknown table 'salez'.\n"
        "• The warehouse returned an error: no such column"
    )
    assert "correcting" not in user_message(ScriptExhausted(2), attempts=1)


def test_a_script_used_up_in_a_repair_keeps_the_gate_reasons(make_agent: MakeAgent) -> None:
    agent, model, spy = make_agent([reply("SELECT region FROM salez")])
    outcome = agent.ask("t1", "revenue by region?", user="U1")
    assert outcome.kind == "failed" and "ran out of replies" in outcome.message
    assert len(model.seen) == 2 and spy.runs == 0  # the repair was asked for
    assert "salez" in outcome.message
