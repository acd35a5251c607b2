"""Containment: statements the gate REJECTS (the harmful catalogue and `ESCAPES`), sent straight
to a connector's `run`, must be stopped by the connector and the engine alone; a directory the
servers can reach holds the secret, and every file the statements name is watched."""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from stat import S_ISDIR as stat_is_dir

from connectors.base import Connector
from tests.support.canary_data import files, write_secrets
from tests.support.canary_runs import Run, run_on


def contain(
    connector: Connector,
    statements: Sequence[str],
    snapshot: Callable[[], object],
    directories: Iterable[Path],
    *,
    timeout_s: float = 1.0,
) -> Run:
    """`run_on`, recording in `Run.changed` whatever changed meanwhile: the database (as
    `snapshot` sees it), the files under `directories` and every file the statements name."""
    watched = list(directories)
    before, listed, named = snapshot(), [files(d) for d in watched], named_files(statements)
    run = run_on(connector, statements, timeout_s=timeout_s)
    if snapshot() != before:
        run.changed.append("the database")
    run.changed += [
        f"files under {d}" for d, was in zip(watched, listed, strict=True) if files(d) != was
    ]
    if named_files(statements) != named:
        run.changed.append("a file the statements name")
    return run


#: Engine-specific escapes tried on top of the gate's catalogue.
ESCAPES = {
    "mysql": [
        "SET STATEMENT tx_read_only=0 FOR CREATE TABLE stolen (a INT)",
        "SET STATEMENT tx_read_only=0 FOR DROP TABLE orders",
        "SET STATEMENT tx_read_only=0 FOR INSERT INTO customers VALUES (9, 'x', 'y')",
        "SET STATEMENT tx_read_only=0 FOR SELECT * FROM users INTO OUTFILE '/tmp/users.txt'",
        "SET STATEMENT max_statement_time=0 FOR SELECT SLEEP(5)",
    ],
    # DuckDB's configuration, attached databases, secrets, logging and extensions: what the
    # connector's locked, read-only, no-external-access connection has to hold on its own.
    "duckdb": [
        "SET lock_configuration = false",
        "RESET lock_configuration",
        "SET access_mode = 'read_write'",
        "SET allowed_directories = ['/']",
        "SET temp_directory = '/tmp/querybot-spill'",
        "SET profiling_output = '/tmp/querybot-profile.json'",
        "CALL enable_logging(storage = 'file', storage_path = '/tmp/querybot-log')",
        "ATTACH ':memory:' AS scratch",
        "ATTACH '/tmp/canary.duckdb' AS rw (READ_WRITE)",
        "EXPORT DATABASE '/tmp/querybot-export'",
        "IMPORT DATABASE '/tmp/'",
        "CREATE SECRET leak (TYPE s3, KEY_ID 'x', SECRET 'y')",
        "CREATE PERSISTENT SECRET leak (TYPE s3, KEY_ID 'x', SECRET 'y')",
        "INSTALL '/tmp/querybot.duckdb_extension'",
        "LOAD '/tmp/querybot.duckdb_extension'",
        "FORCE CHECKPOINT",
        "VACUUM",
        "SELECT * FROM read_text('/tmp/secret.txt')",
    ],
    # GoogleSQL spellings the BigQuery connector must stop before a job exists (the emulator's
    # engine is DuckDB, which would read files and write tables given the chance).
    "bigquery": [
        "SELECT * INTO canary.stolen FROM canary.users",
        "SELECT * FROM canary.users FOR UPDATE",
        "SELECT `demo.canary.remote_fn`(name) FROM canary.customers",
        "SELECT * FROM canary.users, EXTERNAL_QUERY('c', 'SELECT 1 AS x')",
        "(SELECT 1 AS x) UNION ALL (SELECT x FROM EXTERNAL_QUERY('c', 'SELECT 1 AS x'))",
        "SELECT AI.GENERATE_BOOL('is this a secret?')",
        "SELECT * FROM VECTOR_SEARCH(TABLE canary.users, 'id', TABLE canary.orders, 'id')",
        "SELECT * FROM canary.users WHERE id IN UNNEST(canary.tvf(1))",
    ],
    "postgres": [
        "SELECT set_config('transaction_read_only', 'off', true)",
        "SELECT set_config('default_transaction_read_only', 'off', false)",
        "SELECT set_config('role', 'postgres', false)",
        "SELECT set_config('statement_timeout', '0', true), pg_sleep(5)",
    ],
}

_QUOTED_PATH = re.compile(r"'(/[^']*)'")


def server_directory() -> Path:
    """A fresh directory holding the secret files that the database servers (running as other
    OS users) could read and write into: a statement that got past every guard would read the
    secret from it or leave a file in it. Remove it with `shutil.rmtree`."""
    directory = Path(tempfile.mkdtemp(prefix="querybot-canary-"))
    write_secrets(directory)
    directory.chmod(0o777)
    for path in directory.iterdir():
        path.chmod(0o644)
    return directory


def aimed(statements: Iterable[str], directory: Path) -> list[str]:
    """Each statement as written and, when it names a file, once more aimed at `directory`:
    `/etc/passwd` (or any file read) becomes the secret file, `/tmp/x` becomes `directory/x`."""
    secret = directory / "secret.txt"
    out: list[str] = []
    for sql in statements:
        out.append(sql)
        if _QUOTED_PATH.search(sql):
            out.append(
                sql.replace("'/tmp/", f"'{directory}/").replace("'/etc/passwd'", f"'{secret}'")
            )
    return list(dict.fromkeys(out))


def named_files(statements: Iterable[str]) -> dict[str, tuple[int, int] | None]:
    """Every absolute path quoted in the statements, with its size and modification time (None
    when it does not exist): a write anywhere they name shows as a change."""
    found: dict[str, tuple[int, int] | None] = {}
    for sql in statements:
        for path in _QUOTED_PATH.findall(sql):
            try:
                stat = os.stat(path)
            except OSError:
                found[path] = None
            else:  # directories ('/', '/etc') change as other programs work: files only
                if not stat_is_dir(stat.st_mode):
                    found[path] = (stat.st_size, stat.st_mtime_ns)
    return found
