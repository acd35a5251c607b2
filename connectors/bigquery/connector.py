"""Google BigQuery through `google-cloud-bigquery`, run the way a data team would allow it.

Every statement is dry-run before it is offered for approval (bytes, cost, partition advice,
and a refusal over `maximum_bytes_billed`); every job carries `maximum_bytes_billed`, a job
timeout and labels; a run's job id comes from the approval, so a repeated approval finds the
first job instead of starting a second, and `cancel` can stop it by that key. Only the
allow-listed datasets may be read. A run naming an identity (`RunContext.identity`, a service
account's email) runs its job with a token impersonating that account, so the account's own IAM
grants decide what it reads (`Impersonation`).
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import re
import time
from collections.abc import Mapping, Sequence
from functools import partial
from typing import Any

import requests
from google.api_core import exceptions as api
from google.api_core.retry import Retry
from google.auth import exceptions as auth
from google.cloud import bigquery
from google.cloud.bigquery import Client, QueryJobConfig

from connectors.base import (
    ConnectorError,
    CostEstimate,
    PermissionDenied,
    QueryCancelled,
    QueryFailed,
    QueryResult,
    RunContext,
    TableInfo,
    TableProfile,
    find_table,
)
from connectors.bigquery import jobs
from connectors.bigquery.client import Impersonation, endpoint_client
from connectors.bigquery.client import client as _client
from connectors.bigquery.errors import translate
from connectors.bigquery.metadata import (
    DatasetMetadata,
    MetadataCache,
    assemble,
    metadata_sql,
    row_counts_sql,
)
from connectors.bigquery.sql import Layout, Names, check_datasets, parse, reads_every_column
from connectors.bigquery.sql import unfiltered_partitions as unfiltered
from connectors.limits import Meter, RunLimits
from connectors.runs import Runs
from connectors.settings import BQ_MAX_BYTES_BILLED, BQ_PRICE_PER_TIB_USD, BigQuerySettings
from connectors.units import byte_size

_PROJECT = re.compile(r"[a-z][a-z0-9.:-]{1,126}[a-z0-9]")
_DATASET = re.compile(r"[A-Za-z0-9_]{1,1024}")
#: Rows per results page: big enough for few round trips, small enough to stop near the cap.
_PAGE_ROWS = 5_000
_TIB = 2**40
#: Seconds allowed for asking BigQuery to cancel a job a person stopped.
_CANCEL_TIMEOUT_S = 30.0
_LEGACY_TYPES = {"INTEGER": "INT64", "FLOAT": "FLOAT64", "BOOLEAN": "BOOL", "RECORD": "STRUCT"}
#: Transport and auth failures, translated like API errors.
_CLIENT_ERRORS = (
    api.GoogleAPICallError,
    api.RetryError,
    auth.GoogleAuthError,
    requests.exceptions.RequestException,
    concurrent.futures.TimeoutError,
)


class BigQueryConnector:
    """Read-only GoogleSQL over an allow-list of datasets; the first is the default dataset."""

    name = "bigquery"
    dialect = "bigquery"
    acts_as_identities = True

    def __init__(
        self,
        project: str,
        *,
        datasets: list[str],
        location: str | None = None,
        credentials_path: str | None = None,
        maximum_bytes_billed: int = BQ_MAX_BYTES_BILLED,
        price_per_tib_usd: float = BQ_PRICE_PER_TIB_USD,
        job_timeout_s: float = 300,
        metadata_ttl_s: float = 600,
        client: bigquery.Client | None = None,
        limits: RunLimits | None = None,
    ) -> None:
        if not _PROJECT.fullmatch(project):
            raise ValueError(f"{project!r} is not a BigQuery project id.")
        if not datasets:
            raise ValueError("Name at least one dataset the bot may query.")
        if maximum_bytes_billed <= 0 or job_timeout_s <= 0 or price_per_tib_usd < 0:
            raise ValueError("The bytes cap and job timeout must be positive, the price >= 0.")
        self.project = project
        self.datasets = [_dataset_ref(project, d) for d in datasets]
        self.location = location
        self.maximum_bytes_billed = maximum_bytes_billed
        self.price_per_tib_usd = price_per_tib_usd
        self.job_timeout_s = job_timeout_s
        self.limits = limits or RunLimits()
        self._names = Names(project, self.datasets[0])
        self._allowed = frozenset(self.datasets)
        self._client = client or _client(project, location, credentials_path)
        self._impersonation = Impersonation(self._client)
        self._metadata = MetadataCache(self._load_dataset, metadata_ttl_s)
        self._runs = Runs()
        #: Real BigQuery has COLUMN_FIELD_PATHS; the local emulator does not.
        self._field_paths = True

    # -- metadata ----------------------------------------------------------------------------

    def list_tables(self) -> list[TableInfo]:
        """Every table and view of the allow-listed datasets, named `project.dataset.table`."""
        return [t for p, d in self.datasets for t in self._metadata.get(p, d).tables]

    def describe(self, table: str) -> TableInfo:
        """A table by `project.dataset.table`, `dataset.table` or bare name, ignoring case."""
        return find_table(self.list_tables(), table, qualify_hint="Qualify it as dataset.table.")

    def statistics(self, tables: Sequence[TableInfo], *, values: int) -> dict[str, TableProfile]:
        """Row counts only, one metadata query per dataset: BigQuery keeps no column statistics,
        so the catalog scans for values (each job under `maximum_bytes_billed`), and with the
        count known, those scans read the text columns alone."""
        wanted = {t.name for t in tables}
        counts = {}
        for project, dataset in self.datasets:
            for row in self._metadata_rows(row_counts_sql(project, dataset)):
                counts[f"{project}.{dataset}.{row['table_id']}"] = int(row["row_count"])
        return {name: TableProfile(count) for name, count in counts.items() if name in wanted}

    def unreadable(self, identity: str, tables: Sequence[str]) -> list[str]:
        """Those of `tables` the service account `identity` may not read the rows of, as IAM
        says (testIamPermissions); PermissionDenied when the login may not impersonate it."""
        known = {t.name for t in self.list_tables()}
        readable = partial(self._impersonation.readable, identity, timeout_s=self.job_timeout_s)
        try:
            return [name for name in tables if name not in known or not readable(name)]
        except _CLIENT_ERRORS as exc:
            raise self._translate(exc, self.job_timeout_s) from exc

    # -- before approval ---------------------------------------------------------------------

    def estimate(self, sql: str) -> CostEstimate:
        """Dry-run `sql`: bytes, cost, partition warnings, and a refusal over the bytes cap."""
        tree = parse(sql)
        check_datasets(tree, self._allowed, self._names)
        config = self._config(dry_run=True, use_query_cache=False)
        try:
            job = self._submit(sql, config, self.job_timeout_s)
        except _CLIENT_ERRORS as exc:
            raise self._translate(exc, self.job_timeout_s) from exc
        if job.statement_type not in (None, "SELECT"):
            raise PermissionDenied(
                f"BigQuery reads this as a {job.statement_type} statement; only SELECT may run.",
                hint="Send one read-only SELECT.",
            )
        processed = int(job.total_bytes_processed or 0)
        cost = processed / _TIB * self.price_per_tib_usd
        layouts: dict[tuple[str, str, str], Layout] = {}
        for project, dataset in self.datasets:
            layouts.update(self._metadata.get(project, dataset).layouts)
        missing = unfiltered(tree, layouts, self._names)
        warnings = tuple(
            f"{name} is partitioned by {layout.partition_column}, and this query does not "
            f"filter on it, so it reads every partition."
            for name, layout in missing
        )
        refusal = ""
        if processed > self.maximum_bytes_billed:
            refusal = self._refusal(processed, cost, missing, every_column=reads_every_column(tree))
        return CostEstimate(processed, cost, warnings, refusal)

    def _refusal(
        self, processed: int, cost: float, missing: list[tuple[str, Layout]], *, every_column: bool
    ) -> str:
        """Why a dry run over the cap is not offered, and how to make the query cheaper."""
        advice = [f"filter {name} on {layout.partition_column}" for name, layout in missing]
        if every_column:
            advice.append("select only the columns needed (BigQuery bills every column read)")
        advice.append("aggregate, or ask about a shorter period")
        return (
            f"This query would process {byte_size(processed)} (about ${cost:.2f}), more than the "
            f"{byte_size(self.maximum_bytes_billed)} this bot may bill per query, so it was not "
            f"offered for approval. To make it cheaper: {'; '.join(advice)}."
        )

    # -- after approval ----------------------------------------------------------------------

    def run(
        self, sql: str, *, max_rows: int, timeout_s: float, context: RunContext | None = None
    ) -> QueryResult:
        """Run one approved statement as a labelled job, keeping at most `max_rows` rows.

        With `context.job_key`, the job id is derived from it: if that job already exists
        (a retried or doubled approval), its results are read instead of running again.
        """
        if max_rows < 0:
            raise ValueError("max_rows must not be negative")
        check_datasets(parse(sql), self._allowed, self._names)
        context = context or RunContext()
        client = self._impersonation.client(context.identity) if context.identity else None
        timeout = min(timeout_s, self.job_timeout_s)
        config = self._config(job_timeout_ms=int(timeout * 1000), labels=context.labels)
        started = time.perf_counter()
        job: bigquery.QueryJob | None = None
        with self._runs.track(context.job_key) as run:
            try:
                job = self._start(sql, config, context.job_key, timeout, client)
                self._runs.arm(run, partial(self._cancel, job))
                remaining = max(timeout - (time.perf_counter() - started), 0.001)
                rows_iter = job.result(
                    page_size=min(max_rows, _PAGE_ROWS) or None,
                    max_results=max_rows,
                    timeout=remaining,
                    retry=_retry(remaining),
                )
                # A page is at most 10 MB (BigQuery's cap); each row is measured as it is read.
                meter = Meter(self.limits, lambda: [f.name for f in rows_iter.schema])
                rows = meter.keep((tuple(row.values()) for row in rows_iter), max_rows)
            except _CLIENT_ERRORS as exc:
                if run.cancelled:  # the job ended "stopped" (or was never waited for)
                    raise QueryCancelled() from exc
                if job is not None and isinstance(exc, concurrent.futures.TimeoutError):
                    self._cancel(job)
                raise self._translate(exc, timeout) from exc
            finally:
                self._runs.disarm(run)
            if run.cancelled:  # the job finished as the cancel came: it still wins
                raise QueryCancelled()
        billed = job.total_bytes_billed
        return QueryResult(
            columns=[field.name for field in rows_iter.schema],
            rows=rows,
            total_rows=rows_iter.total_rows if rows_iter.total_rows is not None else len(rows),
            elapsed_s=time.perf_counter() - started,
            bytes_processed=billed if billed is not None else job.total_bytes_processed,
            column_types=[_type_name(field) for field in rows_iter.schema],
            job_url=jobs.job_url(job.project, job.location, job.job_id),
        )

    def _start(
        self, sql: str, config: QueryJobConfig, job_key: str, timeout: float, client: Client | None
    ) -> bigquery.QueryJob:
        """Start the job (as `client`'s account, else the login's), or find the earlier one.

        A doubled approval, or the client's own retry of an insert whose response was lost,
        gets a Conflict for the id, and reads that job.
        """
        if not job_key:
            return self._submit(sql, config, timeout, client=client)
        job_id = jobs.job_id(job_key)
        try:
            return self._submit(sql, config, timeout, job_id, client=client)
        except api.Conflict:
            existing = (client or self._client).get_job(
                job_id, location=self.location, retry=_retry(timeout), timeout=timeout
            )
        if not isinstance(existing, bigquery.QueryJob) or existing.query != sql:
            raise ConnectorError(
                f"BigQuery job {job_id} already exists for a different statement, so this "
                "approval was not run.",
                hint="Ask the question again for a fresh approval.",
            )
        return existing

    def _submit(
        self,
        sql: str,
        config: bigquery.QueryJobConfig,
        timeout: float,
        job_id: str | None = None,
        *,
        client: bigquery.Client | None = None,
    ) -> bigquery.QueryJob:
        """Insert a job. Request retries stay within `timeout` (the client's default allows
        ten minutes), and `job_retry=None`: a failed job is reported, never started again."""
        return (client or self._client).query(
            sql,
            job_config=config,
            location=self.location,
            job_id=job_id,
            job_id_prefix=None if job_id else "querybot_",
            retry=_retry(timeout),
            timeout=timeout,
            job_retry=None,
        )

    def cancel(self, job_key: str) -> bool:
        """Ask BigQuery to cancel the job of the run started with `job_key` (from this process);
        the run's wait for results then fails with the job "stopped"."""
        return self._runs.cancel(job_key)

    def _cancel(self, job: bigquery.QueryJob) -> None:
        """Ask BigQuery to stop a job someone stopped or the bot gave up on (job_timeout_ms
        stops it anyway), with the client that started it."""
        with contextlib.suppress(*_CLIENT_ERRORS):
            job.cancel(timeout=_CANCEL_TIMEOUT_S)

    def close(self) -> None:
        self._impersonation.close()
        self._client.close()

    # -- helpers -----------------------------------------------------------------------------

    def _config(
        self, *, labels: Mapping[str, str] | None = None, **options: Any
    ) -> bigquery.QueryJobConfig:
        """Options every job gets: the bytes cap, GoogleSQL, the default dataset, labels."""
        return bigquery.QueryJobConfig(
            maximum_bytes_billed=self.maximum_bytes_billed,
            use_legacy_sql=False,
            default_dataset=".".join(self.datasets[0]),
            labels=jobs.labels(labels or {}),
            **options,
        )

    def _load_dataset(self, project: str, dataset: str) -> DatasetMetadata:
        try:
            sql = metadata_sql(project, dataset, field_paths=self._field_paths)
            rows = self._metadata_rows(sql)
        except QueryFailed as exc:
            # Only the local emulator lacks COLUMN_FIELD_PATHS; BigQuery always has it.
            if not self._field_paths or "COLUMN_FIELD_PATHS" not in exc.engine_message:
                raise
            self._field_paths = False
            rows = self._metadata_rows(metadata_sql(project, dataset, field_paths=False))
        return assemble(project, dataset, rows)

    def _metadata_rows(self, sql: str) -> list[dict[str, Any]]:
        config = self._config(
            job_timeout_ms=int(self.job_timeout_s * 1000), labels={"purpose": "metadata"}
        )
        try:
            job = self._submit(sql, config, self.job_timeout_s)
            rows = job.result(timeout=self.job_timeout_s, retry=_retry(self.job_timeout_s))
            return [dict(row.items()) for row in rows]
        except _CLIENT_ERRORS as exc:
            raise self._translate(exc, self.job_timeout_s) from exc

    def _translate(self, exc: BaseException, timeout_s: float) -> ConnectorError:
        return translate(exc, timeout_s=timeout_s, cap_bytes=self.maximum_bytes_billed)


def from_spec(
    arg: str, settings: BigQuerySettings, limits: RunLimits | None = None
) -> BigQueryConnector:
    """The connector for `bigquery:PROJECT/DATASET[,DATASET...]` with its settings:
    `BIGQUERY_LOCATION`, `GOOGLE_APPLICATION_CREDENTIALS`, `QUERYBOT_BQ_MAX_BYTES_BILLED`,
    `QUERYBOT_BQ_PRICE_PER_TIB`, and `BIGQUERY_API_ENDPOINT` (a local emulator, no credentials).
    """
    project, _, listed = arg.partition("/")
    datasets = [d.strip() for d in listed.split(",") if d.strip()]
    if not project.strip() or not datasets:
        raise ValueError(
            f"The warehouse 'bigquery:{arg}' needs a project and datasets: "
            "bigquery:PROJECT/DATASET[,DATASET...]."
        )
    project = project.strip()
    location = settings.bigquery_location
    endpoint = settings.bigquery_api_endpoint
    return BigQueryConnector(
        project,
        datasets=datasets,
        location=location,
        credentials_path=None if endpoint else settings.google_application_credentials,
        client=endpoint_client(project, endpoint, location) if endpoint else None,
        limits=limits,
        maximum_bytes_billed=settings.bq_max_bytes_billed,
        price_per_tib_usd=settings.bq_price_per_tib,
    )


def _retry(timeout_s: float) -> Retry:
    """The client's retry policy (transient errors, rate limits) within our own deadline,
    not its default ten minutes."""
    return bigquery.DEFAULT_RETRY.with_timeout(timeout_s)


def _dataset_ref(project: str, dataset: str) -> tuple[str, str]:
    """`dataset` or `other-project.dataset` as `(project, dataset)`."""
    owner, _, name = dataset.strip().rpartition(".")
    owner = owner or project
    if not _PROJECT.fullmatch(owner) or not _DATASET.fullmatch(name):
        raise ValueError(f"{dataset!r} is not a BigQuery dataset (DATASET or PROJECT.DATASET).")
    return owner, name


def _type_name(field: bigquery.SchemaField) -> str:
    name = _LEGACY_TYPES.get(field.field_type, field.field_type)
    return f"ARRAY<{name}>" if field.mode == "REPEATED" else name
