"""`querybot doctor`'s checks that only Snowflake needs: who the bot logs in as, and what its role
may do and read.

Snowflake has no read-only session: the connector refuses anything but a query before it is
sent, and the role is the second line. So the doctor reads the session's user, role and
warehouse (and the warehouse's size), then the role's grants (`SHOW GRANTS TO ROLE`): anything
but USAGE on the warehouse, databases and schemas and SELECT on tables and views fails (each
extra grant named, a grant option too); it says which tables and views the role may read, warns
of SELECT on objects outside the configured database and schemas (the bot never reads them, but
the role is wider than it needs), and lists the roles granted to it, whose grants it does not
see. Without `?role=` in the URL the session's role is the user's default one, so the grants
are not checked.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from bot.doctor.report import Section
from connectors.base import ConnectorError
from connectors.snowflake.connector import SnowflakeConnector
from connectors.snowflake.sql import Scope
from connectors.units import counted

#: Object kinds USAGE is a read-only need on: the warehouse that runs the queries, the database
#: and the schemas that hold the tables. USAGE on anything else (a stage, an integration, a
#: function or procedure) reaches past the tables; USAGE on a role is a granted role.
USAGE_ON = frozenset({"WAREHOUSE", "DATABASE", "SCHEMA"})
_CONTEXT_SQL = "SELECT CURRENT_USER(), CURRENT_ROLE(), CURRENT_WAREHOUSE()"
#: SHOW GRANTS TO ROLE's columns: created_on, privilege, granted_on, name, granted_to,
#: grantee_name, grant_option, granted_by.
_PRIVILEGE, _GRANTED_ON, _NAME, _GRANT_OPTION = 1, 2, 3, 6
#: How many names a line lists before "and N more".
_SHOWN = 10


def check_snowflake(connector: SnowflakeConnector, section: Section) -> None:
    """Add the session and grant checks to `section` (the connector is open)."""
    _session(connector, section)
    if connector.role is None:
        section.unchecked(
            "the role's grants cannot be checked: the URL names no role, so the session uses "
            "the user's default role, which may hold more than reading (and may change). Add "
            "&role=ROLE to QUERYBOT_WAREHOUSE, naming a role that holds only USAGE on the "
            "warehouse, database and schemas and SELECT on their tables and views"
        )
        return
    try:
        grants = connector.control_rows(f"SHOW GRANTS TO ROLE {connector.role}")
    except ConnectorError as exc:
        section.note(f"could not read the grants of role {connector.role}: {exc.message}")
        return
    check_grants(connector.role, grants, connector.scope, section)


def _session(connector: SnowflakeConnector, section: Section) -> None:
    try:
        rows = connector.control_rows(_CONTEXT_SQL)
    except ConnectorError as exc:
        section.note(f"could not read the session's user, role and warehouse: {exc.message}")
        return
    user, role, warehouse = rows[0]
    size = connector.size()
    shown = f"{warehouse} ({size})" if size else f"{warehouse} (size unknown)"
    section.ok(f"logged in as {user}, role {role}, warehouse {shown}")
    if warehouse is None or str(warehouse).upper() != connector.warehouse:
        section.fail(
            f"the session has no usable warehouse {connector.warehouse}: grant the role USAGE "
            f"on warehouse {connector.warehouse} (and check the name in the URL)"
        )


@dataclass(frozen=True)
class Grant:
    """One row of SHOW GRANTS TO ROLE."""

    privilege: str
    kind: str  # granted_on: TABLE, VIEW, SCHEMA, WAREHOUSE, ROLE, ...
    name: str  # DB.SCHEMA.TABLE as Snowflake writes it (quoted parts keep their quotes)
    grant_option: bool

    @classmethod
    def of(cls, row: Sequence[Any]) -> Grant:
        option = str(row[_GRANT_OPTION]).lower() == "true" if len(row) > _GRANT_OPTION else False
        kind = str(row[_GRANTED_ON]).upper().replace(" ", "_")
        return cls(str(row[_PRIVILEGE]).upper(), kind, str(row[_NAME]), option)

    def __str__(self) -> str:
        return f"{self.privilege} on {self.kind.replace('_', ' ')} {self.name}"


def check_grants(role: str, rows: Sequence[Sequence[Any]], scope: Scope, section: Section) -> None:
    """Fail a role that may do more than read, say what it may read, and warn of what it may
    read outside `scope`."""
    grants = [Grant.of(row) for row in rows]
    roles = sorted({g.name for g in grants if g.kind == "ROLE"})
    excess = sorted(
        {str(g) for g in grants if g.kind != "ROLE" and not _reads(g)}
        | {f"{g} WITH GRANT OPTION" for g in grants if g.grant_option}
    )
    if excess:
        section.fail(
            f"role {role} can do more than read: {_listed(excess, '; ')}. Revoke these: the bot's "
            "role needs only USAGE on the warehouse, database and schemas and SELECT on their "
            "tables and views."
        )
    else:
        section.ok(f"role {role} holds only USAGE and SELECT ({len(grants)} grants)")
    readable = sorted({g.name for g in grants if g.privilege == "SELECT"})
    inside = [name for name in readable if _in_scope(name, scope)]
    outside = [name for name in readable if not _in_scope(name, scope)]
    listed = ", ".join(f"{scope.database}.{s}" for s in scope.schemas)
    if inside:
        section.ok(f"role {role} may read {_count(inside)} in {listed}: {_listed(inside)}")
    else:
        section.note(
            f"role {role} holds SELECT on no table or view in {listed}: grant it SELECT ON ALL "
            "TABLES (and VIEWS) IN SCHEMA, and on FUTURE ones"
        )
    if outside:
        section.note(
            f"warning: role {role} may also read {_count(outside)} outside {listed}: "
            f"{_listed(outside)}. The bot never queries them (the connector refuses them), but "
            "the role is wider than it needs: revoke SELECT on them, or use a role of its own."
        )
    if roles:
        section.note(
            f"role {role} inherits {', '.join(roles)}: check their grants too "
            f"(SHOW GRANTS TO ROLE {roles[0]})"
        )


def _reads(grant: Grant) -> bool:
    """Whether `grant` is one a read-only role needs: USAGE on the warehouse, a database or a
    schema, or SELECT (which only reads) on a table, view or any other object."""
    if grant.privilege == "USAGE":
        return grant.kind in USAGE_ON
    return grant.privilege == "SELECT"


def _in_scope(name: str, scope: Scope) -> bool:
    parts = split_name(name)
    return len(parts) == 3 and parts[0] == scope.database and parts[1] in scope.schemas


def split_name(name: str) -> list[str]:
    """`DB.SCHEMA.TABLE` as Snowflake resolves each part: unquoted upper-cased, quoted exactly
    (a quoted part may hold dots)."""
    parts, part, quoted, i = [], "", False, 0
    while i < len(name):
        char = name[i]
        if char == '"' and quoted and name[i + 1 : i + 2] == '"':
            part, i = part + '"', i + 2
            continue
        if char == '"':
            quoted = not quoted
        elif char == "." and not quoted:
            parts.append(part)
            part = ""
        else:
            part += char if quoted else char.upper()
        i += 1
    return [*parts, part]


def _count(names: Sequence[str]) -> str:
    return counted(len(names), "table or view", "tables or views")


def _listed(items: Sequence[str], separator: str = ", ") -> str:
    shown = separator.join(items[:_SHOWN])
    more = len(items) - _SHOWN
    return shown + (f" and {more} more" if more > 0 else "")
