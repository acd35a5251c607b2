"""Ctrl-C at a terminal prompt reaches the prompt, whichever thread the kernel gives it to.

The kernel hands a process's SIGINT to any thread that does not block it. Python runs the
handler in the main thread, but a main thread waiting in `input()` (readline) only notices
when its own wait is interrupted: a Ctrl-C taken by another thread (a catalog refresh, a
warehouse's reader) left the prompt waiting for a key. While `interruptible` is active, a
watcher thread reads the signal wake-up pipe and, for every SIGINT, pokes the main thread with
SIGUSR1 (whose handler does nothing): its wait ends, the pending SIGINT handler runs there and
raises KeyboardInterrupt, at a prompt or in a long step alike.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def interruptible() -> Iterator[None]:
    """Ctrl-C interrupts the main thread while this is active (from the main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    main = threading.main_thread().ident
    assert main is not None
    read_end, write_end = os.pipe()
    os.set_blocking(write_end, False)  # set_wakeup_fd requires it
    before_usr1 = signal.signal(signal.SIGUSR1, lambda *_: None)
    before_fd = signal.set_wakeup_fd(write_end, warn_on_full_buffer=False)

    def watch() -> None:
        while data := os.read(read_end, 64):  # b"" once the write end is closed
            if signal.SIGINT in data:
                signal.pthread_kill(main, signal.SIGUSR1)

    watcher = threading.Thread(target=watch, name="ctrl-c-to-main", daemon=True)
    watcher.start()
    try:
        yield
    finally:
        signal.set_wakeup_fd(before_fd)
        os.close(write_end)
        watcher.join(timeout=1)
        os.close(read_end)
        signal.signal(signal.SIGUSR1, before_usr1)
