"""What a PostgreSQL login must be for querybot to query as it: not privileged, and bounded in
temporary files (unless told the risk is accepted).

A superuser, or a member of a server-file role, escapes any read-only transaction: the refusal
names what exactly the login is or may become (`privileged`).

A sort, hash or DISTINCT larger than `work_mem` spills to temporary files, and nothing but
`temp_file_limit` bounds them (a DISTINCT over `generate_series(1, 1e9)` wrote past 500 MB). Only
a superuser may set it, so querybot cannot set it per run as it does `work_mem`; the DBA sets it
on the login (`ALTER ROLE ... SET`, applied when a session starts). `SET LOCAL ROLE` to a run_as
role does not change it (a role's settings apply only to sessions it logs in as: checked on
PostgreSQL 15), so the login's value is the one every run has. Fail closed: with it unset (-1)
querybot refuses to query the warehouse (`check_temp`), at open (the bot says so at start) and
in every run (a connection opened later may have lost it), unless `RunLimits.allow_unbounded_temp`
(QUERYBOT_PG_ALLOW_UNBOUNDED_TEMP) says the risk is accepted.
"""

from __future__ import annotations

from connectors.base import PermissionDenied
from connectors.limits import UNBOUNDED_TEMP_SETTING, RunLimits
from connectors.units import counted

#: The session's limit and the login, quoted as ALTER ROLE needs it.
SQL = "SELECT pg_catalog.current_setting('temp_file_limit'), pg_catalog.quote_ident(session_user)"

#: temp_file_limit's value when unset.
UNSET = "-1"


def suggested(limits: RunLimits) -> str:
    """The limit to set, from QUERYBOT_ENGINE_TEMP_MB (the bound DuckDB gets): `'2GB'`."""
    mb = limits.engine_temp_mb
    return f"'{mb // 1024}GB'" if mb % 1024 == 0 else f"'{mb}MB'"


def alter_role(login: str, limits: RunLimits) -> str:
    return f"ALTER ROLE {login} SET temp_file_limit = {suggested(limits)};"


def check_temp(limit: str, login: str, limits: RunLimits) -> None:
    """Raise PermissionDenied when the session's `limit` is unset and the risk not accepted."""
    if limit != UNSET or limits.allow_unbounded_temp:
        return
    raise PermissionDenied(
        f"Refusing to query PostgreSQL as {login}: its temp_file_limit is unset, so one query's "
        "sorts and hashes could fill the server's disk with temporary files.",
        hint=f"As a superuser: {alter_role(login, limits)} (querybot cannot set it: only "
        f"superusers may), then start querybot again. To run without that bound, accepting the "
        f"risk, set {UNBOUNDED_TEMP_SETTING}=true.",
    )


#: What each server-file role lets its members do.
_FILE_ROLES = {
    "pg_read_server_files": "read any file the server can",
    "pg_write_server_files": "write files on the server",
    "pg_execute_server_program": "run programs on the server",
}

#: Roles named in a refusal; the rest are counted.
_ROLES_SHOWN = 4


def privileged(user: str, roles: list[tuple[str, bool, bool, bool, bool]]) -> PermissionDenied:
    """The refusal of `user`, which is a superuser or belongs to the superuser or server-file
    `roles` (rows of `_PRIVILEGED_SQL`), naming what exactly it is or may become."""
    example = "CREATE ROLE querybot LOGIN PASSWORD '...'; GRANT pg_read_all_data TO querybot;"
    if any(is_self and superuser for _, superuser, is_self, _, _ in roles):
        return PermissionDenied(
            f"Refusing to query PostgreSQL as {user!r}: it is a superuser, which can read and "
            "write server files (and run programs on the server) even in a read-only "
            "transaction.",
            hint=f"Connect as a login that is not a superuser, e.g. {example}",
        )
    found = []
    for name, superuser, _, can_set, holds in roles:
        if superuser:
            found.append(
                f"it can SET ROLE {name}, a superuser"
                if can_set
                else f"it is a member of {name}, a superuser"
            )
        elif holds:
            found.append(f"it holds the privileges of {name} ({_FILE_ROLES[name]})")
        else:
            found.append(f"it can SET ROLE {name} ({_FILE_ROLES[name]})")
    more = len(found) - _ROLES_SHOWN
    listed = "; ".join(found[:_ROLES_SHOWN])
    if more > 0:
        listed += f"; and {counted(more, 'more such role')}"
    names = ", ".join(name for name, *_ in roles)
    return PermissionDenied(
        f"Refusing to query PostgreSQL as {user!r}: {listed}. A read-only transaction does not "
        "take those powers away.",
        hint=f"REVOKE {names} FROM {user}; (or from the role it belongs to them through), or "
        f"connect as a login without them, e.g. {example}",
    )
