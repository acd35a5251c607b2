"""Canary databases: run statements and prove nothing changed or leaked.

Each canary holds three small tables and sits beside a secret file. A run executes every
statement on the hardened read-only path production uses (the connector's own `run`:
`DuckDBConnector` opened from `duckdb:PATH`, `SqlConnector` as the bot's login for SQLite,
MariaDB and PostgreSQL), and on a connection that would allow harm (for DuckDB and SQLite
read-write, for MariaDB and PostgreSQL the administrator inside a read-only transaction), so that
a pass proves the gate alone kept the statements harmless. Before and after: every table's
checksum, the list of tables, and the files beside the database. During: no result may contain
the secret or a line of /etc/passwd, and no statement may be refused by the engine for trying to
write or reach a file (that refusal would mean the gate let it through).

`contain` runs the other way round: statements the gate REJECTS (the harmful catalogue), sent
straight to a connector's `run`, must be stopped by the connector and the engine alone.

This module is the one the tests and benchmarks import; what it offers lives beside it:
`canary_data` (the tables, the secret, checksums), `canary_runs` (`Run`, `run_on`),
`canary_file_databases` (DuckDB, SQLite), `canary_servers` (MariaDB, PostgreSQL),
`canary_bigquery` and `canary_containment` (`contain`, `ESCAPES`, `aimed`).
"""

from __future__ import annotations

from tests.support.canary_bigquery import BigQueryCanary
from tests.support.canary_containment import (
    ESCAPES,
    aimed,
    contain,
    named_files,
    server_directory,
)
from tests.support.canary_data import (
    COLUMNS,
    MARIADB_DB,
    ROWS,
    files,
    schema,
    secret_text,
    table_names,
    tables,
    write_csvs,
    write_secrets,
)
from tests.support.canary_file_databases import DuckDBCanary, SQLiteCanary, duckdb_snapshot
from tests.support.canary_runs import TIMEOUT_S, Run, run_connector, run_on
from tests.support.canary_servers import MariaDBCanary, PostgresCanary

__all__ = [
    "COLUMNS",
    "ESCAPES",
    "MARIADB_DB",
    "ROWS",
    "TIMEOUT_S",
    "BigQueryCanary",
    "DuckDBCanary",
    "MariaDBCanary",
    "PostgresCanary",
    "Run",
    "SQLiteCanary",
    "aimed",
    "contain",
    "duckdb_snapshot",
    "files",
    "named_files",
    "run_connector",
    "run_on",
    "schema",
    "secret_text",
    "server_directory",
    "table_names",
    "tables",
    "write_csvs",
    "write_secrets",
]
