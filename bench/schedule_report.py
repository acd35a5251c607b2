"""A thousand schedules due in the same minute, across two replicas: runs done, duplicates,
missed, and how late each run's post was.

Two real `querybot run --http` processes share a scratch PostgreSQL database (their state and
DBOS's tables), the Slack stand-in and a fake wall clock (libfaketime, tests/support/clock.py)
set just before 09:00 Europe/London. One approved answer ("how many regions?") is asked through
the first replica; then N schedules of it, all `0 9 * * *`, are written to the store and both
replicas started. Lateness is the time from the due minute to the run's end (its post in the
stand-in), read from the runs' rows (`finished_at`, the replicas' fake clock) in seconds.

    uv run python -m bench.schedule_report --schedules 1000
"""

from __future__ import annotations

import argparse
import datetime as dt
import statistics
import tempfile
import time
from collections import Counter
from pathlib import Path
from zoneinfo import ZoneInfo

from bot.schedules.records import POSTED
from bot.schedules.runner import EVENT_TYPE
from connectors.demo.build import ensure_demo
from tests.e2e.schedule_flow import Replicas
from tests.support.clock import require
from tests.support.demo_day import TODAY
from tests.support.pgdb import rows, scratch_database
from tests.support.standin import Posted, SlackStandin

DUE = dt.datetime(2027, 1, 15, 9, tzinfo=ZoneInfo("Europe/London"))


def run(count: int, timeout_s: float) -> dict[str, object]:
    require()
    with (
        tempfile.TemporaryDirectory() as tmp_dir,
        SlackStandin() as slack,
        scratch_database("bench_schedules") as url,
    ):
        tmp = Path(tmp_dir)
        replicas = Replicas(slack, ensure_demo(tmp / "demo", today=TODAY), tmp, url)
        replicas.schedule(count, "0 9 * * *", DUE - dt.timedelta(hours=1))
        started = time.monotonic()
        replicas.start_at(DUE - dt.timedelta(seconds=40), timeout=120)
        try:
            slack.wait_for(
                lambda: len(_posts(slack)) >= count or None, timeout=timeout_s, what="every run"
            )
        except AssertionError:
            pass  # the figures say how many were missed
        finally:
            wall_s = time.monotonic() - started
            replicas.stop()
        done = rows(url, "SELECT status, instance_id, finished_at FROM bot_schedule_runs")
    posted = [r for r in done if r["status"] == POSTED]
    per_run = Counter(
        (m.metadata or {}).get("event_payload", {}).get("schedule_id") for m in _posts(slack)
    )
    late = sorted(float(r["finished_at"]) - DUE.timestamp() for r in posted)  # type: ignore[arg-type]
    return {
        "schedules": count,
        "runs posted": len(posted),
        "duplicates": sum(n - 1 for n in per_run.values() if n > 1),
        "missed": count - len(per_run),
        "by replica": dict(Counter(str(r["instance_id"])[:8] for r in posted)),
        "lateness p50 s": round(statistics.median(late), 2) if late else None,
        "lateness p95 s": round(late[int(0.95 * (len(late) - 1))], 2) if late else None,
        "lateness max s": round(late[-1], 2) if late else None,
        "wall s (both starts included)": round(wall_s, 1),
    }


def _posts(slack: SlackStandin) -> list[Posted]:
    return [
        m for m in slack.messages.values() if (m.metadata or {}).get("event_type") == EVENT_TYPE
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--schedules", type=int, default=1000)
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds to wait for the runs")
    args = parser.parse_args()
    for key, value in run(args.schedules, args.timeout).items():
        print(f"{key}: {value}")


if __name__ == "__main__":
    main()
