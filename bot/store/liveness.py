"""Which processes sharing the store are alive: each holds a lock on its own id while it lives
(`flock` on a file for SQLite, a session advisory lock for PostgreSQL), so work a process left
mid-way (a question, a claimed proposal, a scheduled run) is taken over only once it is gone."""

from __future__ import annotations

import time
from abc import ABC, abstractmethod


class Liveness(ABC):
    """A store's processes: this one's id and lock, and whether another's is gone."""

    #: This process's id in the store (set by subclasses, which hold its liveness lock).
    instance_id: str
    #: Whether a free liveness lock proves its process dead. When a lost connection frees it
    #: too (PostgreSQL), a process is taken for dead only when two looks in a row find it so,
    #: which gives a living one time to take its lock again (`keep_alive`).
    free_lock_is_death: bool = True
    #: Processes found dead by the last look, when one look is not proof enough.
    _suspects: frozenset[str] = frozenset()
    #: How long `is_gone` watches a free lock before it is proof, where one look is not: longer
    #: than a living process takes to lock again (`keep_alive` runs every
    #: QUERYBOT_RECOVER_EVERY_S / 4; `open_store` sets half of it).
    proof_wait_s: float = 30.0

    @abstractmethod
    def _alive(self, instance_id: str) -> bool:
        """Whether the process `instance_id` (another one) still holds its liveness lock."""

    @abstractmethod
    def keep_alive(self) -> None:
        """Take this process's liveness lock again if it was lost (a dropped connection)."""

    def is_gone(self, instance_id: str) -> bool:
        """Whether the process `instance_id` has died (its liveness lock is free). Where a free
        lock is not proof, the lock must still be free after `proof_wait_s`: this call then
        blocks that long (a takeover is rare; posting twice is worse)."""
        if instance_id == self.instance_id or self._alive(instance_id):
            return False
        if self.free_lock_is_death:
            return True
        time.sleep(self.proof_wait_s)
        return not self._alive(instance_id)
