"""A small real DuckDB shop, connectors on it that share their workers for the session, and agents
over it with value profiles on."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import duckdb
import pytest
from langgraph.checkpoint.memory import InMemorySaver

from agent.context import AgentDeps, AgentLimits
from agent.conversation import Agent
from agent.model.providers import ScriptedChatModel
from connectors.duckdb.connector import DuckDBConnector
from connectors.workers.pool import Pool
from tests.agent.conftest import Spy


@pytest.fixture(scope="session")
def shop(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("context") / "shop.duckdb"
    con = duckdb.connect(str(path))
    con.execute(
        "CREATE TABLE customers (customer_id INTEGER, customer_name VARCHAR, region VARCHAR)"
    )
    con.execute(
        "INSERT INTO customers VALUES (1, 'Alice Smith', 'North'), (2, 'Bob Jones', 'South'),"
        " (3, 'Carol King', 'North'), (4, 'Dan Brown', 'California')"
    )
    con.execute("CREATE TABLE orders (order_id INTEGER, customer_id INTEGER, amount DOUBLE)")
    con.execute("INSERT INTO orders VALUES (10, 1, 5.0), (11, 2, 7.5), (12, 4, 1.0)")
    con.execute("COMMENT ON TABLE customers IS 'One row per customer account'")
    con.execute("COMMENT ON COLUMN customers.region IS 'Sales region of the customer'")
    con.close()
    return path


def reply(sql: str, explanation: str = "A query.") -> str:
    return json.dumps({"kind": "sql", "explanation": explanation, "sql": sql})


def clarify(text: str) -> str:
    return json.dumps({"kind": "clarify", "explanation": text, "sql": ""})


@pytest.fixture
def shop_connector(shop: Path, shop_workers: dict[str, Pool]) -> Iterator[DuckDBConnector]:
    """A connector of its own on the shop (its catalog read afresh), on the session's workers."""
    connector = Spy(shop).share_workers(shop_workers)
    yield connector
    connector.close()


MakeAgent = Callable[..., tuple[Agent, ScriptedChatModel, AgentDeps]]


@pytest.fixture
def make_agent(shop: Path, shop_workers: dict[str, Pool]) -> Iterator[MakeAgent]:
    """Agents whose catalog is profiled before the first question (`refresh`, synchronous)."""
    opened: list[DuckDBConnector] = []

    def make(replies: list[str], **deps_kwargs: Any) -> tuple[Agent, ScriptedChatModel, AgentDeps]:
        connector = Spy(shop).share_workers(shop_workers)
        opened.append(connector)
        model = ScriptedChatModel(replies=replies)
        limits = deps_kwargs.pop("limits", AgentLimits(profile_values=True))
        deps = AgentDeps(connector=connector, model=model, limits=limits, **deps_kwargs)
        deps.catalog.refresh()
        return Agent(deps, InMemorySaver()), model, deps

    yield make
    for connector in opened:
        connector.close()
