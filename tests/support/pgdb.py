"""Scratch PostgreSQL databases for the replica tests (127.0.0.1:5432, trust authentication).

Each test module creates its own database and drops it afterwards. Without a server the tests
skip, except in CI (`CI=true`), where they fail: a missing server must not pass unnoticed.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import psycopg

from tests.support.needs import unavailable
from tests.support.sql_fixtures import (
    PG_PORT,
    bound_temp_files,
    pg_connect,
    port_open,
    require,
    unique_name,
)

HOST = "127.0.0.1:5432"
USERS = ("postgres", "root")


def _admin() -> tuple[psycopg.Connection, str]:
    errors = []
    for user in USERS:
        try:
            conn = psycopg.connect(f"postgresql://{user}@{HOST}/postgres", autocommit=True)
        except psycopg.OperationalError as exc:
            errors.append(f"{user}: {exc}")
            continue
        return conn, user
    message = f"PostgreSQL at {HOST} is unreachable: {'; '.join(errors)}"
    unavailable(message)


@contextmanager
def scratch_database(prefix: str) -> Iterator[str]:
    """Create an empty database; yield its URL; drop it (closing any connection left to it)."""
    admin, user = _admin()
    name = f"querybot_{prefix}_{uuid.uuid4().hex[:10]}"
    with admin:
        admin.execute(f'CREATE DATABASE "{name}"')
        try:
            yield f"postgresql://{user}@{HOST}/{name}"
        finally:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def rows(url: str, sql: str, *params: object) -> list[dict[str, object]]:
    """Run one query on `url` and return its rows as dicts."""
    from psycopg.rows import dict_row

    with psycopg.connect(url, autocommit=True, row_factory=dict_row) as conn:
        cursor = conn.execute(sql, params)
        return list(cursor.fetchall()) if cursor.description else []


@contextmanager
def postgres_reader(setup: Callable[[psycopg.Connection], None]) -> Iterator[str]:
    """A scratch database, filled by `setup` (an administrator's connection to it), and a login
    of the same name that may only read its tables and views (the connector refuses a superuser);
    yields that login's URL; both dropped afterwards (the database first: the grants are in it)."""
    require(port_open(PG_PORT), f"PostgreSQL is not reachable at {HOST}")
    name = unique_name()
    with pg_connect("postgres") as server:
        server.execute(f"CREATE DATABASE {name}")
        server.execute(f"CREATE ROLE {name} LOGIN")
        bound_temp_files(server, name)
        try:
            with pg_connect(name) as admin:
                setup(admin)
                admin.execute(f"GRANT SELECT ON ALL TABLES IN SCHEMA public TO {name}")
            yield f"postgresql://{name}@{HOST}/{name}"
        finally:
            server.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
            server.execute(f"DROP ROLE IF EXISTS {name}")
