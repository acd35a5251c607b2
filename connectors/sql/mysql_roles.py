"""What a MySQL/MariaDB login and its roles may do: their grants, the refusal of any that could
write or reach the server, and running as a role (`SET ROLE`) for one statement.

A role's privileges add to the login's own: `SET ROLE` replaces the active role, never the
login's direct grants, so a login meant to act as people's roles holds no table privilege of its
own. Its catalog (what the model is shown) comes from a default role (`SET DEFAULT ROLE`), the
role each connection starts with and goes back to after every run. A statement's transaction
does not end a role (nor does the connection reset `end` sends), so the role is set back
explicitly; a run that fails discards its connection instead. MariaDB and MySQL have no
row-level security: a role reads whole tables (or views an administrator writes to filter
rows).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import pymysql
from pymysql.connections import Connection
from pymysql.cursors import Cursor

from connectors.base import PermissionDenied, TableInfo
from connectors.sql.flavor import first_line

#: Global privileges that reach past the tables: server files, server settings, shutdown.
_DANGEROUS = frozenset(
    {"ALL", "ALL PRIVILEGES", "FILE", "SUPER", "SHUTDOWN", "RELOAD", "SYSTEM_VARIABLES_ADMIN"}
)
#: Privileges that write or change objects, on any level (database, table, column). MariaDB
#: lets one statement lift the read-only transaction (`SET STATEMENT tx_read_only=0 FOR CREATE
#: TABLE ...`: DDL commits implicitly, then runs read-write), so the login itself must not be
#: able to write: only SELECT-like logins are accepted.
_WRITES = frozenset(
    {"ALL", "ALL PRIVILEGES", "INSERT", "UPDATE", "DELETE", "CREATE", "DROP", "ALTER", "INDEX"}
    | {"CREATE VIEW", "CREATE ROUTINE", "ALTER ROUTINE", "EVENT", "TRIGGER", "LOCK TABLES"}
    | {"DELETE HISTORY", "CREATE USER", "CREATE TABLESPACE"}
)
_GRANT = re.compile(r"^GRANT (.+?) ON (.+?) TO ", re.IGNORECASE)
#: The same, with the grantee (`user`@`host`, or a role's `name`), quotes dropped later.
_GRANTEE = re.compile(r"^GRANT (.+?) ON (.+?) TO ((?:`[^`]*`|'[^']*'|[^ @]+)(?:@\S+)?)", re.I)
#: Column lists in grants (`UPDATE (salary)`): dropped before splitting on commas.
_COLUMNS = re.compile(r"\s*\([^)]*\)")

_READ_ONLY_LOGIN = (
    "Connect as a user with only SELECT, e.g. CREATE USER 'querybot'@'%' IDENTIFIED BY '...'; "
    "GRANT SELECT, SHOW VIEW ON mydb.* TO 'querybot'@'%';"
)

#: A table the current role may not read (table, column or database access denied) or that is
#: gone: the probe in `unreadable` fails with one of these.
_NOT_READABLE = frozenset({1142, 1143, 1044, 1146})


def grants(cur: Cursor) -> set[tuple[str, str]]:
    """(privilege, level) pairs granted to the current user and its active role, the level as
    written by SHOW GRANTS without quotes (`*.*`, `shop.*`, `shop.orders`)."""
    cur.execute("SHOW GRANTS")
    found: set[tuple[str, str]] = set()
    for (line,) in cur.fetchall():
        if match := _GRANT.match(line):
            level = match.group(2).replace("`", "").strip()
            privileges = _COLUMNS.sub("", match.group(1)).split(",")
            found |= {(p.strip().upper(), level) for p in privileges}
    return found


def own_reads(cur: Cursor, login: str) -> list[str]:
    """The levels (`shop.*`, `shop.orders`) the login itself, not a role of it, may SELECT on:
    every role it acts as would read them too. `login` as CURRENT_USER() writes it."""
    cur.execute("SHOW GRANTS")  # without USING: a role's privileges are listed as the role's
    found: set[str] = set()
    for (line,) in cur.fetchall():
        match = _GRANTEE.match(line)
        if match and match.group(3).replace("`", "").replace("'", "") == login:
            privileges = {p.strip().upper() for p in _COLUMNS.sub("", match.group(1)).split(",")}
            if privileges & {"SELECT", "ALL", "ALL PRIVILEGES"}:
                found.add(match.group(2).replace("`", "").strip())
    return sorted(found)


def applicable_roles(cur: Cursor, *, all_at_once: bool) -> list[str] | None:
    """`SET ROLE` statements that enable, in turn, each role the user could enable itself; None
    when the server has no roles (MySQL 5.7). MariaDB lists roles granted to those roles too,
    which the user cannot enable alone: enabling the role they were granted to shows their
    privileges (SHOW GRANTS lists them under it)."""
    try:
        cur.execute(
            "SELECT DISTINCT ROLE_NAME FROM information_schema.APPLICABLE_ROLES"
            + ("" if all_at_once else " WHERE GRANTEE = CURRENT_USER()")
        )
    except pymysql.err.MySQLError:
        return None
    roles = [r[0] for r in cur.fetchall()]
    if all_at_once:  # MySQL 8: role names carry hosts; enable them all at once
        return ["SET ROLE ALL"] if roles else []
    return [set_role(role) for role in roles]


def refuse_privileged(user: str, found: set[tuple[str, str]], *, role: str = "") -> None:
    """PermissionDenied when `found` (from `grants`) could write or reach the server; `role`
    names the role that holds them, when it is one people's questions run as."""
    who = f"the role {role!r} (which querybot would run as)" if role else repr(user)
    dangerous = sorted({p for p, on in found if on == "*.*"} & _DANGEROUS)
    writes = sorted({f"{p} ON {on}" for p, on in found if p in _WRITES})
    if dangerous:
        raise PermissionDenied(
            f"Refusing to query MySQL as {who}: it holds {', '.join(dangerous)}, which reach "
            "server files and settings even in a read-only transaction.",
            hint=_READ_ONLY_LOGIN if not role else f"REVOKE those from {role}.",
        )
    if writes:
        raise PermissionDenied(
            f"Refusing to query MySQL as {who}: it may {', '.join(writes[:4])}"
            f"{' and more' if len(writes) > 4 else ''}; one statement can lift MariaDB's "
            "read-only transaction, so it must not be able to write.",
            hint=_READ_ONLY_LOGIN if not role else f"REVOKE those from {role}.",
        )


def set_role(role: str | None) -> str:
    """The statement enabling `role` alone (None: no role), the name quoted as an identifier."""
    return "SET ROLE NONE" if role is None else "SET ROLE `" + role.replace("`", "``") + "`"


def current_role(cur: Cursor) -> str | None:
    """The role the session has enabled (MariaDB's CURRENT_ROLE(); None when none is)."""
    cur.execute("SELECT CURRENT_ROLE()")
    row = cur.fetchone()
    return str(row[0]) if row and row[0] is not None else None


def act_as(con: Connection, identity: str, user: str, reads: Sequence[str]) -> None:
    """Enable `identity` alone, inside the run's transaction: PermissionDenied when the login
    itself may read tables (`reads`, from `own_reads`: the role would read them too), was not
    granted it, or when it could write or reach the server (checked on every run: a role may
    have been granted more since the login was checked)."""
    if reads:
        levels = ", ".join(reads[:3]) + (" and more" if len(reads) > 3 else "")
        raise PermissionDenied(
            f"querybot will not run queries as the role {identity!r}: its login {user} may "
            f"itself SELECT on {levels}, so every role it acts as would read that too.",
            hint=f"REVOKE SELECT ON {reads[0]} FROM {_account(user)}; and grant it to a role set "
            "as the login's default role instead (docs/access.md, MariaDB).",
        )
    with con.cursor() as cur:
        try:
            cur.execute(set_role(identity))
        except pymysql.err.MySQLError as exc:
            raise PermissionDenied(
                f"querybot may not run queries as the MySQL/MariaDB role {identity!r}: "
                f"{driver_message(exc)}",
                hint=f"Create the role and grant it to the bot's login (GRANT `{identity}` TO "
                f"{user}), or change the run_as rules in querybot's config file.",
                engine_message=str(exc),
            ) from exc
        refuse_privileged(user, grants(cur), role=identity)


def unreadable(con: Connection, tables: Sequence[TableInfo]) -> list[str]:
    """The names of `tables` the enabled role may not read as a whole: a `SELECT *` of each
    with `LIMIT 0`, which the server checks privileges for and answers without reading a row
    (so a role granted only some columns of a table counts as unable to read it)."""
    refused: list[str] = []
    with con.cursor() as cur:
        for table in tables:
            try:
                cur.execute(f"SELECT * FROM {table.name} LIMIT 0")  # a catalog name, quoted
            except pymysql.err.MySQLError as exc:
                code = exc.args[0] if exc.args and isinstance(exc.args[0], int) else 0
                if code not in _NOT_READABLE:
                    raise
                refused.append(table.name)
    return refused


def _account(user: str) -> str:
    """CURRENT_USER()'s `name@host` as an account in SQL: `'name'@'host'`."""
    name, _, host = user.rpartition("@")
    return f"'{name}'@'{host}'" if name else f"'{user}'"


def driver_message(exc: BaseException) -> str:
    """PyMySQL's `(code, 'text')` as `text`."""
    if len(exc.args) >= 2 and isinstance(exc.args[1], str):
        return exc.args[1].strip().splitlines()[0] if exc.args[1].strip() else first_line(exc)
    return first_line(exc)
