"""The first run of each approval, so a repeated approval reads it instead of running again.

Snowflake has no job ids a client may choose (BigQuery's way): a run's query id is Snowflake's.
So the query id of each approval's run is remembered here, and a run another replica started is
found in QUERY_HISTORY_BY_USER by its QUERY_TAG, which starts with the approval's proposal id
(snowflake_session.query_tag).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from typing import Any

from connectors.base import ConnectorError
from connectors.snowflake.metadata import quoted
from connectors.snowflake.session import tag_prefix

log = logging.getLogger(__name__)

#: Approvals whose query ids are remembered (a repeated approval comes within minutes).
REMEMBERED = 1000
#: Runs are found in QUERY_HISTORY for this long after they started.
HISTORY_HOURS = 24
HISTORY_SQL = (
    "SELECT query_id, query_text FROM TABLE({db}.INFORMATION_SCHEMA.QUERY_HISTORY_BY_USER("
    "END_TIME_RANGE_START => DATEADD('hour', -{hours}, CURRENT_TIMESTAMP()), "
    "RESULT_LIMIT => 10000)) WHERE STARTSWITH(query_tag, %s) "
    "AND execution_status NOT LIKE 'FAILED%%' ORDER BY start_time LIMIT 1"
)

Fetch = Callable[[str, Sequence[Any]], list[tuple[Any, ...]]]


class FirstRuns:
    """Query ids by approval (job key), here and in QUERY_HISTORY; `fetch` runs the
    connector's own statements."""

    def __init__(self, database: str, fetch: Fetch) -> None:
        self._database = database
        self._fetch = fetch
        self._lock = threading.Lock()
        self._queries: dict[str, tuple[str, str]] = {}  # job key -> (sql, query id)
        #: Real Snowflake has QUERY_HISTORY_BY_USER; fakesnow does not.
        self._history = True

    def find(self, job_key: str, sql: str) -> str | None:
        """The query id of a run already started for `job_key`, if there is one; a run of
        another statement under that key is an error (the approval is not run)."""
        if not job_key:
            return None
        with self._lock:
            found = self._queries.get(job_key)
        found = found or self._in_history(job_key)
        if found is None:
            return None
        earlier_sql, query_id = found
        if earlier_sql.strip() != sql.strip():
            raise ConnectorError(
                f"Snowflake query {query_id} already ran for this approval with a different "
                "statement, so this approval was not run.",
                hint="Ask the question again for a fresh approval.",
            )
        return query_id

    def remember(self, job_key: str, sql: str, query_id: str) -> None:
        if not job_key:
            return
        with self._lock:
            if len(self._queries) >= REMEMBERED:
                self._queries.pop(next(iter(self._queries)))
            self._queries[job_key] = (sql, query_id)

    def _in_history(self, job_key: str) -> tuple[str, str] | None:
        """The first query tagged for `job_key` in the last day (another replica's run)."""
        if not self._history:
            return None
        sql = HISTORY_SQL.format(db=quoted(self._database), hours=HISTORY_HOURS)
        try:
            rows = self._fetch(sql, (tag_prefix(job_key),))
        except ConnectorError as exc:
            if "QUERY_HISTORY" not in exc.engine_message.upper():
                raise
            log.warning("QUERY_HISTORY cannot be read, so runs are only found here: %s", exc)
            self._history = False  # a stand-in without it (fakesnow)
            return None
        return (str(rows[0][1]), str(rows[0][0])) if rows else None
