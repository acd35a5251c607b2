"""A tiny real DuckDB warehouse and agent factories over the scripted model (`make_agent`;
`make` for the answer-quality strategies, with values profiled and grounded). The agents they
make on the shop share its worker processes for the session, as the bot's threads share one
connector's."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import duckdb
import pytest
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.messages import BaseMessage
from langchain_core.outputs import ChatResult
from langgraph.checkpoint.memory import InMemorySaver

from agent.context import AgentDeps, AgentLimits, Strategies
from agent.conversation import Agent
from agent.model.providers import ScriptedChatModel
from agent.strategies.options import parse_strategies
from connectors.base import RunContext
from connectors.duckdb.connector import DuckDBConnector
from connectors.workers.pool import Pool

NORTH = "SELECT SUM(amount) AS total FROM sales WHERE region = 'North'"
SOUTH = "SELECT SUM(amount) AS total FROM sales WHERE region = 'South'"


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

    def share_workers(self, pools: dict[str, Pool]) -> Spy:
        """Run on the pool of the session's earlier connectors on the same file and settings
        (kept in `pools`), so an agent per test does not start a worker interpreter of its own;
        `close` then leaves the pool to the session."""
        self._pool = pools.setdefault(repr(self._pool.spec), self._pool)
        self._shared = True
        return self

    def close(self) -> None:
        if getattr(self, "_shared", False):
            self._con.close()
        else:
            super().close()


@pytest.fixture(scope="session")
def shop_workers() -> Iterator[dict[str, Pool]]:
    """The worker pools the session's Spies share (`Spy.share_workers`), stopped at its end."""
    pools: dict[str, Pool] = {}
    yield pools
    for pool in pools.values():
        pool.close()


MakeAgent = Callable[..., tuple[Agent, ScriptedChatModel, Spy]]


@pytest.fixture
def make_agent(shop_path: Path, shop_workers: dict[str, Pool]) -> MakeAgent:
    connectors: list[Spy] = []

    def make(
        replies: list[str],
        *,
        checkpointer: Any = None,
        limits: AgentLimits | None = None,
        strategies: Strategies | None = None,
    ) -> tuple[Agent, ScriptedChatModel, Spy]:
        model = ScriptedChatModel(replies=replies)
        connector = Spy(shop_path).share_workers(shop_workers)
        connectors.append(connector)
        deps = AgentDeps(
            connector=connector,
            model=model,
            limits=limits or AgentLimits(),
            strategies=strategies or Strategies(),
        )
        return Agent(deps, checkpointer or InMemorySaver()), model, connector

    yield make
    for connector in connectors:
        connector.close()


# -- the answer-quality strategies ----------------------------------------------------------

Make = Callable[..., tuple[Agent, ScriptedChatModel, Spy]]


@pytest.fixture
def make(shop_path: Path, shop_workers: dict[str, Pool]) -> Iterator[Make]:
    """An agent with the strategies named as `QUERYBOT_STRATEGIES` names them, over `replies`
    (or a prepared `model`), with column values profiled and checked live."""
    opened: list[tuple[Agent, Spy]] = []

    def build(
        replies: list[str],
        strategies: str,
        *,
        path: Path = shop_path,
        model: ScriptedChatModel | None = None,
        limits: AgentLimits | None = None,
        **deps: object,
    ) -> tuple[Agent, ScriptedChatModel, Spy]:
        model = model or ScriptedChatModel(replies=replies)
        connector = Spy(path).share_workers(shop_workers) if path == shop_path else Spy(path)
        agent = Agent(
            AgentDeps(
                connector=connector,
                model=model,
                limits=limits or AgentLimits(profile_values=True),
                strategies=parse_strategies(strategies),
                **deps,  # type: ignore[arg-type]
            ),
            InMemorySaver(),
        )
        opened.append((agent, connector))
        return agent, model, connector

    yield build
    for agent, connector in opened:
        agent.deps.catalog.wait_idle(timeout_s=30)  # value profiling in the background
        connector.close()


def plan_reply(*filters: tuple[str, str], kind: str = "plan", explanation: str = "") -> str:
    return json.dumps(
        {
            "kind": kind,
            "explanation": explanation or "Total sales of one region.",
            "fields": ["SUM(sales.amount)"],
            "filters": [{"column": c, "operator": "=", "value": v} for c, v in filters],
            "grouping": [],
            "ordering": "",
        }
    )


def check_reply(valid: bool, feedback: str = "") -> str:
    return json.dumps({"valid": valid, "feedback": feedback})


def clarify_reply(question: str = "Which region do you mean?") -> str:
    return json.dumps({"kind": "clarify", "explanation": question, "sql": ""})


def error_reply(message: str = "API key not valid", status: int | str = 401) -> str:
    """A call that fails as a provider does (401: a bad key, never retried)."""
    return json.dumps({"__error__": message, "status": status})


def prompt_of(model: ScriptedChatModel, call: int) -> str:
    return "\n".join(str(m.content) for m in model.seen[call])


class ByDraft(ScriptedChatModel):
    """Answers candidate draft n (its prompt's "Draft n of N" note; none: draft 1, and any
    later call) with `replies[n - 1]`, whatever order the concurrent calls arrive in.

    With a `barrier` (a `threading.Barrier(N, timeout=...)`), each call first waits there until
    all N calls are in flight: calls made one after another break it, and fail."""

    barrier: Any = None

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        if self.barrier is not None:
            self.barrier.wait()
        found = re.search(r"Draft (\d+) of \d+", str(messages[-1].content))
        one = ScriptedChatModel(replies=[self.replies[int(found.group(1)) - 1 if found else 0]])
        with self._lock:
            self._seen.append(list(messages))
            self._next += 1
        return one._generate(messages, stop, run_manager, **kwargs)
