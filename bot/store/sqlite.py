"""The bot's store in a SQLite file (`Store` has the statements both back ends share): one
process, or replicas sharing a disk."""

from __future__ import annotations

import fcntl
import uuid
from pathlib import Path

from agent.memory.storage import SqliteStorage
from bot.store.base import Store


class SqliteStore(Store):
    """SQLite-backed store, safe to share between threads (one connection behind a lock).

    Each process holds an exclusive `flock` on `<store>.instances/<instance id>` while it lives;
    the kernel drops it when the process dies, however it dies.
    """

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._instances = path.with_name(path.name + ".instances")
        self._instances.mkdir(exist_ok=True)
        self.instance_id = uuid.uuid4().hex
        self._liveness = (self._instances / self.instance_id).open("w")
        fcntl.flock(self._liveness, fcntl.LOCK_EX | fcntl.LOCK_NB)
        self._open(SqliteStorage(path))

    def close(self) -> None:
        self._db.close()
        (self._instances / self.instance_id).unlink(missing_ok=True)
        self._liveness.close()

    def keep_alive(self) -> None:
        """Nothing to do: a `flock` is lost only with the process."""

    def _alive(self, instance_id: str) -> bool:
        lock_file = self._instances / instance_id
        try:
            handle = lock_file.open("r")
        except FileNotFoundError:
            return False
        with handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return True
            lock_file.unlink(missing_ok=True)  # the process is gone: tidy its file
            return False
