"""The stand-in's files: the three calls of `files_upload_v2` (`files.getUploadURLExternal` hands
out a local upload URL, the bytes are POSTed there, `files.completeUploadExternal` shares them),
and files people share (`add_file`), whose `url_private_download` serves their bytes only to a bot
token (anything else gets Slack's HTML sign-in page); `files.info` describes them."""

from __future__ import annotations

import contextlib
import json
import time
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import quote, unquote

from tests.support.standin_records import TEAM_ID, Refused, SharedBody, Upload

#: files.getUploadURLExternal refuses files over 1 GB; the stand-in keeps it small.
MAX_UPLOAD = 50 * 1024 * 1024


class FileMethods:
    """Mixed into `SlackStandin`, whose `__init__` sets up the state these methods use."""

    def _upload_url(self, params: dict[str, Any]) -> dict[str, Any]:
        filename = str(params.get("filename") or "")
        length = int(params.get("length") or 0)
        if not filename or length <= 0:
            raise Refused("invalid_arguments", "filename and a positive length are required")
        if length > MAX_UPLOAD:
            raise Refused("file_too_large", f"{length} bytes")
        file_id = f"F{next(self._ids):08d}"
        self._pending_uploads[file_id] = {"filename": filename, "length": length, "data": None}
        upload_url = self.url.removesuffix("/api/") + f"/upload/{file_id}"
        return {"ok": True, "upload_url": upload_url, "file_id": file_id}

    def _receive_upload(self, file_id: str, data: bytes) -> int:
        with self._lock:
            pending = self._pending_uploads.get(file_id)
            if pending is None or len(data) != pending["length"]:
                return 400
            pending["data"] = data
            return 200

    def _complete_upload(self, params: dict[str, Any]) -> dict[str, Any]:
        files = params.get("files")
        if isinstance(files, str):
            files = json.loads(files)
        if not files:
            raise Refused("invalid_arguments", "no files")
        channel = str(params.get("channel_id") or "")
        thread_ts = params.get("thread_ts") or None
        if thread_ts and not channel:
            raise Refused("invalid_arguments", "thread_ts needs channel_id")
        shared = []
        for item in files:
            pending = self._pending_uploads.pop(item.get("id", ""), None)
            if pending is None or pending["data"] is None:
                raise Refused("file_not_found", f"{item.get('id')} was not uploaded")
            title = item.get("title") or pending["filename"]
            self.uploads.append(
                Upload(item["id"], pending["filename"], title, channel, thread_ts, pending["data"])
            )
            shared.append({"id": item["id"], "name": pending["filename"], "title": title})
        return {"ok": True, "files": shared}

    def add_file(
        self,
        name: str,
        content: bytes,
        *,
        mimetype: str = "text/csv",
        user: str = "U0ALICE01",
        reported_size: int | None = None,
        send_length: bool = True,
    ) -> dict[str, Any]:
        """Share a file as a person would; returns Slack's file object (as a `file_share`
        message carries it). Its `url_private_download` serves `content` to a request with a
        bot token and Slack's HTML sign-in page to any other. `reported_size` puts another
        size in the object, and `send_length=False` leaves out Content-Length (a streamed
        download), to check a size cap that trusts neither."""
        with self._lock:
            file_id = f"F{next(self._ids):08d}"
            base = self.url.removesuffix("/api/")
            path = f"/files-pri/{TEAM_ID}-{file_id}/download/{quote(name)}"
            obj = {
                "id": file_id,
                "created": int(time.time()),
                "timestamp": int(time.time()),
                "name": name,
                "title": name,
                "mimetype": mimetype,
                "filetype": name.rsplit(".", 1)[-1].lower() if "." in name else "",
                "user": user,
                "size": len(content) if reported_size is None else reported_size,
                "mode": "hosted",
                "is_external": False,
                "url_private": f"{base}/files-pri/{TEAM_ID}-{file_id}/{quote(name)}",
                "url_private_download": base + path,
            }
            self.shared_files[file_id] = obj
            self._file_bodies[path] = SharedBody(file_id, content, mimetype, send_length)
            return dict(obj)

    def _serve_file(self, handler: BaseHTTPRequestHandler, path: str, token: str) -> None:
        with self._lock:
            body = self._file_bodies.get(unquote_path(path))
            status = 404 if body is None else 200
            self.downloads.append((body.file_id if body else "", token, status))
            self._lock.notify_all()
        if body is None:
            handler.send_response(404)
            handler.send_header("Content-Length", "0")
            handler.end_headers()
            return
        if not token.startswith("xoxb-"):
            page = b"<!DOCTYPE html><html><body>Sign in to Slack</body></html>"
            content, content_type, send_length = page, "text/html; charset=utf-8", True
        else:
            content, content_type = body.content, body.mimetype
            send_length = body.send_length
        handler.send_response(200)
        handler.send_header("Content-Type", content_type)
        if send_length:
            handler.send_header("Content-Length", str(len(content)))
        handler.end_headers()
        with contextlib.suppress(OSError):  # the bot may stop reading at its size cap
            handler.wfile.write(content)

    def _files_info(self, params: dict[str, Any]) -> dict[str, Any]:
        file_id = str(params.get("file") or "")
        if file_id not in self.shared_files:
            # about the workspace (a deleted file), not a malformed call: not in `refused`
            raise Refused("file_not_found", f"no file {file_id!r}", injected=True)
        return {"ok": True, "file": dict(self.shared_files[file_id])}


def unquote_path(path: str) -> str:
    """A download path with its file name quoted the one way `add_file` quotes it."""
    head, _, name = path.rpartition("/")
    return f"{head}/{quote(unquote(name))}"
