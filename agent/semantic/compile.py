"""MetricFlow compiles a checked metric query to SQL in the warehouse's dialect, offline.

The only module that imports MetricFlow (the optional `dbt` extra), whose engine is not a stable
API (its docstring says so; the version is pinned in pyproject.toml). MetricFlow's `explain` needs
of its SQL client only the engine type and the dialect's plan renderer; the client here refuses
anything else, so compiling never touches the warehouse: the SQL goes through the gate and the
approval like any other draft, and runs on querybot's own read-only connection.

The relations in the semantic manifest are those dbt wrote for its profile (`"db"."main"."t"`,
three parts even where the warehouse's connector names tables `main.t`). Given the warehouse's
tables, each relation is replaced by the one table it means
(agent.catalog.documentation.warehouse_table), quoted in the dialect, so the SQL names tables as the
gate knows them.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NoReturn

from metricflow.data_table.mf_table import MetricFlowDataTable
from metricflow.engine.metricflow_engine import MetricFlowEngine, MetricFlowQueryRequest
from metricflow.protocols.sql_client import SqlEngine
from metricflow.sql.render.big_query import BigQuerySqlPlanRenderer
from metricflow.sql.render.databricks import DatabricksSqlPlanRenderer
from metricflow.sql.render.duckdb_renderer import DuckDbSqlPlanRenderer
from metricflow.sql.render.postgres import PostgresSQLSqlPlanRenderer
from metricflow.sql.render.redshift import RedshiftSqlPlanRenderer
from metricflow.sql.render.snowflake import SnowflakeSqlPlanRenderer
from metricflow.sql.render.sql_plan_renderer import SqlPlanRenderer
from metricflow.sql.render.trino import TrinoSqlPlanRenderer
from metricflow_semantics.model.dbt_manifest_parser import (
    parse_manifest_from_dbt_generated_manifest,
)
from metricflow_semantics.model.semantic_manifest_lookup import SemanticManifestLookup
from metricflow_semantics.sql.sql_bind_parameters import SqlBindParameterSet
from sqlglot import exp

from agent.catalog.documentation import Documentation, warehouse_table
from agent.semantic.metric_query import MetricFilter, MetricQuery, MetricQueryError, check
from agent.semantic.semantic_manifest import SemanticLayer
from connectors.base import TableInfo

#: sqlglot dialect -> MetricFlow's engine and the renderer of its SQL.
_ENGINES: dict[str, tuple[SqlEngine, type[SqlPlanRenderer]]] = {
    "duckdb": (SqlEngine.DUCKDB, DuckDbSqlPlanRenderer),
    "postgres": (SqlEngine.POSTGRES, PostgresSQLSqlPlanRenderer),
    "bigquery": (SqlEngine.BIGQUERY, BigQuerySqlPlanRenderer),
    "snowflake": (SqlEngine.SNOWFLAKE, SnowflakeSqlPlanRenderer),
    "databricks": (SqlEngine.DATABRICKS, DatabricksSqlPlanRenderer),
    "redshift": (SqlEngine.REDSHIFT, RedshiftSqlPlanRenderer),
    "trino": (SqlEngine.TRINO, TrinoSqlPlanRenderer),
}

_NO_PARAMETERS = SqlBindParameterSet()

#: How much of MetricFlow's own message a refusal keeps (it can run to pages).
_MESSAGE_CHARS = 600


@dataclass(frozen=True)
class CompiledMetricQuery:
    query: MetricQuery
    sql: str
    dialect: str
    #: "governed: metric revenue, by customer region, month".
    label: str
    #: The definition of each metric used (`revenue (simple: order_total): ...`).
    definitions: tuple[str, ...]


class _ExplainOnly:
    """A SqlClient that can only say which engine it is: `explain` needs nothing more."""

    def __init__(self, engine: SqlEngine, renderer: SqlPlanRenderer) -> None:
        self._engine = engine
        self._renderer = renderer

    @property
    def sql_engine_type(self) -> SqlEngine:
        return self._engine

    @property
    def sql_plan_renderer(self) -> SqlPlanRenderer:
        return self._renderer

    def _refuse(self) -> NoReturn:
        raise RuntimeError("querybot compiles metric queries only; its connector runs them")

    def query(
        self, stmt: str, sql_bind_parameter_set: SqlBindParameterSet = _NO_PARAMETERS
    ) -> MetricFlowDataTable:
        self._refuse()

    def execute(
        self, stmt: str, sql_bind_parameter_set: SqlBindParameterSet = _NO_PARAMETERS
    ) -> None:
        self._refuse()

    def dry_run(
        self, stmt: str, sql_bind_parameter_set: SqlBindParameterSet = _NO_PARAMETERS
    ) -> None:
        self._refuse()

    def close(self) -> None:
        pass

    def render_bind_parameter_key(self, bind_parameter_key: str) -> str:
        return f":{bind_parameter_key}"


def supported(dialect: str) -> bool:
    """Whether MetricFlow writes SQL for the sqlglot dialect `dialect`."""
    return dialect in _ENGINES


def _literal(value: str | int | float) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return "'" + str(value).replace("'", "''") + "'"
    return repr(value)


def where_template(f: MetricFilter, layer: SemanticLayer) -> str:
    """A checked filter as MetricFlow's where template: names checked against the layer,
    values literals (`{{ Dimension('customer__region') }} IN ('EU', 'NA')`)."""
    dimension = layer.dimensions.get(f.name)
    if dimension is None:
        ref = f"{{{{ Entity('{f.name}') }}}}"
    elif dimension.is_time:
        grain = f.grain or dimension.grain or "day"
        ref = f"{{{{ TimeDimension('{f.name}', '{grain}') }}}}"
    else:
        ref = f"{{{{ Dimension('{f.name}') }}}}"
    if f.operator in ("in", "not in"):
        values = ", ".join(_literal(v) for v in f.values)
        return f"{ref} {f.operator.upper()} ({values})"
    return f"{ref} {f.operator} {_literal(f.values[0])}"


def in_warehouse(semantic_json: str, tables: Sequence[TableInfo], dialect: str) -> str:
    """`semantic_json` with each relation (semantic models', time spines') named as the
    warehouse names it; a relation no table matches is left as dbt wrote it."""
    manifest = json.loads(semantic_json)

    def visit(node: Any) -> None:
        if isinstance(node, dict):
            relation = node.get("node_relation")
            if isinstance(relation, dict) and isinstance(relation.get("relation_name"), str):
                name = warehouse_table(relation["relation_name"], tables)
                if name is not None:
                    relation["relation_name"] = ".".join(
                        exp.to_identifier(part, quoted=True).sql(dialect=dialect)
                        for part in name.split(".")
                    )
            for value in node.values():
                visit(value)
        elif isinstance(node, list):
            for value in node:
                visit(value)

    visit(manifest)
    return json.dumps(manifest)


class MetricCompiler:
    """MetricFlow over one semantic manifest, for one dialect (and, given them, the
    warehouse's tables). Building it takes a few hundredths of a second; compiling a query as
    much again."""

    def __init__(
        self,
        semantic_json: str,
        layer: SemanticLayer,
        dialect: str,
        tables: Sequence[TableInfo] = (),
    ) -> None:
        if dialect not in _ENGINES:
            names = ", ".join(sorted(_ENGINES))
            problem = f"MetricFlow writes no SQL for {dialect}; it does for {names}."
            raise MetricQueryError([problem])
        engine, renderer = _ENGINES[dialect]
        self.layer = layer
        self.dialect = dialect
        if tables:
            semantic_json = in_warehouse(semantic_json, tables, dialect)
        lookup = SemanticManifestLookup(parse_manifest_from_dbt_generated_manifest(semantic_json))
        self._engine = MetricFlowEngine(lookup, _ExplainOnly(engine, renderer()))
        self._lock = threading.Lock()  # MetricFlow's engine keeps per-query state

    def compile(
        self,
        query: MetricQuery,
        documentation: Documentation | None = None,
        offered: SemanticLayer | None = None,
    ) -> CompiledMetricQuery:
        """The SQL of `query`; raises MetricQueryError saying what to change. `offered`: the
        part of the layer the asker may be offered (`readable_layer`), which the query is checked
        against, so a "did you mean" names nothing else."""
        problems = check(query, offered or self.layer, documentation)
        if problems:
            raise MetricQueryError(problems)
        grains = {g.name: g.qualified for g in query.group_by}
        request = MetricFlowQueryRequest.create(
            metric_names=list(query.metrics),
            group_by_names=[g.qualified for g in query.group_by] or None,
            where_constraints=[where_template(f, self.layer) for f in query.where] or None,
            order_by_names=[
                ("-" if o.descending else "") + grains.get(o.name, o.name) for o in query.order_by
            ]
            or None,
            limit=query.limit,
        )
        try:
            with self._lock:
                sql = self._engine.explain(request).sql_statement.sql
        except Exception as exc:  # MetricFlow's own refusals have no common base class
            text = " ".join(str(exc).split())
            if len(text) > _MESSAGE_CHARS:
                text = text[: _MESSAGE_CHARS - 3] + "..."
            raise MetricQueryError([f"MetricFlow cannot compile it: {text}"]) from exc
        return CompiledMetricQuery(
            query=query,
            sql=sql,
            dialect=self.dialect,
            label="governed: " + query.label(),
            definitions=tuple(self.layer.metrics[m].definition() for m in query.metrics),
        )
