"""BigQuery failures as connector errors a person (and the repair step) can act on.

BigQuery says what went wrong in the `reason` of each error, not in the exception class: the
client maps unknown reasons (`bytesBilledLimitExceeded`) to a 500, and quota and permission
problems are both 403s. So the reason decides, and the class is only the fallback.
"""

from __future__ import annotations

import concurrent.futures

import requests
from google.api_core import exceptions as api
from google.auth import exceptions as auth

from connectors.base import (
    ConnectorError,
    PermissionDenied,
    QueryFailed,
    QueryTimeout,
    WarehouseUnavailable,
)
from connectors.units import byte_size

IAM_HINT = (
    "The bot's account needs roles/bigquery.dataViewer on the dataset and "
    "roles/bigquery.jobUser on the project."
)


class BytesLimitExceeded(QueryFailed):
    """The job would bill more than `maximum_bytes_billed`; a cheaper query may pass."""


class QuotaExceeded(ConnectorError):
    """A BigQuery quota or rate limit; rewriting the SQL does not help, waiting may."""


_DENIED = {"accessDenied", "billingNotEnabled", "blocked", "policyViolation"}
_QUOTA = {"quotaExceeded", "rateLimitExceeded"}
#: Reasons a smaller or simpler query may avoid.
_TOO_BIG = {"resourcesExceeded", "responseTooLarge", "billingTierLimitExceeded"}
_UNAVAILABLE = {"backendError", "internalError"}


def reason_of(exc: api.GoogleAPICallError) -> tuple[str, str]:
    """The first error's reason and message, without the client's job footer."""
    for error in exc.errors or ():
        if isinstance(error, dict) and error.get("reason"):
            return str(error["reason"]), str(error.get("message") or exc.message).strip()
    return "", str(exc.message).split("\n\n", 1)[0].strip()


def translate(exc: BaseException, *, timeout_s: float, cap_bytes: int) -> ConnectorError:
    """The connector error for a client exception; the engine text names the reason. Failures
    before BigQuery answers (time, credentials, network) are told here, its answers by
    `_api_error`."""
    if isinstance(exc, concurrent.futures.TimeoutError):
        return QueryTimeout(timeout_s)
    if isinstance(exc, api.RetryError) and exc.cause is not None:
        # Retries ran out of time: what failed last is the story.
        return translate(exc.cause, timeout_s=timeout_s, cap_bytes=cap_bytes)
    if isinstance(exc, auth.GoogleAuthError):
        return WarehouseUnavailable(
            f"BigQuery credentials are missing or invalid: {exc}",
            hint="Set GOOGLE_APPLICATION_CREDENTIALS to a service-account key file, or run "
            "`gcloud auth application-default login`.",
            engine_message=str(exc),
        )
    if isinstance(exc, requests.exceptions.RequestException):
        return WarehouseUnavailable(
            f"BigQuery cannot be reached: {exc}",
            hint="Check the network, then ask again.",
            engine_message=str(exc),
        )
    if not isinstance(exc, api.GoogleAPICallError):
        return WarehouseUnavailable(f"BigQuery failed: {exc}", engine_message=str(exc))
    return _api_error(exc, timeout_s=timeout_s, cap_bytes=cap_bytes)


def _api_error(exc: api.GoogleAPICallError, *, timeout_s: float, cap_bytes: int) -> ConnectorError:
    """The connector error for an error BigQuery's API returned: by its reason, else by the
    HTTP status's exception class."""
    reason, message = reason_of(exc)
    engine = f"{reason}: {message}" if reason else message
    message = message.splitlines()[0] if message else type(exc).__name__
    if reason == "bytesBilledLimitExceeded":
        return BytesLimitExceeded(
            "BigQuery stopped the query: it would bill more than the "
            f"{byte_size(cap_bytes)} limit.",
            hint="Filter on the partition column, select fewer columns, or aggregate.",
            engine_message=engine,
        )
    if reason == "timeout" or "timed out" in message.lower():
        timeout = QueryTimeout(timeout_s)
        timeout.engine_message = engine
        return timeout
    if reason in _QUOTA or isinstance(exc, api.TooManyRequests):
        return QuotaExceeded(
            f"BigQuery quota exceeded: {message}",
            hint="Wait a few minutes and ask again; an admin can raise the project's quotas.",
            engine_message=engine,
        )
    if reason in _DENIED or (not reason and isinstance(exc, api.Forbidden)):
        return PermissionDenied(
            f"BigQuery refused access: {message}", hint=IAM_HINT, engine_message=engine
        )
    if reason == "notFound" or (not reason and isinstance(exc, api.NotFound)):
        return QueryFailed(
            f"BigQuery could not find it: {message}",
            hint="Use only the listed tables, qualified as dataset.table; names are "
            "case-sensitive.",
            engine_message=engine,
        )
    if reason in _TOO_BIG:
        return QueryFailed(
            f"The query is too large for BigQuery: {message}",
            hint="Aggregate, filter, or return fewer columns.",
            engine_message=engine,
        )
    if reason in _UNAVAILABLE or isinstance(exc, api.ServerError):
        return WarehouseUnavailable(
            f"BigQuery had an internal error: {message}",
            hint="Ask again in a minute.",
            engine_message=engine,
        )
    return QueryFailed(
        f"BigQuery error: {message}",
        hint="Fix the SQL (GoogleSQL, the BigQuery dialect).",
        engine_message=engine,
    )
