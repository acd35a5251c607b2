"""Metric queries: checked against the semantic layer with "did you mean", compiled by
MetricFlow, and run on the DuckDB the shop project built, with numbers checked by hand; the same
queries rendered for PostgreSQL and BigQuery and accepted by the gate."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import pytest
import sqlglot
from pydantic import ValidationError

from agent.catalog.documentation import ColumnDoc, Documentation, TableDoc, warehouse_table
from agent.catalog.snapshot import Catalog
from agent.gate import GateSchema, check_sql
from agent.semantic.artifacts import Artifacts, ProjectArtifacts
from agent.semantic.compile import MetricCompiler, in_warehouse, where_template
from agent.semantic.metric_query import MetricFilter, MetricQuery, MetricQueryError, check
from agent.semantic.semantic_manifest import (
    Dimension,
    Entity,
    Metric,
    SemanticLayer,
    SemanticModel,
)
from connectors.base import TableInfo
from connectors.duckdb.connector import DuckDBConnector
from tests.agent.semantic.metric_cases import BY_REGION, CASES, parsed_against
from tests.support.shop_build import BuiltProject

LAYER = SemanticLayer(
    models=(
        SemanticModel(
            "orders",
            '"db"."main"."fct_orders"',
            entities=(Entity("order", "primary", "order_id"), Entity("customer", "foreign", "cid")),
            dimensions=(
                Dimension("ordered_at", "time", grain="day", model="orders", expr="ordered_at"),
                Dimension("status", "categorical", model="orders", expr="status"),
            ),
        ),
        SemanticModel(
            "customers",
            '"db"."main"."dim_customers"',
            entities=(Entity("customer", "primary", "cid"),),
            dimensions=(Dimension("region", "categorical", model="customers", expr="region"),),
        ),
    ),
    metrics={
        "revenue": Metric("revenue", "simple", inputs=("order_total",)),
        "net_revenue": Metric("net_revenue", "derived", inputs=("revenue",), expr="revenue - 1"),
    },
)
DOCS = Documentation(
    tables={
        "db.main.dim_customers": TableDoc(
            '"db"."main"."dim_customers"', columns={"region": ColumnDoc(values=("EU", "NA"))}
        )
    }
)


def query(**fields: Any) -> MetricQuery:
    return MetricQuery.model_validate({"metrics": ["revenue"], **fields})


def test_layer_names_dimensions_after_their_models_primary_entity() -> None:
    assert list(LAYER.dimensions) == [
        "metric_time",
        "order__ordered_at",
        "order__status",
        "customer__region",
    ]
    assert set(LAYER.entities) == {"order", "customer"}
    (join,) = LAYER.joins()
    assert (join.column, join.other, join.other_column) == (
        "cid",
        '"db"."main"."dim_customers"',
        "cid",
    )


@pytest.mark.parametrize(
    ("fields", "problem"),
    [
        ({"metrics": ["revnue"]},
         "Unknown metric 'revnue'; did you mean 'revenue' or 'net_revenue'?"),
        ({"group_by": [{"name": "region"}]}, "did you mean 'customer__region'?"),
        ({"group_by": [{"name": "customer__regoin"}]}, "did you mean 'customer__region'"),
        ({"group_by": [{"name": "customer__region", "grain": "month"}]}, "not a time dimension"),
        ({"where": [{"name": "customer__region", "operator": "=", "values": ["eu"]}]},
         "'eu' is not a value of customer__region; did you mean 'EU'?"),
        ({"where": [{"name": "customer__region", "operator": "=", "values": ["EU", "NA"]}]},
         "with '=' takes one value"),
        ({"where": [{"name": "metric_time", "operator": ">=", "values": ["last month"]}]},
         "compare it with a date"),
        ({"where": [{"name": "order__status", "operator": "=", "values": ["{{ x }}"]}]},
         "template braces"),
        ({"order_by": [{"name": "customer__region"}]}, "Cannot order by 'customer__region'"),
    ],
)  # fmt: skip
def test_check_says_what_is_wrong_and_what_is_close(fields: dict[str, Any], problem: str) -> None:
    problems = check(query(**fields), LAYER, DOCS)
    assert len(problems) == 1 and problem in problems[0], problems


def test_a_good_query_has_no_problems() -> None:
    good = query(
        group_by=[{"name": "metric_time", "grain": "month"}, {"name": "customer__region"}],
        where=[{"name": "customer__region", "operator": "in", "values": ["EU", "NA"]}],
        order_by=[{"name": "metric_time"}, {"name": "revenue", "descending": True}],
    )
    assert check(good, LAYER, DOCS) == []
    assert (
        good.label() == "metric revenue, by month, customer region, where customer region in EU, NA"
    )


def test_the_model_fills_a_strict_shape() -> None:
    with pytest.raises(ValidationError):
        MetricQuery.model_validate({"metrics": []})
    with pytest.raises(ValidationError):
        query(group_by=[{"name": "metric_time", "grain": "fortnight"}])
    with pytest.raises(ValidationError):
        query(limit=0)


def test_filters_become_where_templates_with_literals() -> None:
    rendered = [
        where_template(MetricFilter.model_validate(f), LAYER)
        for f in (
            {"name": "customer__region", "operator": "not in", "values": ["EU", "O'Hara"]},
            {"name": "metric_time", "operator": "<", "values": ["2024-03-01"]},
            {"name": "customer", "operator": "=", "values": [3]},
        )
    ]
    assert rendered == [
        "{{ Dimension('customer__region') }} NOT IN ('EU', 'O''Hara')",
        "{{ TimeDimension('metric_time', 'day') }} < '2024-03-01'",
        "{{ Entity('customer') }} = 3",
    ]


# --- compiled by MetricFlow and run on the shop -------------------------------------------------


@pytest.fixture(scope="module")
def artifacts(shop_project: BuiltProject) -> Artifacts:
    return ProjectArtifacts(shop_project.target).current()


@pytest.fixture(scope="module")
def compiler(artifacts: Artifacts) -> MetricCompiler:
    assert artifacts.semantic is not None
    return MetricCompiler(artifacts.semantic_json, artifacts.semantic, "duckdb")


def _plain(row: tuple[Any, ...]) -> tuple[Any, ...]:
    """Numbers as floats rounded to cents, so Decimal, int and float compare."""
    return tuple(
        round(float(v), 2)
        if isinstance(v, int | float | Decimal) and not isinstance(v, bool)
        else v
        for v in row
    )


@pytest.mark.slow
@pytest.mark.parametrize(("fields", "rows"), CASES)
def test_compiled_sql_gives_the_numbers_worked_out_by_hand(
    compiler: MetricCompiler,
    artifacts: Artifacts,
    shop_warehouse: DuckDBConnector,
    fields: dict[str, Any],
    rows: list[tuple[Any, ...]],
) -> None:
    compiled = compiler.compile(MetricQuery.model_validate(fields), artifacts.documentation)
    # through the gate as any draft is, then on querybot's read-only connection
    verdict = check_sql(compiled.sql, Catalog(shop_warehouse, profile=False).gate_schema)
    assert verdict.ok, verdict.reasons
    result = shop_warehouse.run(verdict.sql, max_rows=100, timeout_s=30)
    assert [_plain(r) for r in result.rows] == [_plain(r) for r in rows]


@pytest.mark.slow
def test_a_compiled_query_says_what_it_is(compiler: MetricCompiler) -> None:
    compiled = compiler.compile(query(**BY_REGION, metrics=["net_revenue"]))
    assert compiled.label == "governed: metric net_revenue, by customer region"
    assert compiled.definitions == (
        "net_revenue (derived: revenue - refunds): Revenue less refunds.",
    )


@pytest.mark.slow
def test_what_the_layer_refuses_is_said_before_metricflow_runs(
    compiler: MetricCompiler, artifacts: Artifacts
) -> None:
    bad = query(where=[{"name": "customer__region", "operator": "=", "values": ["Europe"]}])
    with pytest.raises(MetricQueryError) as caught:
        compiler.compile(bad, artifacts.documentation)
    assert caught.value.problems == [
        "'Europe' is not a value of customer__region; did you mean 'EU'?"
    ]
    with pytest.raises(MetricQueryError, match="did you mean 'average_order_value'"):
        compiler.compile(query(metrics=["average_order_valu"]))


@pytest.mark.slow
def test_what_metricflow_refuses_comes_back_as_a_problem(compiler: MetricCompiler) -> None:
    # new_customers is measured on customers: an order's status does not reach it
    with pytest.raises(MetricQueryError, match="MetricFlow cannot compile it"):
        compiler.compile(query(metrics=["new_customers"], group_by=[{"name": "order__status"}]))


# --- the same queries in other warehouses' SQL ------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize(
    ("dialect", "relation", "prefix"),
    [
        # dbt-postgres writes database.schema.table; querybot's connector names schema.table
        ("postgres", '"analytics"."main"."{}"', "main."),
        ("bigquery", "`shop-project`.`main`.`{}`", "shop-project.main."),
    ],
)
def test_other_dialects_render_sql_the_gate_accepts(
    artifacts: Artifacts,
    shop_warehouse: DuckDBConnector,
    dialect: str,
    relation: str,
    prefix: str,
) -> None:
    assert artifacts.semantic is not None
    tables = [
        TableInfo(prefix + t.short_name, t.columns)
        for t in shop_warehouse.list_tables()
        if t.short_name in ("fct_orders", "dim_customers", "metricflow_time_spine")
    ]
    semantic = parsed_against(artifacts, relation)
    compiler = MetricCompiler(semantic, artifacts.semantic, dialect, tables)
    schema = GateSchema.from_tables(tables, dialect)
    for case in CASES:
        (fields, _), _ = case.values, case.id
        compiled = compiler.compile(MetricQuery.model_validate(fields))
        sqlglot.parse_one(compiled.sql, read=dialect)  # raises on SQL the dialect cannot read
        verdict = check_sql(compiled.sql, schema)
        assert verdict.ok, (case.id, verdict.reasons)
        assert set(verdict.tables) <= {t.name for t in tables}
    # without the warehouse's names, dbt's three-part ones are not tables the gate knows
    unmapped = MetricCompiler(semantic, artifacts.semantic, dialect)
    sql = unmapped.compile(MetricQuery.model_validate(CASES[0].values[0])).sql
    assert check_sql(sql, schema).ok is (dialect == "bigquery")


def test_relations_are_named_as_the_warehouse_names_them() -> None:
    tables = [TableInfo(n, ()) for n in ("main.fct_orders", "main.orders", "other.orders")]
    assert warehouse_table('"db"."main"."fct_orders"', tables) == "main.fct_orders"
    assert warehouse_table('"db"."main"."orders"', tables) == "main.orders"
    assert warehouse_table('"db"."x"."orders"', tables) is None  # two schemas have one
    assert warehouse_table("db.main.missing", tables) is None
    manifest = json.dumps(
        {
            "semantic_models": [{"node_relation": {"relation_name": '"db"."main"."fct_orders"'}}],
            "project_configuration": {
                "time_spines": [{"node_relation": {"relation_name": "db.main.unknown"}}]
            },
        }
    )
    mapped = json.loads(in_warehouse(manifest, tables, "bigquery"))
    assert mapped["semantic_models"][0]["node_relation"]["relation_name"] == "`main`.`fct_orders`"
    time_spine = mapped["project_configuration"]["time_spines"][0]["node_relation"]
    assert time_spine["relation_name"] == "db.main.unknown"


def test_names_alone_are_read_as_small_models_write_them() -> None:
    loose = MetricQuery.model_validate(
        {
            "metrics": "revenue",
            "group_by": ["metric_time__month", "customer__region"],
            "order_by": ["-revenue", "metric_time"],
        }
    )
    assert loose == query(
        group_by=[{"name": "metric_time", "grain": "month"}, {"name": "customer__region"}],
        order_by=[{"name": "revenue", "descending": True}, {"name": "metric_time"}],
    )
    assert check(loose, LAYER, DOCS) == []
