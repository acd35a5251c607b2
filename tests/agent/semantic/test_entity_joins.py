"""Join keys that only a semantic model's entities give (a foreign entity and the model where it
is primary), with no `relationships` test saying the same: read from semantic_manifest.json
(agent/semantic/artifacts.py merges them with the manifest's), they reach what the model is
shown (the column's "(joins ...)" note) and retrieval's join neighbours, as a relationships
test's do (tests/agent/catalog/test_documentation.py)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from agent.catalog.retrieval import TableIndex
from agent.catalog.snapshot import CatalogSnapshot
from agent.context import AgentDeps, Strategies
from agent.conversation import Agent
from agent.model.providers import ScriptedChatModel
from agent.model.question_context import ContextBuilder
from agent.semantic.artifacts import ProjectArtifacts
from connectors.base import ColumnInfo, TableInfo
from connectors.duckdb.connector import DuckDBConnector
from tests.agent.conftest import reply
from tests.support.shop_build import BuiltProject

#: What the shop's fct_orders.customer_id column says to the model when a key joins it.
JOIN_NOTE = (
    "customer_id INTEGER, -- The customer who placed the order. (joins dim_customers.customer_id)"
)


def _without_relationships_tests(target: Path) -> int:
    """Remove the relationships tests from the manifest.json in `target`; how many there were."""
    path = target / "manifest.json"
    manifest = json.loads(path.read_text(encoding="utf-8"))
    nodes = manifest["nodes"]
    dropped = [
        key
        for key, node in nodes.items()
        if (node.get("test_metadata") or {}).get("name") == "relationships"
    ]
    for key in dropped:
        del nodes[key]
    path.write_text(json.dumps(manifest), encoding="utf-8")
    return len(dropped)


@pytest.mark.slow  # the shop is built with dbt once per session
def test_an_entity_only_join_key_reaches_the_models_prompt(
    shop_project: BuiltProject, tmp_path: Path
) -> None:
    """The shop's artifacts as dbt wrote them, less the relationships test on
    fct_orders.customer_id: the `customer` entity (foreign in orders, primary in customers)
    still tells the model that customer_id joins dim_customers."""
    target = tmp_path / "target"
    shutil.copytree(shop_project.target, target)
    assert _without_relationships_tests(target) == 1
    project = ProjectArtifacts(target)
    joins = project.documentation().joins
    assert [(j.column, j.other_column, j.source) for j in joins] == [
        ("customer_id", "customer_id", "entity customer")
    ]
    sql = "SELECT customer_name FROM shop.main.dim_customers ORDER BY customer_name"
    model = ScriptedChatModel(replies=[reply(sql, "Customer names.")])
    connector = DuckDBConnector(shop_project.database)
    try:
        deps = AgentDeps(
            connector=connector,
            model=model,
            strategies=Strategies(follow_ups=False),
            project=project,
        )
        agent = Agent(deps, InMemorySaver())
        proposal = agent.ask("t1", "List the names of our customers", user="U1").proposal
        assert proposal is not None and proposal.label == "ad hoc SQL"
        assert model.calls == 1  # the SQL step only: no metric named
        shown = "\n".join(str(m.content) for m in model.seen[0])
        assert JOIN_NOTE in shown
    finally:
        connector.close()

    # without the semantic manifest nothing says it: the key came from the entities
    (target / "semantic_manifest.json").unlink()
    assert ProjectArtifacts(target).documentation().joins == ()


# --- retrieval: names that say nothing of the join ---------------------------------------------

ORDERS = TableInfo(
    "wh.sales.orders",
    (ColumnInfo("id", "INTEGER"), ColumnInfo("buyer", "INTEGER"), ColumnInfo("total", "INTEGER")),
)
PEOPLE = TableInfo("wh.crm.people", (ColumnInfo("pid", "INTEGER"), ColumnInfo("town", "VARCHAR")))
OTHERS = tuple(TableInfo(f"wh.misc.t{i}", (ColumnInfo(f"c{i}", "INT"),)) for i in range(3))
TABLES = (ORDERS, PEOPLE, *OTHERS)


def _model_node(name: str, relation: str) -> dict[str, Any]:
    return {"resource_type": "model", "name": name, "relation_name": relation, "columns": {}}


def _semantic_model(name: str, relation: str, entities: list[dict[str, str]]) -> dict[str, Any]:
    database, schema, alias = relation.split(".")
    return {
        "name": name,
        "node_relation": {
            "database": database,
            "schema_name": schema,
            "alias": alias,
            "relation_name": relation,
        },
        "entities": entities,
        "dimensions": [],
        "measures": [],
    }


def _write_project(target: Path, *, semantic: bool) -> ProjectArtifacts:
    """A manifest with the two models and no tests at all; the join only in the entities."""
    target.mkdir()
    nodes = {
        "model.p.orders": _model_node("orders", "wh.sales.orders"),
        "model.p.people": _model_node("people", "wh.crm.people"),
    }
    manifest = {"metadata": {"project_name": "p"}, "nodes": nodes}
    (target / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    if semantic:
        layer = {
            "semantic_models": [
                _semantic_model(
                    "orders",
                    "wh.sales.orders",
                    [
                        {"name": "order", "type": "primary", "expr": "id"},
                        {"name": "person", "type": "foreign", "expr": "buyer"},
                    ],
                ),
                _semantic_model(
                    "people",
                    "wh.crm.people",
                    [{"name": "person", "type": "primary", "expr": "pid"}],
                ),
            ],
            "metrics": [],
        }
        (target / "semantic_manifest.json").write_text(json.dumps(layer), encoding="utf-8")
    return ProjectArtifacts(target)


def test_an_entity_only_join_key_makes_join_neighbours(tmp_path: Path) -> None:
    """`orders.buyer` -> `people.pid`: neither the names nor a relationships test say they
    join; the `person` entity does, and retrieval brings people along with orders."""
    project = _write_project(tmp_path / "target", semantic=True)
    docs = project.documentation()
    (join,) = docs.joins
    assert (join.column, join.other_column, join.source) == ("buyer", "pid", "entity person")
    snapshot = CatalogSnapshot(TABLES, "duckdb", documentation=docs)
    ranked = TableIndex(snapshot).rank("order total", top=1, limit=3)
    assert [(r.table.short_name, r.reason) for r in ranked] == [
        ("orders", "match"),
        ("people", "join"),
    ]
    text = ContextBuilder().build("order total", snapshot).text
    assert "buyer INTEGER, -- (joins people.pid)" in text

    plain = _write_project(tmp_path / "plain", semantic=False).documentation()
    bare = CatalogSnapshot(TABLES, "duckdb", documentation=plain)
    assert [r.table.short_name for r in TableIndex(bare).rank("order total", top=1, limit=3)] == [
        "orders"
    ]
    assert "(joins" not in ContextBuilder().build("order total", bare).text
