"""Per-conversation DuckDB sandboxes built from files people upload (CSV, Parquet, JSON, SQLite).

Each conversation (a thread id) gets a directory under `root` named by a hash of the id, holding
`files.duckdb` (so its tables read `files.main.<table>`) and `thread.json` (the thread id, the
files loaded, and, through its modification time, when the sandbox was last used).

Loading (`connectors.sandbox.load`) runs in a child process under hard limits
(`connectors.sandbox.child`), on a copy of the database that replaces it only when the load
succeeded. The sandbox is queried, read-only, through `DuckDBConnector`, whose engine limits
bound a query's memory and temp files. DuckDB keeps one database instance per file in a
process, so a sandbox's query connector must be closed before loading into it.

Removing a sandbox deletes its database and keeps `thread.json` as a tombstone, so a later
question can be told its file is gone; tombstones are purged after `tombstone_s`.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from connectors.base import WarehouseUnavailable
from connectors.duckdb.connector import DuckDBConnector
from connectors.sandbox.bounds import SandboxLimits
from connectors.sandbox.child import load_bounded
from connectors.sandbox.files import FileRejected, detect_kind
from connectors.sandbox.load import LoadedTable
from connectors.units import byte_size

_STAGING_PREFIX = ".incoming-"
#: A staging directory this old was left by a crash mid-download.
_STAGING_MAX_AGE_S = 3600
_DB_NAME = "files.duckdb"
_META_NAME = "thread.json"
#: Loader processes running at once in this process (others wait their turn), so the memory and
#: disk bounds of one load multiply by this at most, whatever the number of workers.
LOADS_AT_ONCE = 2
_loading = threading.BoundedSemaphore(LOADS_AT_ONCE)


@dataclass(frozen=True)
class SandboxInfo:
    """A sandbox as its `thread.json` describes it."""

    thread_id: str
    #: Each file loaded: {"name", "tables", "rows", "loaded_at"}.
    files: tuple[dict[str, Any], ...]
    last_used: float
    #: When it was removed (a tombstone), else None.
    removed_at: float | None

    @property
    def file_names(self) -> list[str]:
        return [f["name"] for f in self.files]


class Sandboxes:
    """Every conversation's sandbox under `root`."""

    def __init__(
        self,
        root: Path,
        limits: SandboxLimits | None = None,
        *,
        tombstone_s: float = 30 * 24 * 3600,
    ) -> None:
        self.root = Path(root)
        self.limits = limits or SandboxLimits()
        self.tombstone_s = tombstone_s
        self._guard = threading.Lock()
        self._locks: dict[str, threading.Lock] = {}

    # -- where things are ----------------------------------------------------------------------

    def directory(self, thread_id: str) -> Path:
        digest = hashlib.sha256(thread_id.encode("utf-8")).hexdigest()[:32]
        return self.root / digest

    def path(self, thread_id: str) -> Path:
        """The sandbox's DuckDB file (it may not exist)."""
        return self.directory(thread_id) / _DB_NAME

    def exists(self, thread_id: str) -> bool:
        return self.path(thread_id).is_file()

    def info(self, thread_id: str) -> SandboxInfo | None:
        """The sandbox's record, a tombstone's included; None when the thread never had one."""
        return _read_meta(self.directory(thread_id) / _META_NAME)

    # -- using ---------------------------------------------------------------------------------

    def open(self, thread_id: str, **options: Any) -> DuckDBConnector:
        """The read-only query connector on the sandbox (`options` go to DuckDBConnector, whose
        engine limits bound the memory and temp files of its queries)."""
        if not self.exists(thread_id):
            raise WarehouseUnavailable(
                "This conversation has no uploaded files.", hint="Upload a file first."
            )
        self.touch(thread_id)
        return DuckDBConnector(self.path(thread_id), **options)

    def touch(self, thread_id: str) -> None:
        """Mark the sandbox as used now (its idle time starts again)."""
        meta = self.directory(thread_id) / _META_NAME
        if meta.is_file() and self.exists(thread_id):
            os.utime(meta)

    def load(self, thread_id: str, file: Path, name: str) -> list[LoadedTable]:
        """Load the upload `file` (called `name` by the person who shared it) into the thread's
        sandbox, creating the sandbox if needed. Raises FileRejected, with nothing changed, for a
        file of another kind, over a limit, or unreadable. No query connector may be open on the
        sandbox meanwhile (see the module docstring)."""
        kind = detect_kind(file, name)
        size = file.stat().st_size
        if size == 0:
            raise FileRejected(f"{name} is empty.", hint="Upload a file with data in it.")
        if size > self.limits.max_file_bytes:
            raise FileRejected(
                f"{name} is {byte_size(size)}; the limit is "
                f"{byte_size(self.limits.max_file_bytes)}.",
                hint="Upload a smaller extract (filter or aggregate it first), or ask whoever "
                "runs querybot to raise the limit.",
                bound="size",
            )
        with self._lock(thread_id):
            directory = self.directory(thread_id)
            existed = self.exists(thread_id)
            if not existed:
                _clear_tombstone(directory)
            directory.mkdir(parents=True, exist_ok=True)
            try:
                with _loading, self.staging() as work:
                    tables = load_bounded(directory / _DB_NAME, file, name, kind, self.limits, work)
            except BaseException:
                if not existed:  # leave no empty sandbox behind a refused first file
                    shutil.rmtree(directory, ignore_errors=True)
                raise
            _record_load(directory / _META_NAME, thread_id, name, tables)
            return tables

    # -- deleting ------------------------------------------------------------------------------

    def remove(self, thread_id: str) -> bool:
        """Delete the sandbox's data, keeping its record as a tombstone. True if it existed."""
        with self._lock(thread_id):
            directory = self.directory(thread_id)
            if not self.exists(thread_id):
                return False
            for path in directory.iterdir():
                if path.name != _META_NAME:
                    path.unlink(missing_ok=True)
            _mark_removed(directory / _META_NAME, thread_id)
            return True

    def idle(self, idle_s: float, *, now: float | None = None) -> list[str]:
        """Thread ids of the sandboxes (not tombstones) unused for `idle_s` seconds."""
        cutoff = (time.time() if now is None else now) - idle_s
        return [
            info.thread_id
            for info in self._infos()
            if info.removed_at is None and info.last_used <= cutoff
        ]

    def sweep(self, idle_s: float, *, now: float | None = None) -> list[str]:
        """Remove the sandboxes unused for `idle_s` seconds (and purge old tombstones); returns
        the thread ids removed. Their query connectors must be closed first."""
        now = time.time() if now is None else now
        removed = [t for t in self.idle(idle_s, now=now) if self.remove(t)]
        self.purge(now=now)
        return removed

    def purge(self, *, now: float | None = None) -> None:
        """Delete tombstones older than `tombstone_s`, and staging directories a crash left."""
        now = time.time() if now is None else now
        for info in self._infos():
            if info.removed_at is not None and info.removed_at <= now - self.tombstone_s:
                shutil.rmtree(self.directory(info.thread_id), ignore_errors=True)
        if self.root.is_dir():
            for stale in self.root.glob(f"{_STAGING_PREFIX}*"):
                if stale.stat().st_mtime <= now - _STAGING_MAX_AGE_S:
                    shutil.rmtree(stale, ignore_errors=True)

    @contextmanager
    def staging(self) -> Iterator[Path]:
        """A fresh directory under the root for one download on its way into a sandbox (on
        the same disk), removed afterwards."""
        self.root.mkdir(parents=True, exist_ok=True)
        directory = Path(tempfile.mkdtemp(prefix=_STAGING_PREFIX, dir=self.root))
        try:
            yield directory
        finally:
            shutil.rmtree(directory, ignore_errors=True)

    # -- internals -----------------------------------------------------------------------------

    def _infos(self) -> Iterator[SandboxInfo]:
        if not self.root.is_dir():
            return
        for directory in sorted(self.root.iterdir()):
            info = _read_meta(directory / _META_NAME)
            if info is not None:
                yield info

    @contextmanager
    def _lock(self, thread_id: str) -> Iterator[None]:
        with self._guard:
            lock = self._locks.setdefault(thread_id, threading.Lock())
        with lock:
            yield


# -- thread.json ---------------------------------------------------------------------------------


def _read_meta(path: Path) -> SandboxInfo | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        last_used = path.stat().st_mtime
    except (OSError, ValueError):
        return None
    return SandboxInfo(
        thread_id=data["thread_id"],
        files=tuple(data.get("files", [])),
        last_used=last_used,
        removed_at=data.get("removed_at"),
    )


def _write_meta(path: Path, data: dict[str, Any]) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
    tmp.replace(path)


def _record_load(path: Path, thread_id: str, name: str, tables: list[LoadedTable]) -> None:
    info = _read_meta(path)
    files = list(info.files) if info is not None and info.removed_at is None else []
    files.append(
        {
            "name": name,
            "tables": [t.name for t in tables],
            "rows": sum(t.rows for t in tables),
            "loaded_at": time.time(),
        }
    )
    _write_meta(path, {"thread_id": thread_id, "files": files})


def _mark_removed(path: Path, thread_id: str) -> None:
    info = _read_meta(path)
    files = list(info.files) if info is not None else []
    _write_meta(path, {"thread_id": thread_id, "files": files, "removed_at": time.time()})


def _clear_tombstone(directory: Path) -> None:
    (directory / _META_NAME).unlink(missing_ok=True)
