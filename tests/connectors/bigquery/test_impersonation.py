"""BigQuery runs as the asker's service account (`RunContext.identity`) by impersonation, through
the scripted API (tests/support/bigquery_fake_api.py), since the emulator has no IAM: the token
request names the account and BigQuery's scope and carries the login's own token, the job runs with
the impersonated token, a refused impersonation is a clear PermissionDenied with nothing run, and
BigQuery's IAM refusing the account a table is a clear message too."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from google.oauth2.credentials import Credentials

from bot.access.identity import RunAsRules
from bot.doctor.access import check_run_as
from bot.doctor.report import Section
from connectors.base import PermissionDenied, RunContext, acts_as
from connectors.bigquery.connector import BigQueryConnector
from tests.support.bigquery_fake_api import Answer, FakeBigQuery

ANALYST = "analyst@proj.iam.gserviceaccount.com"
STRANGER = "stranger@proj.iam.gserviceaccount.com"
SQL = "SELECT region FROM sales.orders"
SCOPE = "https://www.googleapis.com/auth/bigquery"


@pytest.fixture
def login(api: FakeBigQuery) -> Iterator[BigQueryConnector]:
    """A connector whose login holds the token `login-token`, and may impersonate ANALYST."""
    api.impersonable.add(ANALYST)
    api.answer(SQL, Answer(schema=[("region", "STRING")], rows=[("north",)], bytes_processed=10))
    made = BigQueryConnector(
        "proj",
        datasets=["sales", "archive"],
        client=api.client(Credentials(token="login-token")),
    )
    yield made
    made.close()


def run(connector: BigQueryConnector, identity: str, key: str = "") -> list[tuple[object, ...]]:
    context = RunContext(job_key=key, identity=identity)
    return connector.run(SQL, max_rows=10, timeout_s=30, context=context).rows


def job_tokens(api: FakeBigQuery) -> list[str]:
    """The token each job of SQL was inserted with, in order."""
    return [
        c.authorization.removeprefix("Bearer ")
        for c in api.calls
        if c.path.endswith("/jobs") and (c.body or {})["configuration"]["query"]["query"] == SQL
    ]


def test_the_job_runs_with_the_impersonated_token(
    api: FakeBigQuery, login: BigQueryConnector
) -> None:
    assert acts_as(login)
    assert run(login, ANALYST, key="approval-1") == [("north",)]
    [request] = api.token_requests()
    assert request.host == "iamcredentials.googleapis.com"
    assert request.path == f"/v1/projects/-/serviceAccounts/{ANALYST}:generateAccessToken"
    assert request.body is not None and request.body["scope"] == [SCOPE]
    # the login asks for the token with its own
    assert request.authorization == "Bearer login-token"
    [token] = job_tokens(api)
    assert api.tokens[token] == ANALYST
    # the token is kept while it is valid; the login's own runs keep the login's token
    assert run(login, ANALYST) == [("north",)]
    assert run(login, "") == [("north",)]
    assert len(api.token_requests()) == 1
    assert job_tokens(api)[1:] == [token, "login-token"]


def test_a_refused_impersonation_is_clear_and_runs_nothing(
    api: FakeBigQuery, login: BigQueryConnector
) -> None:
    with pytest.raises(PermissionDenied) as caught:
        run(login, STRANGER)
    assert f"may not run queries as the service account {STRANGER!r}" in caught.value.message
    assert "iam.serviceAccounts.getAccessToken" in caught.value.message
    assert "roles/iam.serviceAccountTokenCreator" in caught.value.hint
    assert "run_as" in caught.value.hint
    assert job_tokens(api) == []
    with pytest.raises(PermissionDenied):
        login.unreadable(STRANGER, ["proj.sales.orders"])


def test_iam_refusing_the_account_a_table_is_a_clear_message(
    api: FakeBigQuery, login: BigQueryConnector
) -> None:
    api.answer(SQL, Answer(schema=[("region", "STRING")], denied_to=(ANALYST,)))
    with pytest.raises(PermissionDenied, match=f"User {ANALYST} does not have permission"):
        run(login, ANALYST)
    assert run(login, "") == []


def test_unreadable_asks_iam_as_the_account(api: FakeBigQuery, login: BigQueryConnector) -> None:
    api.can_read[ANALYST] = {"sales.orders"}
    names = ["proj.sales.orders", "proj.archive.orders", "proj.sales.nothing"]
    assert login.unreadable(ANALYST, names) == ["proj.archive.orders", "proj.sales.nothing"]
    asked = [c for c in api.calls if c.path.endswith(":testIamPermissions")]
    assert [c.path.split("/datasets/")[1] for c in asked] == [
        "sales/tables/orders:testIamPermissions",
        "archive/tables/orders:testIamPermissions",
    ]
    assert all(api.tokens[c.authorization[7:]] == ANALYST for c in asked)
    assert all(c.body == {"permissions": ["bigquery.tables.getData"]} for c in asked)
    # the answer is remembered for a while: IAM decides again when a job runs anyway
    assert login.unreadable(ANALYST, names[:1]) == []
    assert len([c for c in api.calls if c.path.endswith(":testIamPermissions")]) == 2


def test_doctor_says_which_accounts_can_be_impersonated_and_what_they_read(
    api: FakeBigQuery, login: BigQueryConnector
) -> None:
    api.can_read[ANALYST] = {"sales.orders"}
    rules = RunAsRules(users={"U0ANA0001": ANALYST}, unmapped=STRANGER)
    section = Section("warehouse bq")
    check_run_as(login, rules, login.list_tables(), section, "warehouses.bq.run_as")
    lines = {line.text: line.status for line in section.lines}
    analyst = f"run_as {ANALYST!r}: can be assumed; reads 1 of 4 tables (proj.sales.orders); "
    assert any(t.startswith(analyst) and s == "ok" for t, s in lines.items())
    [stranger] = [t for t in lines if t.startswith(f"run_as {STRANGER!r}")]
    assert lines[stranger] == "fail" and "serviceAccountTokenCreator" in stranger
