"""Per-dialect lists: functions that reach outside the query, table functions that may stand in
FROM, and the system catalogs a deployment's schema never exposes.

Function lists are deny lists of shell-style patterns (`read_*`), each with the reason shown to the
user and to the repair prompt. They name what is known to be harmful, so that a refusal says
why; what is accepted is decided by the allow lists in functions.py, and a denied name stays
denied even when a deployment lists it as its own. Table functions are an allow list too: FROM
is where engines read files, other databases and remote services (DuckDB `read_csv`, BigQuery
`EXTERNAL_QUERY`, Postgres `dblink`), and an extension can add new ones at any time.
"""

from __future__ import annotations

import re
from fnmatch import translate

from sqlglot import exp

from connectors.bigquery.sql import FUNCTION_PREFIXES
from connectors.snowflake.functions import TABLE_FUNCTIONS as SNOWFLAKE_TABLE_FUNCTIONS

FILES = "reads or writes files"
NETWORK = "reaches other databases or the network"
TIME = "waits or burns time"
STATE = "changes server or session state"
EXEC = "runs SQL text of its own"
SECRETS = "reveals settings or secrets"
WRITES = "writes (it advances a sequence)"
SYSTEM = "reveals server, session or catalog information"

#: Attack primitives of every engine, denied in all dialects: where a name does not exist it costs
#: nothing, and a statement transpiled from a neighbouring dialect may still carry it.
COMMON: dict[str, str] = {
    "sleep": TIME,
    "pg_sleep*": TIME,
    "benchmark": TIME,
    "waitfor": TIME,
    "randomblob": TIME,  # SQLite's time-based injection: RANDOMBLOB(500000000)
    "zeroblob": TIME,
    "get_lock": STATE,
    "release_lock": STATE,
    "release_all_locks": STATE,
    "load_file": FILES,
    "load_extension": FILES,
    "readfile": FILES,
    "writefile": FILES,
    "read_*": FILES,
    "*_scan": FILES,
    "sniff_csv": FILES,
    "parquet_*": FILES,
    "fsdir": FILES,
    "zipfile": FILES,
    "edit": FILES,
    "pg_read*": FILES,
    "pg_ls*": FILES,
    "lo_import": FILES,
    "lo_export": FILES,
    "query": EXEC,
    "query_table": EXEC,
    "query_to_xml*": EXEC,
    "xp_*": EXEC,
    "sys_exec": EXEC,
    "sys_eval": EXEC,
    "dblink*": NETWORK,
    "external_query": NETWORK,
    "postgres_*": NETWORK,
    "mysql_*": NETWORK,
    "utl_*": NETWORK,
    "dbms_*": STATE,
    "set_config": STATE,
    "getenv": SECRETS,
    "current_setting": SECRETS,
    "nextval": WRITES,
    "setval": WRITES,
    "version": SYSTEM,
    "database": SYSTEM,
    "schema": SYSTEM,
    "user": SYSTEM,
    "system_user": SYSTEM,
    "session_user": SYSTEM,
    "current_user": SYSTEM,
    "current_role": SYSTEM,
    "current_schema*": SYSTEM,
    "current_database": SYSTEM,
    "current_catalog": SYSTEM,
    "current_query": SYSTEM,
    "connection_id": SYSTEM,
    "last_insert_id": SYSTEM,
    "last_insert_rowid": SYSTEM,
    "found_rows": SYSTEM,
    "row_count": SYSTEM,
    "changes": SYSTEM,
    "total_changes": SYSTEM,
    "getvariable": SYSTEM,
    "to_reg*": SYSTEM,
    "has_*_privilege": SYSTEM,
    "*_description": SYSTEM,
    "format_type": SYSTEM,
    "inet_*": SYSTEM,
    "sqlite_*": SYSTEM,
    "duckdb_*": SYSTEM,
}

DIALECT: dict[str, dict[str, str]] = {
    "duckdb": {
        "glob": FILES,
        "iceberg_*": FILES,
        "delta_*": FILES,
        "st_read*": FILES,
        "*execute*": EXEC,
        "*substrait*": EXEC,
        "*_query": NETWORK,
        "*_attach": NETWORK,
        "sqlite_*": NETWORK,
        "ducklake_*": NETWORK,
        "http_*": NETWORK,
        "duckdb_secrets": SECRETS,
        "which_secret": SECRETS,
        "load_aws_credentials": SECRETS,
        "checkpoint": STATE,
        "force_checkpoint": STATE,
    },
    "postgres": {
        "pg_*": STATE,
        "lo_*": FILES,
        "*_to_xml*": EXEC,
        "ts_stat": EXEC,  # runs its SQL-text argument
        "ts_rewrite": EXEC,
        "txid_current": STATE,
    },
    "mysql": {
        "is_free_lock": STATE,
        "is_used_lock": STATE,
        "master_pos_wait": TIME,
        "master_gtid_wait": TIME,
        "source_pos_wait": TIME,
        "wait_for_executed_gtid_set": TIME,
        "wait_until_sql_thread_after_gtids": TIME,
        "sys_*": EXEC,
    },
    "sqlite": {
        "fts3_tokenizer": STATE,
        "sqlite_dbpage": FILES,
        "sqlite_dbdata": FILES,
    },
    "bigquery": {
        "external_object_transform": FILES,
        "obj_*": FILES,
    },
    "snowflake": {
        "system$*": STATE,  # cancel queries, run tasks, read account state
        "result_scan": SYSTEM,  # other queries' results
        "last_query_id": SYSTEM,
        "*_history*": SYSTEM,  # QUERY_HISTORY, LOGIN_HISTORY, COPY_HISTORY...
        "infer_schema": FILES,  # reads staged files
        "validate*": FILES,
        "build_*_url": FILES,  # stage file URLs
        "get_presigned_url": FILES,
        "get_stage_location": FILES,
        "get_relative_path": FILES,
        "get_absolute_path": FILES,
        "external_*": NETWORK,
        "is_role_in_session": SYSTEM,
        "is_*_in_session": SYSTEM,
        "invoker_*": SYSTEM,
        "policy_context": SYSTEM,
        "get_ddl": SYSTEM,
        "generator": TIME,  # rows out of nothing: GENERATOR(ROWCOUNT => 1e12)
    },
}

#: Postgres administration functions live under `pg_`; these few only describe values.
HARMLESS: dict[str, frozenset[str]] = {
    "postgres": frozenset({"pg_typeof", "pg_size_pretty", "pg_column_size"}),
}

#: sqlglot classes denied whatever name the generator gives them.
DENIED_CLASSES: dict[type[exp.Expr], str] = {
    exp.ReadCSV: FILES,
    exp.ReadParquet: FILES,
    exp.ToFile: FILES,
    exp.NextValueFor: WRITES,
    exp.Predict: NETWORK,
    exp.GenerateEmbedding: NETWORK,
    exp.AIAgg: NETWORK,
    exp.AIClassify: NETWORK,
    exp.AIEmbed: NETWORK,
    exp.AIForecast: NETWORK,
    exp.AIGenerate: NETWORK,
    exp.AISimilarity: NETWORK,
    exp.AISummarizeAgg: NETWORK,
    exp.MLForecast: NETWORK,
    exp.MLTranslate: NETWORK,
}

#: Table functions allowed in FROM, JOIN and LATERAL, by lower-case name.
TABLE_FUNCTIONS: dict[str, frozenset[str]] = {
    "duckdb": frozenset({"range", "generate_series", "unnest", "json_each", "json_tree"}),
    "postgres": frozenset(
        {
            "generate_series",
            "generate_subscripts",
            "unnest",
            "json_each",
            "json_each_text",
            "jsonb_each",
            "jsonb_each_text",
            "json_array_elements",
            "json_array_elements_text",
            "jsonb_array_elements",
            "jsonb_array_elements_text",
            "json_to_record",
            "json_to_recordset",
            "jsonb_to_record",
            "jsonb_to_recordset",
            "json_object_keys",
            "jsonb_object_keys",
            "jsonb_path_query",
            "regexp_matches",
            "regexp_split_to_table",
            "string_to_table",
        }
    ),
    "mysql": frozenset({"json_table"}),
    "sqlite": frozenset({"json_each", "json_tree", "generate_series"}),
    "bigquery": frozenset({"unnest"}),
    "snowflake": SNOWFLAKE_TABLE_FUNCTIONS,
}

#: Typed sqlglot table functions that only generate rows from their arguments.
TABLE_FUNCTION_CLASSES: tuple[type[exp.Expr], ...] = (
    exp.Unnest,
    exp.Explode,
    exp.GenerateSeries,
    exp.ExplodingGenerateSeries,
    exp.JSONTable,
    exp.SplitToTable,
)

#: Dotted function prefixes BigQuery uses for plain scalar functions (`SAFE.DIVIDE`, `NET.HOST`):
#: the BigQuery connector's own list, which it enforces before a job exists.
BIGQUERY_FUNCTION_PREFIXES = FUNCTION_PREFIXES

#: System catalogs per dialect: (schemas, table-name prefixes). Catalog tables expose users,
#: password hashes, other sessions' queries and settings; a deployment exposes them only by
#: listing them in its schema.
SYSTEM_SCHEMAS: dict[str, frozenset[str]] = {
    "duckdb": frozenset({"information_schema", "pg_catalog", "system", "temp"}),
    "postgres": frozenset({"information_schema", "pg_catalog", "pg_toast"}),
    "mysql": frozenset({"information_schema", "mysql", "performance_schema", "sys"}),
    "sqlite": frozenset(),
    "bigquery": frozenset({"information_schema"}),
    # The shared SNOWFLAKE database holds ACCOUNT_USAGE (every query, login and grant).
    "snowflake": frozenset(
        {
            "information_schema",
            "snowflake",
            "account_usage",
            "organization_usage",
            "data_sharing_usage",
            "reader_account_usage",
            "snowflake_sample_data",
        }
    ),
}
SYSTEM_TABLE_PREFIXES: dict[str, tuple[str, ...]] = {
    "duckdb": ("duckdb_", "sqlite_", "pragma_"),
    "postgres": ("pg_",),
    "mysql": (),
    "sqlite": ("sqlite_", "pragma_"),
    "bigquery": ("information_schema", "__tables"),
    "snowflake": (),
}


def _compile(patterns: dict[str, str]) -> list[tuple[re.Pattern[str], str]]:
    return [(re.compile(translate(p)), why) for p, why in patterns.items()]


_DENIED = {d: _compile({**COMMON, **DIALECT.get(d, {})}) for d in DIALECT}
_DENIED_DEFAULT = _compile(COMMON)


def denied_function(name: str, dialect: str) -> str | None:
    """Why the function `name` is denied in `dialect`, or None when it may be called."""
    name = name.lower()
    if name in HARMLESS.get(dialect, frozenset()):
        return None
    for pattern, why in _DENIED.get(dialect, _DENIED_DEFAULT):
        if pattern.match(name):
            return why
    return None


def is_system_table(parts: list[str], dialect: str) -> bool:
    """Whether a table reference (lower-cased parts, catalog first) names a system catalog."""
    schemas = SYSTEM_SCHEMAS.get(dialect, frozenset())
    prefixes = SYSTEM_TABLE_PREFIXES.get(dialect, ())
    if any(part in schemas for part in parts[:-1]):
        return True
    if dialect == "bigquery":
        # `region-us.INFORMATION_SCHEMA.JOBS` parses as one identifier `INFORMATION_SCHEMA.JOBS`
        return any(part.startswith(prefixes) for part in parts)
    return parts[-1].startswith(prefixes) if prefixes else False
