"""`querybot doctor` on a warehouse's `run_as` rules: that each identity the rules name can be
assumed (a PostgreSQL or MariaDB role the bot's login may act as, a BigQuery service account it may
impersonate, an allowlist naming tables that exist), and what each may read of the tables the model
is shown, as whoever enforces it says."""

from __future__ import annotations

from bot.access.identity import RunAsRules
from bot.access.run_as import with_identities
from bot.doctor.report import Section
from bot.settings import SettingsError
from connectors.allowlist import TableAllowlist
from connectors.base import ActsAs, Connector, ConnectorError, TableInfo

#: Table names shown per identity; the rest are counted.
SHOWN = 3

#: Per engine, what else decides what an identity reads, said after the tables it may read.
_ENFORCED = {
    "postgresql": "its row-level security policies apply to every query it runs",
    "mysql": "MariaDB and MySQL have no row-level security: it reads every row of them",
    "bigquery": "its row-level access policies apply, and IAM decides again when each query runs",
}


def check_run_as(
    connector: Connector,
    rules: RunAsRules,
    tables: list[TableInfo],
    section: Section,
    key: str = "run_as",
) -> None:
    """One line per identity: assumable and what it reads, or why not. `key` names the rules
    in messages (`warehouses.NAME.run_as`)."""
    try:
        acting = with_identities(connector, rules, key)
    except (SettingsError, ConnectorError) as exc:
        text = exc.message if isinstance(exc, ConnectorError) else str(exc)
        section.fail(text)
        return
    assert isinstance(acting, ActsAs)
    names = [t.name for t in tables]
    for role in rules.roles():
        try:
            unreadable = set(acting.unreadable(role, names))
        except ConnectorError as exc:
            hint = f" {exc.hint}" if exc.hint else ""
            section.fail(f"run_as {role!r}: {exc.message}{hint}")
            continue
        readable = [n for n in names if n not in unreadable]
        if not readable:
            if isinstance(acting, TableAllowlist):
                fix = "list the tables it may read under run_as.tables"
            elif connector.name == "bigquery":
                fix = "grant it BigQuery Data Viewer on the datasets or tables they may read"
            else:
                fix = "GRANT it USAGE on the schema and SELECT on the tables they may read"
            section.fail(
                f"run_as {role!r}: can be assumed, but reads none of the {len(names)} tables: "
                f"the people mapped to it could ask about nothing. {fix[0].upper()}{fix[1:]}."
            )
            continue
        shown = ", ".join(readable[:SHOWN]) + (", ..." if len(readable) > SHOWN else "")
        enforced = (
            "querybot refuses queries reading any other table (the engine runs them as the "
            "bot's login)"
            if isinstance(acting, TableAllowlist)
            else _ENFORCED.get(connector.name, "")
        )
        section.ok(
            f"run_as {role!r}: can be assumed; reads {len(readable)} of {len(names)} tables "
            f"({shown}){'; ' + enforced if enforced else ''}"
        )
    if rules.unmapped is None:
        section.note('run_as: people no rule names are refused (unmapped = "refuse")')
    else:
        section.note(f"run_as: people no rule names run as {rules.unmapped!r}")
