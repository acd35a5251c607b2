"""One way to fail a question: whichever step fails it, the outcome's message is the last step of
the account, so the account and the restart recovery read the same history.

Over the real graph and a DuckDB warehouse whose tables cannot be listed (the scripted model is
never reached).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from agent.context import AgentDeps, AgentLimits
from agent.conversation import Agent
from agent.model.providers import ScriptedChatModel
from agent.strategies.options import parse_strategies
from connectors.base import ConnectorError, TableInfo
from tests.agent.conftest import NORTH, Spy

UNREADABLE = "I could not read the warehouse's tables: The warehouse did not answer. Try later."


class Unlisted(Spy):
    """The real warehouse, except that its tables cannot be listed."""

    def list_tables(self) -> list[TableInfo]:
        raise ConnectorError("The warehouse did not answer.", hint="Try later.")


@pytest.mark.parametrize(
    ("question", "strategies", "message"),
    [
        ("Total sales in the North?", "none", UNREADABLE),  # generate
        (NORTH, "none", UNREADABLE),  # paste
        ("Total sales in the North?", "candidates:3", UNREADABLE),  # candidates
        ("   ", "none", "Ask me a question about the data"),  # start
    ],
)
def test_a_failed_question_ends_its_account_with_the_failure(
    shop_path: Path, question: str, strategies: str, message: str
) -> None:
    model = ScriptedChatModel(replies=[])
    connector = Unlisted(shop_path)
    deps = AgentDeps(
        connector=connector,
        model=model,
        limits=AgentLimits(profile_values=False),
        strategies=parse_strategies(strategies),
    )
    agent = Agent(deps, InMemorySaver())
    try:
        outcome = agent.ask("t1", question, user="U1")
    finally:
        connector.close()
    assert outcome.kind == "failed" and outcome.message.startswith(message)
    account = agent.explain("t1")
    assert account is not None
    assert account.steps[-1] == {"kind": "failed", "text": outcome.message}
    assert model.calls == 0 and connector.runs == 0
