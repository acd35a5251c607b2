"""`on_step` names each step of the graph as it starts, in the order the graph takes them."""

from __future__ import annotations

import pytest

from tests.agent.conftest import MakeAgent, reply

BY_REGION = "SELECT region, SUM(amount) AS total FROM sales GROUP BY region"


@pytest.mark.slow
def test_each_step_is_named_as_it_starts(make_agent: MakeAgent) -> None:
    agent, _, _ = make_agent([reply("DELETE FROM sales"), reply(BY_REGION)])
    steps: list[str] = []
    outcome = agent.ask("t1", "revenue by region?", user="U1", on_step=steps.append)
    assert outcome.kind == "proposal" and outcome.proposal
    # the question's words are looked for in the warehouse; the refused draft is repaired:
    # drafted, checked, drafted again, checked; then the proposal waits
    expected = ["start", "match", "generate", "validate", "generate", "validate", "approve"]
    assert steps == expected

    steps.clear()
    pid = outcome.proposal.proposal_id
    answer = agent.decide("t1", pid, approved=True, user="U2", on_step=steps.append)
    assert answer.kind == "answer"
    assert steps[:2] == ["approve", "execute"] and steps[-1] == "finish"
