"""Files people share with the bot in Slack: what an event's `files` say, and the download.

An `app_mention` may carry only file ids (`files: [{"id": "F…"}]`) and a `file_share` message a
stub (`file_access: "check_file_info"`, e.g. in Slack Connect): the full file object then comes
from `files.info` (slack_sdk). The download is a plain HTTPS GET of `url_private_download` with
the bot token (`Authorization: Bearer`), sent only to Slack's own hosts (or the API host
`SLACK_API_URL` names), never following redirects: Slack answers a request it does not accept
with a redirect or an HTML sign-in page, not the file. The size limit is checked on the file
object, on `Content-Length` and while streaming, so an oversized file is never fully fetched.
"""

from __future__ import annotations

import logging
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from connectors.units import byte_size

log = logging.getLogger(__name__)

#: Bytes read from the network at a time.
_CHUNK = 256 * 1024
_TIMEOUT_S = 60


@dataclass(frozen=True)
class SharedFile:
    """The parts of a Slack file object the bot uses."""

    id: str
    name: str
    size: int | None
    url: str
    mimetype: str = ""

    @classmethod
    def from_slack(cls, obj: dict[str, Any]) -> SharedFile:
        return cls(
            id=str(obj.get("id", "")),
            name=str(obj.get("name") or obj.get("title") or obj.get("id") or "file"),
            size=int(obj["size"]) if obj.get("size") is not None else None,
            url=str(obj.get("url_private_download") or obj.get("url_private") or ""),
            mimetype=str(obj.get("mimetype") or ""),
        )


class FileUnavailable(Exception):
    """The file could not be fetched from Slack; the message says why and what to do."""


class FileTooLarge(FileUnavailable):
    """The file is over the size limit."""


def event_files(event: dict[str, Any]) -> list[dict[str, Any]]:
    """The file objects (or stubs) an event carries."""
    return [f for f in event.get("files") or [] if isinstance(f, dict) and f.get("id")]


class SlackFiles:
    """Fetches shared files with the bot's WebClient and token."""

    def __init__(self, client: WebClient, *, max_bytes: int) -> None:
        self.client = client
        self.max_bytes = max_bytes
        #: The API host `SLACK_API_URL` names (Slack's own by default).
        self._api_host = urlsplit(client.base_url).netloc

    def describe(self, obj: dict[str, Any]) -> SharedFile:
        """The full file object: the event's, or `files.info`'s when the event has a stub."""
        stub = obj.get("file_access") == "check_file_info" or not obj.get("url_private_download")
        if stub:
            try:
                obj = self.client.files_info(file=obj["id"])["file"]
            except SlackApiError as exc:
                error = exc.response.get("error", "error")
                log.warning("files.info %s failed: %s", obj["id"], error)
                raise FileUnavailable(
                    f"Slack would not let me read the file {obj.get('name') or obj['id']} "
                    f"({error}). Check that I was added to this channel and have the files:read "
                    "permission, then share it again."
                ) from exc
        return SharedFile.from_slack(obj)

    def download(self, file: SharedFile, target: Path) -> Path:
        """Save the file's bytes to `target`. Raises FileTooLarge or FileUnavailable."""
        if file.size is not None and file.size > self.max_bytes:
            raise self._too_large(file, file.size)
        if not self._trusted(file.url):
            raise FileUnavailable(
                f"I cannot download {file.name}: Slack gave no download link I recognise. "
                "Share the file again as an upload (not a link)."
            )
        request = urllib.request.Request(
            file.url, headers={"Authorization": f"Bearer {self.client.token}"}
        )
        try:
            with _opener.open(request, timeout=_TIMEOUT_S) as response:
                self._check_response(file, response)
                self._save(file, response, target)
        except urllib.error.HTTPError as exc:
            log.warning("Downloading %s failed: HTTP %s", file.id, exc.code)
            raise self._refused(file) from exc
        except (urllib.error.URLError, OSError) as exc:
            if isinstance(exc, FileUnavailable):
                raise
            log.warning("Downloading %s failed: %s", file.id, exc)
            raise FileUnavailable(
                f"Downloading {file.name} from Slack failed ({exc}). Share it again in a minute."
            ) from exc
        return target

    def _check_response(self, file: SharedFile, response: Any) -> None:
        content_type = response.headers.get("Content-Type", "")
        if content_type.startswith("text/html") and not file.mimetype.startswith("text/html"):
            raise self._refused(file)  # Slack's sign-in page, not the file
        length = response.headers.get("Content-Length")
        if length and length.isdigit() and int(length) > self.max_bytes:
            raise self._too_large(file, int(length))

    def _save(self, file: SharedFile, response: Any, target: Path) -> None:
        received = 0
        with target.open("wb") as out:
            while chunk := response.read(_CHUNK):
                received += len(chunk)
                if received > self.max_bytes:
                    raise self._too_large(file, None)
                out.write(chunk)

    def _trusted(self, url: str) -> bool:
        """Whether the token may go to `url`: Slack's hosts, or the configured API host."""
        parts = urlsplit(url)
        if parts.netloc == self._api_host:
            return parts.scheme in {"http", "https"}
        host = parts.hostname or ""
        return parts.scheme == "https" and (host == "slack.com" or host.endswith(".slack.com"))

    def _too_large(self, file: SharedFile, size: int | None) -> FileTooLarge:
        limit = byte_size(self.max_bytes)
        actual = f"is {byte_size(size)}" if size is not None else f"is over {limit}"
        return FileTooLarge(
            f"{file.name} {actual}; the limit is {limit}. Upload a smaller extract (filter or "
            "aggregate it first), or ask whoever runs querybot to raise QUERYBOT_FILE_MAX_MB."
        )

    @staticmethod
    def _refused(file: SharedFile) -> FileUnavailable:
        return FileUnavailable(
            f"Slack did not hand over {file.name}. Check that I have the files:read permission "
            "(reinstall the app after adding it), then share the file again."
        )


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """A redirect is Slack sending an unauthenticated request to its sign-in page: fail
    instead of following it (and carrying the token elsewhere)."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


_opener = urllib.request.build_opener(_NoRedirect)
