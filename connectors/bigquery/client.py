"""BigQuery clients: on a service-account key file or Application Default Credentials, or on a
BigQuery-compatible endpoint without credentials (a local emulator); and clients acting as
other service accounts (`Impersonation`)."""

from __future__ import annotations

import json
import threading
import time

import requests
from google.api_core.client_options import ClientOptions
from google.auth import exceptions as auth
from google.auth import impersonated_credentials
from google.auth.credentials import AnonymousCredentials
from google.auth.transport.requests import AuthorizedSession, Request
from google.cloud import bigquery
from google.oauth2 import service_account

from connectors.base import PermissionDenied, WarehouseUnavailable

_SCOPES = ("https://www.googleapis.com/auth/bigquery",)


def endpoint_client(project: str, endpoint: str, location: str | None = None) -> bigquery.Client:
    """A client for a BigQuery-compatible endpoint without credentials (a local emulator)."""
    return bigquery.Client(
        project=project,
        location=location,
        credentials=AnonymousCredentials(),
        client_options=ClientOptions(api_endpoint=endpoint),
    )


def client(project: str, location: str | None, credentials_path: str | None) -> bigquery.Client:
    """A client on a service-account key file, or on Application Default Credentials."""
    try:
        if credentials_path:
            credentials = service_account.Credentials.from_service_account_file(
                credentials_path, scopes=_SCOPES
            )
            return bigquery.Client(project=project, location=location, credentials=credentials)
        return bigquery.Client(project=project, location=location)
    except (OSError, ValueError, auth.GoogleAuthError) as exc:
        raise WarehouseUnavailable(
            f"No usable BigQuery credentials: {exc}",
            hint="Set GOOGLE_APPLICATION_CREDENTIALS to a service-account key file, or run "
            "`gcloud auth application-default login`.",
            engine_message=str(exc),
        ) from exc


#: How long an impersonated token lives; google-auth fetches a new one before it ends.
_TOKEN_LIFETIME_S = 3600
#: The permission that reading a table's rows needs.
_GET_DATA = "bigquery.tables.getData"
#: How long what an account may read is trusted before IAM is asked again (a grant revoked
#: meanwhile still stops the job: IAM decides again when it runs).
_READABLE_TTL_S = 300.0


class Impersonation:
    """Clients acting as service accounts (the identities of `RunContext.identity`), one per
    account, on the base client's credentials and transport: IAM's `generateAccessToken` gives
    a short-lived token for the account, which the account's own BigQuery grants then govern.
    The login needs `roles/iam.serviceAccountTokenCreator` on each account it acts as."""

    def __init__(self, base: bigquery.Client) -> None:
        self.base = base
        self._lock = threading.Lock()
        self._clients: dict[str, bigquery.Client] = {}
        #: (account, table) -> (when asked, whether it may read the table's rows).
        self._readable: dict[tuple[str, str], tuple[float, bool]] = {}

    def client(self, account: str) -> bigquery.Client:
        """A client acting as `account`, with a token fetched now if it has none valid:
        PermissionDenied when the login may not act as it."""
        with self._lock:
            found = self._clients.get(account)
            if found is None:
                found = self._clients[account] = self._build(account)
        credentials = found._credentials  # google-cloud-core has no public accessor
        if not credentials.valid:
            try:
                credentials.refresh(self._auth_request())
            except (auth.GoogleAuthError, requests.RequestException) as exc:
                raise PermissionDenied(
                    f"querybot may not run queries as the service account {account!r}: "
                    f"{_reason(exc)}",
                    hint="Grant the bot's own account the Service Account Token Creator role "
                    f"(roles/iam.serviceAccountTokenCreator) on {account}, or change the run_as "
                    "rules in querybot's config file.",
                    engine_message=str(exc),
                ) from exc
        return found

    def readable(self, account: str, table: str, timeout_s: float) -> bool:
        """Whether `account` may read the rows of `table` (`project.dataset.table`), as IAM's
        testIamPermissions answers it (a remembered answer for `_READABLE_TTL_S`)."""
        client = self.client(account)
        now = time.monotonic()
        with self._lock:
            known = self._readable.get((account, table))
        if known and now - known[0] < _READABLE_TTL_S:
            return known[1]
        granted = client.test_iam_permissions(table, [_GET_DATA], timeout=timeout_s)
        may = _GET_DATA in (granted.get("permissions") or [])
        with self._lock:
            self._readable[(account, table)] = (now, may)
        return may

    def close(self) -> None:
        with self._lock:
            clients, self._clients = list(self._clients.values()), {}
        for found in clients:
            found.close()

    def _build(self, account: str) -> bigquery.Client:
        credentials = impersonated_credentials.Credentials(
            source_credentials=self.base._credentials,
            target_principal=account,
            target_scopes=list(_SCOPES),
            lifetime=_TOKEN_LIFETIME_S,
        )
        session = AuthorizedSession(credentials, auth_request=self._auth_request())
        self._mount(session)
        return bigquery.Client(
            project=self.base.project,
            location=self.base.location,
            credentials=credentials,
            _http=session,
        )

    def _auth_request(self) -> Request:
        """Token requests, over the base client's transport adapters (its connection pools,
        or a test's scripted API)."""
        session = requests.Session()
        self._mount(session)
        return Request(session)

    def _mount(self, session: requests.Session) -> None:
        for prefix, adapter in self.base._http.adapters.items():
            session.mount(prefix, adapter)


def _reason(exc: BaseException) -> str:
    """IAM's own message from a failed token request (RefreshError carries the response body
    as its second argument), else the exception's first line."""
    body = exc.args[1] if len(exc.args) > 1 else ""
    try:
        message = json.loads(body)["error"]["message"]
    except (TypeError, ValueError, KeyError):
        message = ""
    text = str(exc.args[0]) if exc.args else type(exc).__name__
    return f"{text}: {message}" if message else text.splitlines()[0]
