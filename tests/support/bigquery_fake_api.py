"""A scripted BigQuery REST API behind a `requests` transport adapter.

The real `google-cloud-bigquery` client builds every request, retries, polls and parses
responses as it would against Google; only the bytes on the wire come from here. That shows
what the emulator cannot: dry-run byte counts, `jobs.insert` conflicts on a reused job id,
job failures by reason, and paging; and IAM's `generateAccessToken`, the call that
impersonates a service account, with the tokens it hands out recognised on later calls
(testIamPermissions answers what each account may read).
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import parse_qs, urlsplit

import requests
from google.auth.credentials import AnonymousCredentials, Credentials
from google.auth.transport.requests import AuthorizedSession
from google.cloud import bigquery

API = "https://bigquery.googleapis.com/bigquery/v2"
#: BigQuery's message for a job cancelled on request.
CANCELLED = "Job execution was cancelled: User requested cancellation"


@dataclass
class Answer:
    """How the fake answers one SQL text."""

    schema: list[tuple[str, str]] = field(default_factory=list)
    rows: list[tuple[Any, ...]] = field(default_factory=list)
    bytes_processed: int = 0
    statement_type: str = "SELECT"
    #: (reason, message): the job fails this way when it runs (not at a dry run).
    job_error: tuple[str, str] | None = None
    #: (http status, reason, message): jobs.insert itself is refused, dry runs included.
    insert_error: tuple[int, str, str] | None = None
    #: The job never finishes until it is cancelled, which ends it "stopped" as BigQuery does.
    running: bool = False
    #: Service accounts whose jobs of this SQL IAM refuses (accessDenied), dry runs included.
    denied_to: tuple[str, ...] = ()


@dataclass
class Call:
    method: str
    path: str
    params: dict[str, str]
    body: dict[str, Any] | None
    #: The Authorization header sent ("Bearer TOKEN"), "" without one.
    authorization: str = ""
    host: str = ""


class FakeBigQuery(requests.adapters.BaseAdapter):
    """Jobs, query results and INFORMATION_SCHEMA answers for one project."""

    def __init__(self, project: str = "proj", location: str = "EU") -> None:
        super().__init__()
        self.project = project
        self.location = location
        self.answers: dict[str, Answer] = {}
        self.calls: list[Call] = []
        #: Job ids that actually ran (dry runs excluded), in order, and their SQL.
        self.executed: list[str] = []
        self.sql_of: dict[str, str] = {}
        #: Lose the next jobs.insert response (a 503 after the job was created), as a network
        #: failure between BigQuery and the client would.
        self.drop_next_insert_response = False
        #: Rows sent back in results pages, over all jobs.
        self.rows_served = 0
        #: Service accounts the login may impersonate (IAM's Token Creator on each).
        self.impersonable: set[str] = set()
        #: Access token -> the service account it acts as, for every token handed out.
        self.tokens: dict[str, str] = {}
        #: Service account -> the tables (`dataset.table`) whose rows IAM lets it read.
        self.can_read: dict[str, set[str]] = {}
        self._jobs: dict[str, dict[str, Any]] = {}
        self._results: dict[str, Answer] = {}
        self._lock = threading.Lock()

    # -- scripting ---------------------------------------------------------------------------

    def answer(self, sql: str, answer: Answer) -> None:
        self.answers[sql] = answer

    def client(self, credentials: Credentials | None = None) -> bigquery.Client:
        """A client whose every request reaches this fake; `credentials` default to none."""
        credentials = credentials or AnonymousCredentials()  # type: ignore[no-untyped-call]
        session = AuthorizedSession(credentials)
        session.mount("https://", self)
        return bigquery.Client(project=self.project, credentials=credentials, _http=session)

    def runs(self) -> list[str]:
        """Job ids of the statements that ran, metadata queries left out."""
        return [j for j in self.executed if "INFORMATION_SCHEMA" not in self.sql_of[j]]

    def inserts(self) -> list[dict[str, Any]]:
        """The bodies of every jobs.insert call."""
        return [c.body or {} for c in self.calls if c.method == "POST" and c.path.endswith("/jobs")]

    def token_requests(self) -> list[Call]:
        """Every generateAccessToken call, refused ones included."""
        return [c for c in self.calls if c.path.endswith(":generateAccessToken")]

    # -- transport ---------------------------------------------------------------------------

    def send(self, request: requests.PreparedRequest, **_: Any) -> requests.Response:
        url = urlsplit(request.url or "")
        path = url.path.removeprefix("/bigquery/v2")
        params = {k: v[-1] for k, v in parse_qs(url.query).items()}
        raw = request.body.decode() if isinstance(request.body, bytes) else request.body
        body = json.loads(raw) if raw else None
        authorization = str(request.headers.get("Authorization", ""))
        call = Call(request.method or "", path, params, body, authorization, url.netloc)
        with self._lock:
            self.calls.append(call)
            status, payload = self._route(call)
        return _response(request, status, payload)

    def close(self) -> None:
        pass

    def _route(self, call: Call) -> tuple[int, dict[str, Any]]:
        parts = call.path.strip("/").split("/")
        match call.method, parts:
            case "POST", ["v1", "projects", "-", "serviceAccounts", target]:
                return self._impersonate(target.removesuffix(":generateAccessToken"))
            case "POST", ["projects", _, "datasets", dataset, "tables", table]:
                account = self.tokens.get(call.authorization[7:], "")
                return self._test_permissions(account, f"{dataset}.{table}", call.body or {})
            case "POST", ["projects", _, "jobs"]:
                return self._insert(call.body or {}, self.tokens.get(call.authorization[7:], ""))
            case "GET", ["projects", _, "jobs", job_id]:
                return self._get_job(job_id)
            case "POST", ["projects", _, "jobs", job_id, "cancel"]:
                return self._cancel(job_id)
            case "GET", ["projects", _, "queries", job_id]:
                return self._query_results(job_id, call.params)
        return _error(404, "notFound", f"The fake has no route for {call.method} {call.path}")

    def _impersonate(self, account: str) -> tuple[int, dict[str, Any]]:
        if account not in self.impersonable:
            return _error(
                403,
                "forbidden",
                "Permission 'iam.serviceAccounts.getAccessToken' denied on resource (or it may "
                "not exist).",
            )
        token = f"token-{len(self.tokens) + 1}-for-{account}"
        self.tokens[token] = account
        expires = (datetime.now(UTC) + timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
        return 200, {"accessToken": token, "expireTime": expires}

    def _test_permissions(
        self, account: str, table: str, body: dict[str, Any]
    ) -> tuple[int, dict[str, Any]]:
        name, _, method = table.partition(":")
        if method != "testIamPermissions":
            return _error(404, "notFound", f"The fake has no route for tables/{table}")
        held = ["bigquery.tables.getData"] if name in self.can_read.get(account, set()) else []
        return 200, {"permissions": [p for p in body.get("permissions", []) if p in held]}

    def _insert(self, body: dict[str, Any], account: str = "") -> tuple[int, dict[str, Any]]:
        reference = body["jobReference"]
        job_id = reference["jobId"]
        if job_id in self._jobs:
            return _error(409, "duplicate", f"Already Exists: Job {self.project}:{job_id}")
        config = body["configuration"]
        sql = config["query"]["query"]
        answer = self.answers.get(sql)
        if answer is None:
            return _error(400, "invalidQuery", f"The fake has no answer for: {sql}")
        if answer.insert_error is not None:
            return _error(*answer.insert_error)
        if account and account in answer.denied_to:
            return _error(
                403,
                "accessDenied",
                f"Access Denied: User {account} does not have permission to query this table.",
            )
        statistics = {
            "query": {
                "totalBytesProcessed": str(answer.bytes_processed),
                "statementType": answer.statement_type,
            }
        }
        job: dict[str, Any] = {
            "kind": "bigquery#job",
            "id": f"{self.project}:{self.location}.{job_id}",
            "jobReference": {**reference, "location": self.location},
            "configuration": config,
            "status": {"state": "DONE"},
            "statistics": statistics,
        }
        if config.get("dryRun"):
            return 200, job
        self.executed.append(job_id)
        self.sql_of[job_id] = sql
        if answer.job_error is not None:
            reason, message = answer.job_error
            error = {"reason": reason, "message": message}
            job["status"] = {"state": "DONE", "errorResult": error, "errors": [error]}
        else:
            statistics["query"]["totalBytesBilled"] = str(answer.bytes_processed)
        if answer.running:
            job["status"] = {"state": "RUNNING"}
        self._jobs[job_id] = job
        self._results[job_id] = answer
        if self.drop_next_insert_response:
            self.drop_next_insert_response = False
            return _error(503, "backendError", "The response was lost.")
        return 200, job

    def _get_job(self, job_id: str) -> tuple[int, dict[str, Any]]:
        job = self._jobs.get(job_id)
        if job is None:
            return _error(404, "notFound", f"Not found: Job {self.project}:{job_id}")
        return 200, job

    def _cancel(self, job_id: str) -> tuple[int, dict[str, Any]]:
        status, job = self._get_job(job_id)
        answer = self._results.get(job_id)
        if answer is not None and answer.running:
            error = {"reason": "stopped", "message": CANCELLED}
            job["status"] = {"state": "DONE", "errorResult": error, "errors": [error]}
            self._results[job_id] = replace(answer, running=False, job_error=("stopped", CANCELLED))
        return status, {"kind": "bigquery#jobCancelResponse", "job": job}

    def _query_results(self, job_id: str, params: dict[str, str]) -> tuple[int, dict[str, Any]]:
        job, answer = self._jobs.get(job_id), self._results.get(job_id)
        if job is None or answer is None:
            return _error(404, "notFound", f"Not found: Job {self.project}:{job_id}")
        if answer.job_error is not None:
            return _error(400, *answer.job_error)
        if answer.running:
            return 200, {"jobReference": job["jobReference"], "jobComplete": False}
        start = int(params.get("pageToken") or params.get("startIndex") or 0)
        size = int(params.get("maxResults") or len(answer.rows) or 1)
        page = answer.rows[start : start + size]
        self.rows_served += len(page)
        payload: dict[str, Any] = {
            "kind": "bigquery#getQueryResultsResponse",
            "jobReference": job["jobReference"],
            "jobComplete": True,
            "totalRows": str(len(answer.rows)),
            "schema": {"fields": [{"name": n, "type": t} for n, t in answer.schema]},
            "rows": [{"f": [{"v": _cell(v)} for v in row]} for row in page],
        }
        if start + len(page) < len(answer.rows):
            payload["pageToken"] = str(start + len(page))
        return 200, payload


def metadata_rows(rows: list[dict[str, Any]]) -> Answer:
    """An INFORMATION_SCHEMA answer in the shape of the connector's metadata query."""
    names = [
        ("table_name", "STRING"),
        ("table_description", "STRING"),
        ("column_name", "STRING"),
        ("ordinal_position", "INTEGER"),
        ("column_type", "STRING"),
        ("is_partitioning_column", "STRING"),
        ("clustering_ordinal_position", "INTEGER"),
        ("field_path", "STRING"),
        ("field_type", "STRING"),
        ("description", "STRING"),
    ]
    return Answer(
        schema=names,
        rows=[tuple(row.get(name) for name, _ in names) for row in rows],
        bytes_processed=10 * 1024**2,
    )


def _cell(value: Any) -> Any:
    return None if value is None else str(value)


def _error(status: int, reason: str, message: str) -> tuple[int, dict[str, Any]]:
    error = {"code": status, "message": message, "errors": [{"reason": reason, "message": message}]}
    return status, {"error": error}


def _response(
    request: requests.PreparedRequest, status: int, payload: dict[str, Any]
) -> requests.Response:
    response = requests.Response()
    response.status_code = status
    response._content = json.dumps(payload).encode()
    response.headers["Content-Type"] = "application/json"
    response.request = request
    response.url = request.url or ""
    return response
