"""Warehouse connectors, chosen by a short spec string (`QUERYBOT_WAREHOUSE`).

Each spec kind maps to an opener; engine modules and the settings (pydantic-settings) are imported
only when their kind is used, so importing this package, as every `connectors.*` module does
(the upload loader's child process among them), stays cheap and needs no optional driver.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from connectors.limits import RunLimits

if TYPE_CHECKING:
    from connectors.base import Connector
    from connectors.settings import ConnectorSettings

#: An opener: the text after "kind:", the data directory, what one query may cost, and the
#: connectors' settings (None: a connector that needs some reads them from the environment).
Opener = Callable[[str, Path, RunLimits, "ConnectorSettings | None"], "Connector"]


def _open_demo(
    arg: str,
    data_dir: Path,
    limits: RunLimits,
    settings: ConnectorSettings | None,
    *,
    today: date | None = None,
) -> Connector:
    """The demo on a pinned `today` stays as built; on the real date it follows the day
    (`CurrentDemo`), however long the process runs."""
    from connectors.demo.build import ensure_demo
    from connectors.demo.current import CurrentDemo
    from connectors.duckdb.connector import DuckDBConnector

    if arg:
        raise ValueError(f"The warehouse 'demo' takes no argument (got 'demo:{arg}').")
    if today is None:
        return CurrentDemo(data_dir, limits=limits)
    return DuckDBConnector(ensure_demo(data_dir, today=today), limits=limits)


def _open_duckdb(
    arg: str, data_dir: Path, limits: RunLimits, settings: ConnectorSettings | None
) -> Connector:
    from connectors.duckdb.connector import DuckDBConnector

    if not arg:
        raise ValueError("The warehouse 'duckdb:PATH' needs the path of a DuckDB file.")
    return DuckDBConnector(Path(arg).expanduser(), limits=limits)


def _open_sql(kind: str) -> Opener:
    """An opener for URL specs (`postgresql://...`): `open_connector` split the spec at `:`."""

    def opener(
        arg: str, data_dir: Path, limits: RunLimits, settings: ConnectorSettings | None
    ) -> Connector:
        from connectors.sql.connector import SqlConnector

        if not arg.startswith("//"):
            forms = "; ".join(form for _, form in _OPENERS.values())
            raise ValueError(f"The warehouse '{kind}:' needs a URL. Supported forms: {forms}.")
        return SqlConnector(f"{kind}:{arg}", limits=limits)

    return opener


def _open_bigquery(
    arg: str, data_dir: Path, limits: RunLimits, settings: ConnectorSettings | None
) -> Connector:
    from connectors.bigquery.connector import from_spec
    from connectors.settings import BigQuerySettings

    return from_spec(arg, settings or BigQuerySettings.from_env(), limits=limits)


def _open_looker(
    arg: str, data_dir: Path, limits: RunLimits, settings: ConnectorSettings | None
) -> Connector:
    from connectors.settings import LookerSettings

    try:
        from connectors.looker.connector import from_spec
    except ImportError as exc:
        raise ValueError(
            "The Looker warehouse needs the optional Java bridge: install it with "
            "`uv sync --extra looker` (jaydebeapi and JPype1), and a Java runtime."
        ) from exc
    return from_spec(arg, settings or LookerSettings.from_env(), limits=limits)


def _open_snowflake(
    arg: str, data_dir: Path, limits: RunLimits, settings: ConnectorSettings | None
) -> Connector:
    from connectors.settings import SnowflakeSettings

    try:
        from connectors.snowflake.spec import from_spec
    except ImportError as exc:
        raise ValueError(
            "The Snowflake warehouse needs its driver: install it with "
            "`uv sync --extra snowflake` (snowflake-connector-python)."
        ) from exc
    return from_spec(arg, settings or SnowflakeSettings.from_env(), limits=limits)


#: Spec kind -> (opener taking the text after "kind:" and the data directory, form for people).
_OPENERS: dict[str, tuple[Opener, str]] = {
    "demo": (
        _open_demo,
        "demo  (the built-in demo shop, its history ending yesterday; built in the data "
        "directory on first use, and again when the day moves on)",
    ),
    "duckdb": (_open_duckdb, "duckdb:PATH  (a DuckDB file, opened read-only)"),
    "bigquery": (
        _open_bigquery,
        "bigquery:PROJECT/DATASET[,DATASET...]  (Google BigQuery; the first dataset is the "
        "default; see BIGQUERY_LOCATION, GOOGLE_APPLICATION_CREDENTIALS, "
        "QUERYBOT_BQ_MAX_BYTES_BILLED, QUERYBOT_BQ_PRICE_PER_TIB, BIGQUERY_API_ENDPOINT)",
    ),
    "snowflake": (
        _open_snowflake,
        "snowflake://ACCOUNT/DATABASE[/SCHEMA,...]?warehouse=WH[&role=ROLE]  (Snowflake; the "
        "first schema is the default, PUBLIC when none is listed; needs `uv sync --extra "
        "snowflake`, SNOWFLAKE_USER and SNOWFLAKE_PRIVATE_KEY_FILE[_PASSPHRASE] or "
        "SNOWFLAKE_PASSWORD; see QUERYBOT_SF_MAX_BYTES_SCANNED)",
    ),
    "looker": (
        _open_looker,
        "looker://HOST[:PORT][/MODEL[,MODEL...]]  (Looker's Open SQL Interface over JDBC; needs "
        "`uv sync --extra looker`, LOOKER_CLIENT_ID, LOOKER_CLIENT_SECRET, LOOKER_JDBC_JAR)",
    ),
    "postgresql": (
        _open_sql("postgresql"),
        "postgresql://USER[:PASSWORD]@HOST[:PORT]/DB  (PostgreSQL, as a login without superuser)",
    ),
    "postgres": (_open_sql("postgres"), "postgres://...  (as postgresql://, Heroku-style)"),
    "mysql": (
        _open_sql("mysql"),
        "mysql://USER[:PASSWORD]@HOST[:PORT]/DB  (MySQL or MariaDB, as a user without FILE/SUPER)",
    ),
    "mariadb": (_open_sql("mariadb"), "mariadb://USER[:PASSWORD]@HOST[:PORT]/DB  (as mysql://)"),
    "sqlite": (_open_sql("sqlite"), "sqlite:///PATH  (a SQLite file, opened read-only)"),
}


def open_connector(
    spec: str,
    *,
    data_dir: Path,
    limits: RunLimits | None = None,
    settings: ConnectorSettings | None = None,
    today: date | None = None,
) -> Connector:
    """The connector a spec names: `demo` or `duckdb:PATH`; `limits` bound what one query may
    cost (the defaults when None); `settings` are what BigQuery and Looker read besides their
    spec (from the environment when None; SettingsError names a bad one); `today` is the
    reference day the demo's history ends the day before (None: the real date).

    Raises ValueError for an unknown or malformed spec, and the connector's own errors (such as
    WarehouseUnavailable) when the warehouse cannot be opened.
    """
    kind, _, arg = spec.strip().partition(":")
    entry = _OPENERS.get(kind.lower())
    if entry is None:
        forms = "; ".join(form for _, form in _OPENERS.values())
        raise ValueError(f"Unknown warehouse {spec!r}. Supported forms: {forms}.")
    opener, _ = entry
    if opener is _open_demo:
        opener = partial(_open_demo, today=today)
    return opener(arg.strip(), data_dir, limits or RunLimits(), settings)


__all__ = ["open_connector"]
