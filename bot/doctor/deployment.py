"""`querybot doctor`: check a deployment before (or while) running it, in plain words.

For each configured warehouse: it opens (host reachable, credentials accepted, login not too
powerful), its tables are visible, a harmless write sent straight to the connector (bypassing
the gate) is refused by the connector or the engine, and a one-row sample query passes the gate
and runs. Then the state store (PostgreSQL reachable, or the data directory writable), the model
setting (it builds, its key is set: the doctor calls no model provider, and says so) and the
Slack tokens: set (a placeholder such as .env.example's `xoxb-...` is not), of the right kind,
and accepted by Slack when Slack can be reached; when it cannot, the tokens are marked as not
checked (`?`), which is not "fine". `--no-slack` leaves Slack out, for a deployment used only
from the terminal (`querybot ask`, `querybot eval`), which needs no Slack app.
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, cast

import psycopg
from sqlglot import exp

from agent.gate import GateSchema, Verdict, check_sql
from agent.model.providers import ModelConfigError, load_model
from bot.config import DeploymentConfig, Warehouse, WarehouseError, deployment_config
from bot.doctor.access import check_run_as
from bot.doctor.dbt import check_dbt_project
from bot.doctor.feedback import check_feedback
from bot.doctor.report import Section, count, render
from bot.doctor.slack import check_slack
from bot.settings import Settings, SettingsError
from bot.wiring import open_configured
from connectors.base import Connector, ConnectorError, PermissionDenied, TableInfo
from connectors.limits import UNBOUNDED_TEMP_SETTING, RunLimits
from connectors.sql import postgres_login as login_checks
from connectors.sql.connector import SqlConnector
from connectors.units import byte_size, counted

if TYPE_CHECKING:
    from connectors.snowflake.connector import SnowflakeConnector

#: The table the read-only check tries to create (and drops again if the engine let it).
PROBE_TABLE = "querybot_doctor_probe"
PROBE_WRITE = f"CREATE TABLE {PROBE_TABLE} (x INT)"
PROBE_DROP = f"DROP TABLE {PROBE_TABLE}"
#: Seconds each warehouse check may take.
CHECK_TIMEOUT_S = 30.0

_PASSWORD = re.compile(r"(://[^:/@\s]+:)[^@\s]*@")

Opener = Callable[[Warehouse], Connector]


def hide_password(spec: str) -> str:
    """`postgresql://u:secret@h/db` -> `postgresql://u:***@h/db` (a `${VAR}` stays visible)."""
    return _PASSWORD.sub(_mask, spec)


def _mask(match: re.Match[str]) -> str:
    secret = match.group(0)[len(match.group(1)) : -1]
    return match.group(1) + (secret if secret.startswith("${") else "***") + "@"


def _error(exc: ConnectorError) -> str:
    message = exc.message.strip()
    if exc.hint and not message.endswith((".", "!", "?", ":")):
        message += "."
    return " ".join(part for part in (message, exc.hint.strip()) if part)


def check_warehouse(
    warehouse: Warehouse, open_warehouse: Opener, *, timeout_s: float = CHECK_TIMEOUT_S
) -> Section:
    """Open `warehouse`, list its tables, probe a write and run a sample query."""
    section = Section(f"warehouse {warehouse.name} ({hide_password(warehouse.shown_spec)})")
    try:
        connector = open_warehouse(warehouse)
    except (ConnectorError, SettingsError) as exc:
        if isinstance(exc, WarehouseError) and isinstance(exc.__cause__, ConnectorError):
            exc = exc.__cause__  # the section already names the warehouse
        text = _error(exc) if isinstance(exc, ConnectorError) else str(exc)
        section.fail(f"does not open: {text}")
        section.note("not checked: tables, read-only, sample query (it must open first)")
        return section
    try:
        section.ok(f"opens ({connector.name}, {connector.dialect} SQL)")
        tables = _tables(connector, section)
        if warehouse.dbt_project is not None and tables:
            check_dbt_project(warehouse.dbt_project, connector, tables, section)
        if warehouse.run_as is not None:
            check_run_as(
                connector, warehouse.run_as, tables, section, f"warehouses.{warehouse.name}.run_as"
            )
        _read_only(connector, section, timeout_s)
        if connector.name == "postgresql":
            _temp_file_limit(connector, section, timeout_s)
        if connector.name == "snowflake":
            from bot.doctor.snowflake import check_snowflake  # its driver is an optional extra

            check_snowflake(cast("SnowflakeConnector", connector), section)
        if tables:
            _sample(connector, tables, section, timeout_s)
    finally:
        connector.close()
    return section


def _tables(connector: Connector, section: Section) -> list[TableInfo]:
    try:
        tables = connector.list_tables()
    except ConnectorError as exc:
        section.fail(f"cannot list its tables: {_error(exc)}")
        return []
    if not tables:
        section.fail(
            "no table is visible to this login, so there is nothing to ask about: grant it "
            "SELECT on the tables people should query (or check the database/dataset name)."
        )
    else:
        names = ", ".join(t.name for t in tables[:3]) + (", ..." if len(tables) > 3 else "")
        section.ok(f"{counted(len(tables), 'table')} visible ({names})")
    return tables


def _read_only(connector: Connector, section: Section, timeout_s: float) -> None:
    """Send a write straight to the connector: the connector or the engine (not the gate) must
    refuse it. Only a refusal (PermissionDenied: a read-only session, a missing privilege, a
    connector that runs queries only) shows the login cannot write; any other failure (the probe
    table already exists, the engine does not read the statement, a timeout) shows nothing."""
    try:
        connector.run(PROBE_WRITE, max_rows=1, timeout_s=timeout_s)
    except PermissionDenied as exc:
        engine = exc.engine_message.strip().splitlines()[0] if exc.engine_message else exc.message
        section.ok(f"read-only: a test write ({PROBE_WRITE}) was refused ({engine})")
        return
    except ConnectorError as exc:
        what = _error(exc)
        what += "" if what.endswith((".", "!", "?")) else "."
        section.note(
            f"could not check read-only: the test write ({PROBE_WRITE}) failed without being "
            f"refused: {what} Check by hand that querybot's login cannot write."
        )
        return
    section.fail(
        f"NOT READ-ONLY: the test write {PROBE_WRITE!r} SUCCEEDED. The bot's login can change "
        "this warehouse: give querybot a login with read access only (SELECT grants, no "
        "CREATE/INSERT/UPDATE/DELETE) before running it."
    )
    try:
        connector.run(PROBE_DROP, max_rows=1, timeout_s=timeout_s)
        section.note(f"the probe table {PROBE_TABLE} was dropped again")
    except ConnectorError as exc:
        section.fail(
            f"could not drop the probe table {PROBE_TABLE}: {_error(exc)}; drop it by hand"
        )


def _temp_file_limit(connector: Connector, section: Section, timeout_s: float) -> None:
    """PostgreSQL's bound on one session's temporary files, which only a superuser may set. The
    connector refuses to open without it (the doctor then says "does not open" with the ALTER
    ROLE to run), so an unlimited login seen here is one whose risk a setting accepted. The
    query, the unset value and the ALTER ROLE are the connector's own (sql_postgres_login)."""
    limits = connector.limits if isinstance(connector, SqlConnector) else RunLimits()
    try:
        limit, login = connector.run(login_checks.SQL, max_rows=1, timeout_s=timeout_s).rows[0]
    except ConnectorError as exc:
        section.note(f"could not read temp_file_limit: {_error(exc)}")
        return
    if str(limit) != login_checks.UNSET:
        section.ok(f"temporary files are bounded (temp_file_limit = {limit})")
        return
    section.note(
        f"temp_file_limit is unlimited for {login}, and queries run only because "
        f"{UNBOUNDED_TEMP_SETTING}=true accepts that one query's sorts and hashes may fill the "
        f"server's disk (without it querybot refuses to query this warehouse). As a superuser: "
        f"{login_checks.alter_role(login, limits)} (querybot cannot set it: PostgreSQL lets "
        "only superusers change it)."
    )


def sample_sql(table: TableInfo, column: str | None, dialect: str) -> str:
    """`column` (None: `*`) of `table`, every identifier quoted, written in `dialect` (the gate
    adds the row cap). Quoting keeps names exactly as the catalog spells them."""
    target = exp.to_table(table.name, dialect=dialect)
    for identifier in target.find_all(exp.Identifier):
        identifier.set("quoted", True)
    picked = exp.Star() if column is None else exp.column(column, quoted=True)
    return exp.select(picked).from_(target).sql(dialect=dialect)


def sample_query(tables: list[TableInfo], dialect: str) -> Verdict | str:
    """The gate's verdict on a one-row query of the first table, on the first of its columns
    the gate accepts (Looker takes a measure only inside AGGREGATE(), so the first column is not
    always readable); else why none was accepted."""
    table = tables[0]
    schema = GateSchema.from_tables(tables, dialect)
    reasons = ""
    columns: list[str | None] = [c.name for c in table.columns[:5]] or [None]
    for column in columns:
        try:
            sql = sample_sql(table, column, dialect)
        except Exception as exc:  # sqlglot cannot write the name: say so, it is not fatal
            reasons = f"cannot write a query on {table.name}: {exc}"
            continue
        verdict = check_sql(sql, schema, row_limit=1)
        if verdict.ok:
            return verdict
        reasons = f"the gate refused {sql!r}: " + "; ".join(r.message for r in verdict.reasons)
    return reasons


def _sample(
    connector: Connector, tables: list[TableInfo], section: Section, timeout_s: float
) -> None:
    verdict = sample_query(tables, connector.dialect)
    if isinstance(verdict, str):
        section.fail(f"sample query: {verdict}")
        return
    shown = " ".join(verdict.sql.split())  # one line in the report (the gate writes it pretty)
    try:
        # A warehouse that bills by bytes scanned (BigQuery) says first what the query costs.
        estimate = connector.estimate(verdict.sql)
        if estimate is not None and estimate.refusal:
            section.fail(f"sample query {shown!r} not run: {estimate.refusal}")
            return
        result = connector.run(verdict.sql, max_rows=1, timeout_s=timeout_s)
    except ConnectorError as exc:
        section.fail(f"sample query {shown!r} failed: {_error(exc)}")
        return
    rows = len(result.rows)
    scanned = (
        f", {byte_size(estimate.bytes_processed)} estimated"
        if estimate is not None and estimate.bytes_processed is not None
        else ""
    )
    section.ok(
        f"sample query passed the gate and ran: {shown} -> {counted(rows, 'row')} "
        f"in {result.elapsed_s:.2f} s{scanned}"
    )


def check_model(settings: Settings) -> Section:
    section = Section(f"model ({settings.model})")
    missing = [n for n in settings.model_secrets() if not settings.secret(n)]
    if missing:
        unset = "; ".join(settings.unset(n) for n in missing)
        section.fail(f"{unset}: set it in .env or the environment.")
        return section
    try:
        load_model(settings.model, timeout_s=settings.model_timeout_s)
    except ModelConfigError as exc:
        section.fail(str(exc))
        return section
    keys = f" with {', '.join(settings.model_secrets())} set" if settings.model_secrets() else ""
    section.ok(f"QUERYBOT_MODEL builds{keys}")
    section.note("not checked: whether the provider accepts the key (the doctor calls no model)")
    return section


def check_state(settings: Settings) -> Section:
    """Where threads, proposals and the audit log are kept: PostgreSQL reachable, or the data
    directory writable."""
    if settings.state_url:
        section = Section(f"state (QUERYBOT_STATE_URL={hide_password(settings.state_url)})")
        try:
            with psycopg.connect(settings.state_url, connect_timeout=5) as conn:
                conn.execute("SELECT 1")
        except psycopg.Error as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            section.fail(
                f"PostgreSQL cannot be reached: {first}. Check the host, the login and that the "
                "database exists (replicas share it)."
            )
        else:
            section.ok("PostgreSQL is reachable")
        return section
    section = Section(f"state (SQLite files in {settings.data_dir})")
    try:
        settings.data_dir.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=settings.data_dir):
            pass
    except OSError as exc:
        section.fail(f"the data directory is not writable: {exc}. Fix QUERYBOT_DATA_DIR.")
    else:
        section.ok("the data directory is writable")
    return section


def check_config(config: DeploymentConfig) -> Section:
    """What the deployment is: its warehouses and where each channel's questions go."""
    source = f"config file {config.path}" if config.path else "QUERYBOT_WAREHOUSE, no config file"
    section = Section(f"deployment: {source}")
    count = len(config.warehouses)
    section.ok(f"{counted(count, 'warehouse')}: {', '.join(config.warehouses)}")
    for channel, name in sorted(config.channels.items()):
        section.note(f"channel {channel} -> {name}")
    if config.default:
        section.note(f"other channels and direct messages -> {config.default}")
    else:
        section.note("other channels and direct messages: politely refused (no default)")
    return section


def diagnose(
    settings: Settings,
    env: Mapping[str, str],
    *,
    only: str | None = None,
    opener: Opener | None = None,
    slack: bool = True,
) -> list[Section]:
    """Every check, in order. `only` limits the warehouses to one; `opener` opens a warehouse
    (default: as the bot does); `slack=False` leaves the Slack tokens unchecked, saying so."""
    try:
        config = deployment_config(settings, env)
        warehouses = [config.pick(only)] if only else list(config.warehouses.values())
    except SettingsError as exc:
        broken = Section("deployment")
        broken.fail(str(exc))
        return [broken, *_after_warehouses(settings, slack=slack)]

    def default_opener(warehouse: Warehouse) -> Connector:
        return open_configured(warehouse, config, settings)

    timeout = min(settings.query_timeout_s, CHECK_TIMEOUT_S)
    sections = [check_config(config)]
    sections += [
        check_warehouse(w, opener or default_opener, timeout_s=timeout) for w in warehouses
    ]
    return [*sections, *_after_warehouses(settings, slack=slack)]


def _after_warehouses(settings: Settings, *, slack: bool) -> list[Section]:
    """The state store and the feedback it holds, the model and Slack (a note that it was left
    out with `--no-slack`)."""
    return [
        check_state(settings),
        check_feedback(settings),
        check_model(settings),
        check_slack(settings) if slack else _skipped(),
    ]


def _skipped() -> Section:
    section = Section("slack")
    section.note(
        "not checked (--no-slack): `querybot ask` and `querybot eval` need no Slack; "
        "`querybot run` does, so check it without --no-slack before running the bot"
    )
    return section


def run(
    settings: Settings, env: Mapping[str, str], *, only: str | None = None, slack: bool = True
) -> int:
    """Print the report; 0 when everything checked is fine, 1 when something failed or could not
    be checked (a deploy script should not go on when Slack could not be asked). `slack=False`
    (`--no-slack`) checks the warehouses, the state and the model only."""
    sections = diagnose(settings, env, only=only, slack=slack)
    print(render(sections))
    return 1 if count(sections, "fail") or count(sections, "unchecked") else 0
