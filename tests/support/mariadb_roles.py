"""A scratch MariaDB database with roles to act as, set up the way docs/access.md tells a
deployment to: the bot's login holds no privilege of its own, its catalog comes from its default
role (`catalog`, SELECT on the whole database), and it is granted the roles people map to.

    sales       region, amount      read by `east` and `west` (and `odd`)
    salaries    name, salary        read by `west` only, through a role granted to it (`hr`)

Roles (server-wide, so suffixed): `odd` is a name that must be quoted (a backtick in it);
`stranger` exists but is not granted to the login. Everything is dropped afterwards.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from tests.support.sql_fixtures import HOST, MYSQL_PORT, mysql_connect, port_open, require

SALES = [("east", 10), ("west", 300), ("north", 5000)]
SALARIES = [("ann", 100)]


def quoted(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


@dataclass(frozen=True)
class RoleWarehouse:
    database: str
    login: str
    catalog: str
    east: str
    west: str
    odd: str
    stranger: str
    hr: str

    @property
    def url(self) -> str:
        return f"mysql://{self.login}@{HOST}:{MYSQL_PORT}/{self.database}"

    def admin(self, *statements: str) -> None:
        con = mysql_connect()
        try:
            with con.cursor() as cur:
                for statement in statements:
                    cur.execute(statement)
        finally:
            con.close()


@contextmanager
def role_warehouse() -> Iterator[RoleWarehouse]:
    require(port_open(MYSQL_PORT), f"MySQL/MariaDB is not reachable at {HOST}:{MYSQL_PORT}")
    tag = uuid.uuid4().hex[:8]
    found = RoleWarehouse(
        database=f"qb_roles_{tag}",
        login=f"qb_roles_{tag}",
        catalog=f"qb_{tag}_catalog",
        east=f"qb_{tag}_east",
        west=f"qb_{tag}_west",
        odd=f"qb_{tag}_x`; DROP",
        stranger=f"qb_{tag}_stranger",
        hr=f"qb_{tag}_hr",
    )
    db, login = quoted(found.database), f"'{found.login}'@'%'"
    roles = [found.catalog, found.east, found.west, found.odd, found.stranger, found.hr]
    east, west, odd, catalog = map(quoted, (found.east, found.west, found.odd, found.catalog))
    found.admin(
        f"CREATE DATABASE {db}",
        f"CREATE TABLE {db}.sales (region VARCHAR(20), amount INT)",
        f"CREATE TABLE {db}.salaries (name VARCHAR(20), salary INT)",
        f"INSERT INTO {db}.sales VALUES " + ", ".join(f"('{r}', {a})" for r, a in SALES),
        f"INSERT INTO {db}.salaries VALUES " + ", ".join(f"('{n}', {s})" for n, s in SALARIES),
        f"CREATE USER {login}",
        *(f"CREATE ROLE {quoted(role)}" for role in roles),
        f"GRANT SELECT, SHOW VIEW ON {db}.* TO {catalog}",
        f"GRANT SELECT ON {db}.sales TO {east}, {west}, {odd}",
        f"GRANT SELECT ON {db}.salaries TO {quoted(found.hr)}",
        f"GRANT {quoted(found.hr)} TO {west}",
        *(f"GRANT {role} TO {login}" for role in (catalog, east, west, odd)),
        f"SET DEFAULT ROLE {catalog} FOR {login}",
    )
    try:
        yield found
    finally:
        found.admin(
            f"DROP DATABASE IF EXISTS {db}",
            f"DROP USER IF EXISTS {login}",
            *(f"DROP ROLE IF EXISTS {quoted(role)}" for role in roles),
        )
