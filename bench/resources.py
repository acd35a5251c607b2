"""One row of the gate report's resource section: a resource attack, what it cost the bot's whole
process tree and the warehouse server, and the bound that stopped it.

Each attack runs in a fresh child process (so one attack's memory never counts toward the next).
Its peak resident memory is read for each process it involves: the process standing for the
bot (`ru_maxrss`, or the bot's `VmHWM`), the largest of its children (DuckDB and SQLite worker
processes, the file loader; `RUSAGE_CHILDREN`), and, on PostgreSQL, the largest server backend
that served it (`VmHWM` in /proc, polled while it ran: the server runs on this machine). Its temp
bytes are the largest size the engine's temp directory (or the file sandbox's) reached.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class ResourceRow:
    """What one attack cost and what stopped it; `ok` is False when no bound stopped it, and
    `left_to_dba` marks an attack only the warehouse's administrator can bound (shown, not
    failed). `children_mib` and `backend_mib` are None where there is no such process."""

    attack: str
    engine: str
    peak_rss_mib: float
    temp_mib: float
    stopped_by: str
    ok: bool
    children_mib: float | None = None
    backend_mib: float | None = None
    left_to_dba: bool = False


def table(rows: list[ResourceRow]) -> list[str]:
    """The rows as Markdown table lines."""
    lines = [
        "| attack | engine | bot peak RSS (MiB) | largest child (MiB) | server backend (MiB) "
        "| temp (MiB) | stopped by |",
        "|---|---|---:|---:|---:|---:|---|",
    ]
    for row in rows:
        stopped = row.stopped_by
        if not row.ok:
            stopped = f"{'LEFT TO THE DBA' if row.left_to_dba else 'NOT STOPPED'}: {stopped}"
        lines.append(
            f"| {row.attack} | {row.engine} | {row.peak_rss_mib:,.0f} | {_mib(row.children_mib)}"
            f" | {_mib(row.backend_mib)} | {row.temp_mib:,.1f} | {stopped} |"
        )
    return lines


def _mib(value: float | None) -> str:
    return "-" if value is None else f"{value:,.0f}"


def status_kib(pid: int, field: str = "VmHWM") -> int:
    """A process's `field` from /proc/PID/status in KiB; 0 once the process is gone."""
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0
    for line in text.splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def descendants(pid: int) -> list[int]:
    """Every process below `pid` (its children, theirs, ...), read from /proc."""
    found: list[int] = []
    todo = [pid]
    while todo:
        parent = todo.pop()
        for task in Path(f"/proc/{parent}/task").glob("*"):
            try:
                children = (task / "children").read_text().split()
            except OSError:
                continue
            found += map(int, children)
            todo += map(int, children)
    return found


@contextmanager
def peak(probe: Callable[[], int], every_s: float = 0.05) -> Iterator[list[int]]:
    """The largest value `probe` gave while the block ran, polled every `every_s` seconds."""
    highest = [0]
    done = threading.Event()

    def poll() -> None:
        while not done.wait(every_s):
            highest[0] = max(highest[0], probe())

    watcher = threading.Thread(target=poll, daemon=True)
    watcher.start()
    try:
        yield highest
    finally:
        done.set()
        watcher.join()
        highest[0] = max(highest[0], probe())
