"""BigQuery clients: on a service-account key file or Application Default Credentials, or on a
BigQuery-compatible endpoint without credentials (a local emulator)."""

from __future__ import annotations

from google.api_core.client_options import ClientOptions
from google.auth import exceptions as auth
from google.auth.credentials import AnonymousCredentials
from google.cloud import bigquery
from google.oauth2 import service_account

from connectors.base import WarehouseUnavailable

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
