"""Job ids, labels and links within BigQuery's rules; client errors as connector errors."""

from __future__ import annotations

import concurrent.futures
import re

import pytest
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
from connectors.bigquery.errors import BytesLimitExceeded, QuotaExceeded, translate
from connectors.bigquery.jobs import job_id, job_url, labels

JOB_ID = re.compile(r"[A-Za-z0-9_-]{1,1024}")
LABEL_KEY = re.compile(r"[a-z][a-z0-9_-]{0,62}")
LABEL_VALUE = re.compile(r"[a-z0-9_-]{0,63}")

# -- job ids -------------------------------------------------------------------------------------


def test_job_id_is_derived_from_the_key() -> None:
    assert job_id("3f2a9c") == "querybot_3f2a9c" == job_id("3f2a9c")
    assert job_id("3f2a9c") != job_id("3f2a9d")


@pytest.mark.parametrize("key", ["a:b", "a b", "é", "a/b"])
def test_odd_keys_are_hashed_not_cleaned(key: str) -> None:
    made = job_id(key)
    assert JOB_ID.fullmatch(made)
    assert made == job_id(key)
    # "a:b" and "a_b" would collide if the key were cleaned instead of hashed.
    assert made != job_id(re.sub(r"[^A-Za-z0-9_-]", "_", key))


def test_long_keys_are_hashed_to_a_valid_id() -> None:
    made = job_id("x" * 5000)
    assert made.startswith("querybot_sha256_")
    assert JOB_ID.fullmatch(made)


# -- labels --------------------------------------------------------------------------------------


def test_labels_follow_bigquery_rules() -> None:
    made = labels(
        {
            "requester": "U012ABCDE",
            "approver": "W0XYZ",
            "Slack Team": "T01 Acme Corp!",
            "channel": "C0" + "9" * 80,
            "1thread": "1718000000.000100",
            "": "dropped",
        }
    )
    assert made["app"] == "querybot"
    assert made["requester"] == "u012abcde"
    assert made["approver"] == "w0xyz"
    assert made["slack_team"] == "t01_acme_corp_"
    assert made["channel"] == ("c0" + "9" * 80)[:63]
    assert made["k_1thread"] == "1718000000_000100"
    assert len(made) == 6
    for key, value in made.items():
        assert LABEL_KEY.fullmatch(key), key
        assert LABEL_VALUE.fullmatch(value), value


def test_at_most_64_labels() -> None:
    made = labels({f"k{i}": "v" for i in range(100)})
    assert len(made) == 64
    assert made["app"] == "querybot"


def test_job_url_needs_a_location() -> None:
    assert job_url("proj", "EU", "querybot_1") == (
        "https://console.cloud.google.com/bigquery?project=proj&j=bq:EU:querybot_1"
        "&page=queryresults"
    )
    assert job_url("proj", None, "querybot_1") is None


# -- errors --------------------------------------------------------------------------------------


def api_error(status: int, reason: str, message: str) -> api.GoogleAPICallError:
    return api.from_http_status(status, message, errors=[{"reason": reason, "message": message}])


@pytest.mark.parametrize(
    ("status", "reason", "kind", "repairable"),
    [
        (500, "bytesBilledLimitExceeded", BytesLimitExceeded, True),
        (403, "accessDenied", PermissionDenied, False),
        (403, "billingNotEnabled", PermissionDenied, False),
        (403, "quotaExceeded", QuotaExceeded, False),
        (429, "rateLimitExceeded", QuotaExceeded, False),
        (404, "notFound", QueryFailed, True),
        (400, "invalidQuery", QueryFailed, True),
        (400, "resourcesExceeded", QueryFailed, True),
        (500, "backendError", WarehouseUnavailable, False),
        (400, "timeout", QueryTimeout, False),
    ],
)
def test_reasons_decide_the_error(
    status: int, reason: str, kind: type[ConnectorError], repairable: bool
) -> None:
    error = translate(
        api_error(status, reason, "Something\nwith detail"), timeout_s=30, cap_bytes=1024**3
    )
    assert type(error) is kind
    assert error.retryable_by_repair is repairable
    assert "\n" not in error.message
    if kind is not QueryTimeout:
        assert error.engine_message == f"{reason}: Something\nwith detail"


def test_bytes_cap_message_names_the_limit() -> None:
    error = translate(
        api_error(400, "bytesBilledLimitExceeded", "Query exceeded limit for bytes billed"),
        timeout_s=30,
        cap_bytes=10 * 1024**3,
    )
    assert "10 GiB" in error.message
    assert "partition" in error.hint


def test_permission_hint_names_the_roles() -> None:
    error = translate(api_error(403, "accessDenied", "Access Denied"), timeout_s=1, cap_bytes=1)
    assert "roles/bigquery.dataViewer" in error.hint
    assert "roles/bigquery.jobUser" in error.hint


def test_timed_out_message_is_a_timeout_whatever_the_reason() -> None:
    error = translate(
        api_error(400, "stopped", "Job execution was cancelled: Job timed out after 30 s"),
        timeout_s=30,
        cap_bytes=1,
    )
    assert isinstance(error, QueryTimeout)
    assert "30 s" in error.message


@pytest.mark.parametrize(
    ("exc", "kind"),
    [
        (concurrent.futures.TimeoutError(), QueryTimeout),
        (auth.RefreshError("token expired"), WarehouseUnavailable),
        (requests.exceptions.ConnectionError("refused"), WarehouseUnavailable),
        (api.Forbidden("no reason given"), PermissionDenied),
        (api.NotFound("no reason given"), QueryFailed),
        (api.ServiceUnavailable("down"), WarehouseUnavailable),
        (api.BadRequest("no reason given"), QueryFailed),
        (
            api.RetryError("gave up", requests.exceptions.ConnectionError("refused")),
            WarehouseUnavailable,
        ),
        (api.RetryError("gave up", api_error(400, "invalidQuery", "bad")), QueryFailed),
    ],
)
def test_classes_decide_when_there_is_no_reason(exc: Exception, kind: type) -> None:
    assert type(translate(exc, timeout_s=5, cap_bytes=1)) is kind
