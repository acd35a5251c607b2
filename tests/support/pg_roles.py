"""A scratch PostgreSQL database with row-level security and roles to act as, set up the way
docs/warehouses.md tells a deployment to: the bot's login (NOINHERIT) may SELECT every table
for its catalog but sees no row of the policed table itself, and is granted the roles people
map to, which it may only `SET ROLE` to.

    shop.sales          region, amount; RLS: a role sees the regions shop.region_access gives it
    shop.region_access  role -> region
    shop.salaries       readable by `west` only (and the login, for its catalog)

Roles (cluster-wide, so suffixed): `east` and `west` read sales; `west` also salaries; `odd` is
a name that must be quoted (`x"; DROP ...`) and reads sales like east; `stranger` exists but is
not granted to the login. Everything is dropped afterwards.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import psycopg
from psycopg import sql

from tests.support.sql_fixtures import (
    HOST,
    PG_PORT,
    bound_temp_files,
    pg_connect,
    port_open,
    require,
)

#: (region, amount) rows of shop.sales.
SALES = [("east", 10), ("east", 20), ("west", 300), ("west", 400), ("north", 5000)]


@dataclass(frozen=True)
class RlsWarehouse:
    database: str
    login: str
    east: str
    west: str
    odd: str
    stranger: str

    @property
    def url(self) -> str:
        return f"postgresql://{self.login}@{HOST}:{PG_PORT}/{self.database}"

    def rows_of(self, region: str) -> list[tuple[str, int]]:
        return [row for row in SALES if row[0] == region]


@contextmanager
def rls_warehouse() -> Iterator[RlsWarehouse]:
    require(port_open(PG_PORT), f"PostgreSQL is not reachable at {HOST}:{PG_PORT}")
    tag = uuid.uuid4().hex[:8]
    found = RlsWarehouse(
        database=f"querybot_rls_{tag}",
        login=f"querybot_rls_{tag}",
        east=f"qb_{tag}_east",
        west=f"qb_{tag}_west",
        odd=f'qb_{tag}_x"; DROP TABLE shop.sales; --',
        stranger=f"qb_{tag}_stranger",
    )
    roles = [found.east, found.west, found.odd, found.stranger]
    ident = sql.Identifier
    with pg_connect("postgres") as server:
        server.execute(sql.SQL("CREATE DATABASE {}").format(ident(found.database)))
        server.execute(sql.SQL("CREATE ROLE {} LOGIN NOINHERIT").format(ident(found.login)))
        bound_temp_files(server, found.login)
        for role in roles:
            server.execute(sql.SQL("CREATE ROLE {} NOLOGIN").format(ident(role)))
        try:
            with pg_connect(found.database) as admin:
                _load(admin, found)
            yield found
        finally:
            server.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(ident(found.database))
            )
            for role in [*roles, found.login]:
                server.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(ident(role)))


def _load(admin: psycopg.Connection, found: RlsWarehouse) -> None:
    login, east, west, odd = (
        sql.Identifier(n) for n in (found.login, found.east, found.west, found.odd)
    )
    for statement in [
        "CREATE SCHEMA shop",
        "CREATE TABLE shop.sales (region text, amount int)",
        "CREATE TABLE shop.region_access (role name, region text)",
        "CREATE TABLE shop.salaries (name text, salary int)",
        "INSERT INTO shop.salaries VALUES ('ann', 100)",
        "ALTER TABLE shop.sales ENABLE ROW LEVEL SECURITY",
        "CREATE POLICY by_region ON shop.sales FOR SELECT USING (region IN "
        "(SELECT a.region FROM shop.region_access a WHERE a.role = current_user))",
    ]:
        admin.execute(statement)
    with admin.cursor() as cur:
        cur.executemany("INSERT INTO shop.sales VALUES (%s, %s)", SALES)
        cur.executemany(
            "INSERT INTO shop.region_access VALUES (%s, %s)",
            [(found.east, "east"), (found.west, "west"), (found.odd, "east")],
        )
    template = [
        "GRANT CONNECT ON DATABASE {db} TO {login}",
        "GRANT USAGE ON SCHEMA shop TO {login}, {east}, {west}, {odd}",
        # the login's own SELECT is for its catalog: RLS shows it no row of shop.sales
        "GRANT SELECT ON ALL TABLES IN SCHEMA shop TO {login}",
        "GRANT SELECT ON shop.sales, shop.region_access TO {east}, {west}, {odd}",
        "GRANT SELECT ON shop.salaries TO {west}",
        "GRANT {east}, {west}, {odd} TO {login}",
    ]
    for text in template:
        admin.execute(
            sql.SQL(text).format(
                db=sql.Identifier(found.database), login=login, east=east, west=west, odd=odd
            )
        )
    admin.execute("ANALYZE")
