"""Looker's Open SQL Interface over JDBC: LookML models as schemas, Explores as tables.

The user supplies Looker's Avatica JDBC driver jar (`avatica-<release>-looker.jar`, from
github.com/looker-open-source/calcite-avatica/releases), the instance's host, and an API key
(client id as the JDBC user, client secret as the password, as Looker documents). Tables are
named `model.explore` and columns `view.field`; `connectors.looker.metadata` turns the driver's
metadata into them, hidden fields left out. Each Explore's description carries a few sample
rows of its first visible dimensions (one small query per Explore when the metadata is read;
`sample_rows=0` turns it off). Looker's SQL rules are the gate's business (`agent.gate.looker`);
this connector runs what was approved, read-only, through `connectors.looker.jdbc`.

Nothing here has run against a real Looker instance: the JDBC path is tested against HSQLDB and
the metadata mapping against recorded rows shaped as Looker's documentation describes them.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence

from connectors.base import (
    ConnectorError,
    CostEstimate,
    QueryResult,
    RunContext,
    TableInfo,
    find_table,
)
from connectors.limits import RunLimits
from connectors.looker.jdbc import JdbcRunner
from connectors.looker.metadata import assemble, is_measure
from connectors.settings import LOOKER_SAMPLE_ROWS, LookerSettings

log = logging.getLogger(__name__)

DRIVER = "org.apache.calcite.avatica.remote.looker.LookerDriver"
SPEC_FORM = "looker://HOST[:PORT][/MODEL[,MODEL...]]"
#: Seconds allowed for each Explore's sample query.
_SAMPLE_TIMEOUT_S = 30.0
_SAMPLE_VALUE_CHARS = 40


class LookerConnector:
    """A Looker instance's Explores, read through its Open SQL Interface."""

    name = "looker"
    #: The gate's sqlglot dialect for Looker's SQL (registered by `agent.gate.looker`).
    dialect = "looker"

    def __init__(
        self,
        runner: JdbcRunner,
        *,
        models: Sequence[str] = (),
        sample_rows: int = LOOKER_SAMPLE_ROWS,
        sample_fields: int = 3,
        metadata_ttl_s: float = 3600.0,
    ) -> None:
        if sample_rows < 0 or sample_fields < 1:
            raise ValueError("sample_rows must be >= 0 and sample_fields >= 1")
        self._runner = runner
        self.models = tuple(models)
        self.sample_rows = sample_rows
        self.sample_fields = sample_fields
        self._ttl_s = metadata_ttl_s
        self._lock = threading.Lock()
        self._tables: list[TableInfo] | None = None
        self._loaded_at = 0.0

    def list_tables(self) -> list[TableInfo]:
        """Every Explore of the allowed models with its visible fields, kept for the TTL."""
        with self._lock:
            stale = time.monotonic() - self._loaded_at >= self._ttl_s
            if self._tables is None or stale:
                self._tables = [self._with_samples(t) for t in self._read_tables()]
                self._loaded_at = time.monotonic()
            return list(self._tables)

    def describe(self, table: str) -> TableInfo:
        """An Explore by `model.explore` or bare name, ignoring case and backticks."""
        return find_table(
            self.list_tables(), table, qualify_hint="Qualify it as `model`.`explore`."
        )

    def estimate(self, sql: str) -> CostEstimate | None:
        """The Open SQL Interface offers no dry run."""
        return None

    def run(
        self, sql: str, *, max_rows: int, timeout_s: float, context: RunContext | None = None
    ) -> QueryResult:
        """Run one approved statement: keep `max_rows` rows, count the rest, stop at timeout."""
        return self._runner.run(sql, max_rows=max_rows, timeout_s=timeout_s, context=context)

    def cancel(self, job_key: str) -> bool:
        """Cancel the JDBC statement of the run started with `job_key`."""
        return self._runner.cancel(job_key)

    def close(self) -> None:
        self._runner.close()

    def _read_tables(self) -> list[TableInfo]:
        """One `getTables` and one `getColumns` call per model (all models when none is set);
        names are matched exactly afterwards, since `_` is a wildcard in JDBC patterns."""
        table_rows, column_rows = [], []
        for model in self.models or [None]:
            table_rows += self._runner.metadata("getTables", None, model, "%", None)
            column_rows += self._runner.metadata("getColumns", None, model, "%", "%")
        return assemble(table_rows, column_rows, self.models)

    def _with_samples(self, table: TableInfo) -> TableInfo:
        """The table with a few rows of its first visible dimensions in its description."""
        fields = [c.name for c in table.columns if not is_measure(c)][: self.sample_fields]
        if not self.sample_rows or not fields:
            return table
        model, _, explore = table.name.partition(".")
        names = ", ".join(f"`{f}`" for f in fields)
        sql = f"SELECT {names} FROM `{model}`.`{explore}` LIMIT {self.sample_rows}"
        try:
            result = self.run(sql, max_rows=self.sample_rows, timeout_s=_SAMPLE_TIMEOUT_S)
        except ConnectorError as exc:  # an Explore with required filters, for one
            log.warning("no sample rows for %s: %s", table.name, exc.message)
            return table
        if not result.rows:
            return table
        rows = "; ".join("(" + ", ".join(_value(v) for v in row) + ")" for row in result.rows)
        note = f"Sample rows of {names}: {rows}"
        description = f"{table.description}. {note}" if table.description else note
        return TableInfo(table.name, table.columns, description, table.row_count)


def _value(value: object) -> str:
    if value is None:
        return "NULL"
    text = str(value)
    if len(text) > _SAMPLE_VALUE_CHARS:
        text = text[: _SAMPLE_VALUE_CHARS - 3] + "..."
    return repr(text) if isinstance(value, str) else text


def from_spec(
    arg: str, settings: LookerSettings, *, limits: RunLimits | None = None
) -> LookerConnector:
    """The connector for `looker://HOST[:PORT][/MODEL[,MODEL...]]` with its settings.

    Needs `LOOKER_CLIENT_ID` and `LOOKER_CLIENT_SECRET` (a Looker API key of a user allowed to
    explore the models) and `LOOKER_JDBC_JAR` (the driver jar). `LOOKER_SAMPLE_ROWS` sets the
    sample rows per Explore (0: none). `LOOKER_JDBC_URL` and `LOOKER_JDBC_DRIVER` replace the
    driver's URL and class, to point the connector at another JDBC database standing in for
    Looker (the tests do).
    """
    if not arg.startswith("//") or not arg[2:].split("/", 1)[0]:
        raise ValueError(f"The warehouse 'looker:{arg}' needs a host: {SPEC_FORM}.")
    host, _, listed = arg[2:].partition("/")
    models = [m.strip() for m in listed.split(",") if m.strip()]
    required = {
        "LOOKER_CLIENT_ID": settings.looker_client_id,
        "LOOKER_CLIENT_SECRET": settings.looker_client_secret,
        "LOOKER_JDBC_JAR": settings.looker_jdbc_jar,
    }
    missing = [name for name, value in required.items() if not value]
    if missing:
        raise ValueError(
            f"The Looker warehouse needs {', '.join(missing)}: LOOKER_CLIENT_ID and "
            "LOOKER_CLIENT_SECRET are a Looker API key (Admin > Users > Edit Keys), "
            "LOOKER_JDBC_JAR the path of Looker's avatica-<release>-looker.jar."
        )
    runner = JdbcRunner(
        name="Looker",
        driver=settings.looker_jdbc_driver or DRIVER,
        url=settings.looker_jdbc_url or f"jdbc:looker:url=https://{host}",
        jars=[settings.looker_jdbc_jar],
        properties={"user": settings.looker_client_id, "password": settings.looker_client_secret},
        # Looker's interface accepts SELECT only; whether its driver takes the read-only flag
        # is not documented, so a refusal is logged rather than fatal.
        read_only="try",
        unavailable_hint=f"Check that https://{host} is reachable from the bot and that the "
        "Open SQL Interface is enabled on the instance.",
        login_hint="Check LOOKER_CLIENT_ID and LOOKER_CLIENT_SECRET (a Looker API key of a user "
        "with the explore permission on the models).",
        limits=limits,
    )
    return LookerConnector(runner, models=models, sample_rows=settings.looker_sample_rows)
