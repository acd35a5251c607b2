"""With QUERYBOT_STATE_URL, replicas learn together: an example approved on one is offered by
another, a failure met on one is a hint on another; each warehouse keeps its own."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent.memory.examples import ExampleStore
from agent.memory.failures import PERSON_REJECTED, FailureStore
from agent.memory.storage import PostgresStorage
from agent.model.providers import ScriptedChatModel
from bot.settings import Settings
from bot.wiring import Deployment
from tests.support.pgdb import scratch_database

TOTAL = "SELECT SUM(quantity) AS units FROM order_items"


@pytest.fixture(scope="module")
def state_url() -> Iterator[str]:
    with scratch_database("learning") as url:
        yield url


def deployment(tmp_path: Path, name: str, demo_file: Path, state_url: str) -> Deployment:
    """A replica: its own data directory and model script, the shared state database."""
    script = tmp_path / f"{name}.jsonl"
    reply = {"kind": "sql", "explanation": "Units sold.", "sql": TOTAL}
    script.write_text(json.dumps(reply) + "\n")
    env = {
        "QUERYBOT_MODEL": f"scripted:{script}",
        "QUERYBOT_WAREHOUSE": f"duckdb:{demo_file}",
        "QUERYBOT_DATA_DIR": str(tmp_path / name),
        "QUERYBOT_STATE_URL": state_url,
    }
    return Deployment(Settings.from_env(env, dotenv=False), env={})


@pytest.fixture
def replicas(tmp_path: Path, demo_file: Path, state_url: str) -> Iterator[list[Deployment]]:
    opened = [deployment(tmp_path, name, demo_file, state_url) for name in ("one", "two")]
    yield opened
    for each in opened:
        each.close()
        assert each.state is not None
        each.state.close()


@pytest.mark.slow
def test_an_example_approved_on_one_replica_is_offered_by_the_other(
    replicas: list[Deployment],
) -> None:
    (one,), (two,) = (list(r.open_warehouses().values()) for r in replicas)
    question = "how many units were sold in total?"
    proposal = one.ask("T:1", question, user="U1").proposal
    assert proposal is not None
    one.decide("T:1", proposal.proposal_id, approved=True, user="U2")
    assert [e.question for e in one.deps.examples.similar("units sold in total")] == [question]
    two.ask("T:2", "total units sold last year?", user="U3")
    model = two.deps.model
    assert isinstance(model, ScriptedChatModel)
    system = str(model.seen[0][0].content)
    assert "Verified examples" in system and f"Q: {question}" in system
    assert not (Path(replicas[0].settings.data_dir) / "examples.sqlite").exists()


@pytest.mark.slow
def test_a_failure_met_on_one_replica_is_a_hint_on_the_other(replicas: list[Deployment]) -> None:
    (one,), (two,) = (list(r.open_warehouses().values()) for r in replicas)
    mine, theirs = one.deps.failures, two.deps.failures
    bad = "SELECT product_nam FROM products"
    mine.record("duckdb", "T:a", "gate", ["column product_nam does not exist"], bad)
    # the same thread answered by the other replica next
    assert theirs.hints("duckdb", "T:a") == ["column product_nam does not exist"]
    # recurring in two threads of one replica: a hint for a draft on the same table elsewhere
    mine.record("duckdb", "T:b", "gate", ["column product_nam does not exist"], bad)
    mine.record("duckdb", "T:a", PERSON_REJECTED, ["wrong table"], bad)
    mine.record("duckdb", "T:b", PERSON_REJECTED, ["wrong table"], bad)
    assert theirs.hints("duckdb", "T:c", tables={"products"}, dialect="duckdb") == [
        "column product_nam does not exist"
    ]
    assert theirs.hints("duckdb", "T:c", tables={"orders"}, dialect="duckdb") == []


def test_each_warehouse_keeps_its_own_examples_and_failures(state_url: str) -> None:
    storage = PostgresStorage(state_url)
    try:
        shop, other = (ExampleStore(storage, warehouse=w) for w in ("shop-x", "other-x"))
        shop.add("shop question?", "SELECT 1", tables=["t"], columns=[], approved_by="U1")
        assert [e.question for e in shop.active()] == ["shop question?"]
        assert other.active() == []
        shop_failures = FailureStore(storage, warehouse="shop-x")
        other_failures = FailureStore(storage, warehouse="other-x")
        shop_failures.record("duckdb", "T:w", "gate", ["no such column"], "SELECT x FROM t")
        assert shop_failures.hints("duckdb", "T:w") == ["no such column"]
        assert other_failures.hints("duckdb", "T:w") == []
        shop.close()  # a store given the storage leaves it open for the others
        assert other.active() == []
    finally:
        storage.close()


def test_a_second_example_store_sees_new_and_retired_examples(state_url: str) -> None:
    """Each replica's BM25 index is rebuilt when the other adds or retires an example."""
    storage = PostgresStorage(state_url)
    try:
        one, two = (ExampleStore(storage, warehouse="index-x") for _ in range(2))
        assert two.similar("revenue by region") == []
        one.add("revenue by region?", "SELECT 1", tables=["t"], columns=[], approved_by="U1")
        [found] = two.similar("revenue by region")
        storage.rows("UPDATE examples SET retired_at = 'now' WHERE id = ?", (found.id,))
        assert two.similar("revenue by region") == []
    finally:
        storage.close()
