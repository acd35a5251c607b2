"""`querybot doctor` on a warehouse's dbt project (QUERYBOT_DBT_PROJECT, `dbt_project` in a
config file; a project directory is parsed with dbt first): its artifacts read (catalog.json
too when there), its models found among the warehouse's tables (a project parsed against
another profile names other tables), and, where it defines metrics, one compiled by MetricFlow
and accepted by the gate, or why there are no metric questions."""

from __future__ import annotations

from pathlib import Path

from agent.gate import GateSchema, check_sql
from agent.semantic.artifacts import CATALOG, DbtProjectError, ProjectArtifacts
from agent.semantic.metric_query import MetricQuery, MetricQueryError
from agent.semantic.metrics import Metrics
from bot.doctor.report import Section
from connectors.base import Connector, TableInfo
from connectors.units import counted


def check_dbt_project(
    path: Path, connector: Connector, tables: list[TableInfo], section: Section
) -> None:
    """Add the project's findings to the warehouse's `section`."""
    try:
        project = ProjectArtifacts(path)
    except DbtProjectError as exc:
        section.fail(f"dbt project: {exc}")
        return
    artifacts = project.current()
    documentation = artifacts.documentation
    found = [t for t in tables if documentation.table(t.name) is not None]
    if not found:
        section.fail(
            f"dbt project ({artifacts.target}): none of its {len(documentation.tables)} models "
            "is a table here: run `dbt parse` with this warehouse's profile."
        )
        return
    values = sum(1 for t in documentation.tables.values() for c in t.columns.values() if c.values)
    section.ok(
        f"dbt project {documentation.source.removeprefix('dbt project ')}: {len(found)} of its "
        f"models are tables here; {counted(values, 'value list')}, "
        f"{counted(len(documentation.joins), 'join key')}"
        + ("; catalog.json read" if (artifacts.target / CATALOG).is_file() else "")
    )
    metrics = Metrics(project, connector.dialect)
    why_not = metrics.unavailable()
    if why_not:
        section.note(f"metric questions: off ({why_not}); answers are ad hoc SQL")
        return
    layer = metrics.layer
    assert layer is not None
    names = list(layer.metrics)
    first = MetricQuery(metrics=names[:1])
    try:
        sql = metrics.compile(first, tuple(tables)).sql
    except MetricQueryError as exc:
        section.fail(f"metric {names[0]} does not compile: {exc}")
        return
    verdict = check_sql(sql, GateSchema.from_tables(tables, connector.dialect))
    if not verdict.ok:
        reasons = "; ".join(str(r) for r in verdict.reasons)
        section.fail(f"metric {names[0]} compiles to SQL the gate refuses: {reasons}")
        return
    shown = ", ".join(names[:5]) + (", ..." if len(names) > 5 else "")
    section.ok(f"metric questions: {len(names)} metrics ({shown}), compiled by MetricFlow")
