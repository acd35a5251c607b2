"""The bot's own worker pool: model and warehouse work never runs on Bolt's listener threads.

Bolt's listener pool is small and shared with acks; a slow query there makes clicks miss their
3-second ack. Jobs here are grouped by a key (the conversation's thread id): jobs with the same
key run one after another in submission order, jobs with different keys run in parallel.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

log = logging.getLogger(__name__)

Job = Callable[[], None]


class Work:
    """A thread pool that serialises jobs per key."""

    def __init__(self, workers: int) -> None:
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="querybot-work")
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        #: Jobs waiting per key; a key is present while one of its jobs runs or waits.
        self._queues: dict[str, deque[Job]] = {}

    def submit(self, key: str, job: Job) -> None:
        """Run `job` after every job submitted earlier with the same `key`."""
        with self._lock:
            queue = self._queues.get(key)
            if queue is not None:
                queue.append(job)
                return
            self._queues[key] = deque([job])
        self._pool.submit(self._drain, key)

    def _drain(self, key: str) -> None:
        while True:
            with self._lock:
                queue = self._queues[key]
                if not queue:
                    del self._queues[key]
                    self._idle.notify_all()
                    return
                job = queue[0]
            try:
                job()
            except Exception:  # a job's own handler failed: keep the key's later jobs going
                log.exception("A background job for %s failed", key)
            with self._lock:
                queue.popleft()

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Block until no job runs or waits; False if `timeout` passed first."""
        with self._idle:
            return self._idle.wait_for(lambda: not self._queues, timeout)

    def shutdown(self, wait: bool = True) -> None:
        self._pool.shutdown(wait=wait)
