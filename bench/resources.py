"""One row of the gate report's resource section: a resource attack, what it cost the bot, and
the bound that stopped it.

Each attack runs in a fresh child process (so one attack's memory never counts toward the next);
its peak resident memory is the child's `ru_maxrss` and its temp bytes the largest size the
engine's temp directory (or the file sandbox's directory) reached while it ran.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ResourceRow:
    """What one attack cost and what stopped it; `ok` is False when no bound stopped it."""

    attack: str
    engine: str
    peak_rss_mib: float
    temp_mib: float
    stopped_by: str
    ok: bool


def table(rows: list[ResourceRow]) -> list[str]:
    """The rows as Markdown table lines."""
    lines = [
        "| attack | engine | peak RSS (MiB) | temp (MiB) | stopped by |",
        "|---|---|---:|---:|---|",
    ]
    for row in rows:
        stopped = row.stopped_by if row.ok else f"NOT STOPPED: {row.stopped_by}"
        lines.append(
            f"| {row.attack} | {row.engine} | {row.peak_rss_mib:,.0f} | {row.temp_mib:,.1f}"
            f" | {stopped} |"
        )
    return lines
