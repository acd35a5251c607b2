"""A verified example is stored with the tables and columns the gate found when it let the SQL
through; the gate does not run again after execution (issue 15 item 8)."""

from __future__ import annotations

from typing import Any

import pytest

from agent.gate import check as gate_check
from tests.agent.conftest import MakeAgent, reply

BY_REGION = "SELECT region, SUM(amount) AS total FROM sales GROUP BY region ORDER BY total DESC"


def test_the_example_reuses_the_proposals_verdict(
    make_agent: MakeAgent, monkeypatch: pytest.MonkeyPatch
) -> None:
    checked: list[str] = []
    real = gate_check._check

    def counting(sql: str, *args: Any) -> Any:
        checked.append(sql)
        return real(sql, *args)

    monkeypatch.setattr(gate_check, "_check", counting)
    agent, _, spy = make_agent([reply(BY_REGION)])
    proposal = agent.ask("t1", "revenue by region?", user="U1").proposal
    assert proposal is not None
    assert proposal.columns == ["shop.main.sales.region", "shop.main.sales.amount"]
    gate_runs = len(checked)

    outcome = agent.decide("t1", proposal.proposal_id, approved=True, user="U2")
    assert outcome.kind == "answer" and spy.runs == 1
    assert len(checked) == gate_runs, "the gate ran again after execution"
    [example] = agent.deps.examples.active()
    assert (example.sql, example.approved_by) == (proposal.sql, "U2")
    assert list(example.tables) == proposal.tables == ["shop.main.sales"]
    assert list(example.columns) == proposal.columns
