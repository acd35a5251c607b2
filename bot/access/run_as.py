"""A configured warehouse's connector as it runs the identities its `run_as` rules name
(`RunAsRules`): the engine acts as them where it can, querybot holds each to a table allowlist
where it cannot. Used when a warehouse is opened and by `querybot doctor`."""

from __future__ import annotations

from bot.access.identity import RunAsRules
from bot.settings import SettingsError
from connectors.allowlist import TableAllowlist
from connectors.base import Connector, acts_as

#: Connectors whose identities are table allowlists querybot enforces (`TableAllowlist`):
#: engines with no identities of their own to act as.
ALLOWLISTED = frozenset({"duckdb", "sqlite"})


def with_identities(connector: Connector, rules: RunAsRules, key: str) -> Connector:
    """`connector` as it runs the identities `rules` name: itself where the engine acts as them
    (PostgreSQL and MariaDB roles, BigQuery service accounts), held to each identity's table
    allowlist where it cannot (`run_as.tables`). SettingsError starting with `key` (where the
    rules are written) when they do not fit the engine, or an allowlist names a table the
    catalog does not have."""
    if acts_as(connector):
        if rules.tables:
            raise SettingsError(
                f"{key}.tables: {connector.name} runs each query as the identity itself, so its "
                "own grants decide what each may read; remove run_as.tables."
            )
        return connector
    if connector.name not in ALLOWLISTED:
        raise SettingsError(
            f"{key}: querybot cannot run queries as another identity on {connector.name} yet; "
            "remove run_as from this warehouse."
        )
    if not rules.tables:
        raise SettingsError(
            f"{key}: {connector.name} has no identities querybot can act as; give each identity "
            'the tables it may read under run_as.tables (identity = ["table", ...]), or remove '
            "run_as from this warehouse."
        )
    allowlist = TableAllowlist(connector, rules.tables)
    for entry, why in allowlist.problems().items():
        raise SettingsError(f"{key}.tables.{entry}: {why}")
    return allowlist
