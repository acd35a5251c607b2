"""The benchmark's warehouse: the defog-data databases and the demo as real DuckDB files, hidden
among generated tables, plus the sql-eval gold questions over them.

The defog databases are loaded by `agent.evaluation.defog` (shared with `querybot eval --defog`),
so the real connector and profiler read them as they would a team's warehouse.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from agent.catalog.profiling import ProfileLimits, profile_tables
from agent.catalog.snapshot import TableProfile
from agent.evaluation.defog import Gold, build_defog, databases, gold_questions, idk_questions
from connectors.base import TableInfo
from connectors.demo.build import ensure_demo
from connectors.duckdb.connector import DuckDBConnector

DATABASES = databases()


@dataclass(frozen=True)
class RealTables:
    tables: list[TableInfo]
    profiles: dict[str, TableProfile]
    #: defog database -> its DuckDB file
    files: dict[str, Path]


def real_tables(cache: Path) -> RealTables:
    """Every defog and demo table, read and profiled through the real DuckDB connector."""
    cache.mkdir(parents=True, exist_ok=True)
    files = {db: build_defog(db, cache / f"{db}.duckdb") for db in DATABASES}
    tables: list[TableInfo] = []
    profiles: dict[str, TableProfile] = {}
    for path in [*files.values(), ensure_demo(cache)]:
        connector = DuckDBConnector(path)
        try:
            found = tuple(connector.list_tables())
            tables += found
            profiles |= profile_tables(connector, found, ProfileLimits())
        finally:
            connector.close()
    return RealTables(tables, profiles, files)


__all__ = ["DATABASES", "Gold", "RealTables", "gold_questions", "idk_questions", "real_tables"]
