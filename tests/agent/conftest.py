"""A tiny real DuckDB warehouse and an agent factory over the scripted model."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb
import pytest
from langgraph.checkpoint.memory import InMemorySaver

from agent.context import AgentDeps, Limits, Strategies
from agent.conversation import Agent
from agent.models import ScriptedChatModel
from connectors.base import RunContext
from connectors.duckdb import DuckDBConnector


@pytest.fixture(scope="session")
def shop_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("warehouse") / "shop.duckdb"
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE sales (region VARCHAR, amount DECIMAL(10, 2), sold_on DATE)")
    con.execute(
        "INSERT INTO sales VALUES ('North', 10.50, '2026-01-05'), ('North', 4.50, '2026-02-01'),"
        " ('South', 7.00, '2026-01-20'), ('East', 1.25, '2026-03-03')"
    )
    con.execute("COMMENT ON TABLE sales IS 'One row per sale'")
    con.execute("COMMENT ON COLUMN sales.amount IS 'Sale amount in USD'")
    con.close()
    return path


def reply(sql: str, explanation: str = "Sums sales by region.") -> str:
    """One scripted structured reply proposing `sql`."""
    return json.dumps({"kind": "sql", "explanation": explanation, "sql": sql})


class Spy(DuckDBConnector):
    """The real connector, counting executions (to prove what did not run) and saying when one
    has begun (to cancel it from another thread)."""

    runs: int = 0
    contexts: list[RunContext | None]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.started = threading.Event()

    def run(self, sql: str, **kwargs: Any) -> Any:
        self.started.set()
        self.runs += 1
        self.contexts = [*getattr(self, "contexts", []), kwargs.get("context")]
        return super().run(sql, **kwargs)


MakeAgent = Callable[..., tuple[Agent, ScriptedChatModel, Spy]]


@pytest.fixture
def make_agent(shop_path: Path) -> MakeAgent:
    connectors: list[Spy] = []

    def make(
        replies: list[str],
        *,
        checkpointer: Any = None,
        limits: Limits | None = None,
        strategies: Strategies | None = None,
    ) -> tuple[Agent, ScriptedChatModel, Spy]:
        model = ScriptedChatModel(replies=replies)
        connector = Spy(shop_path)
        connectors.append(connector)
        deps = AgentDeps(
            connector=connector,
            model=model,
            limits=limits or Limits(),
            strategies=strategies or Strategies(),
        )
        return Agent(deps, checkpointer or InMemorySaver()), model, connector

    yield make
    for connector in connectors:
        connector.close()
