"""`querybot feedback`: the thumbs down people gave answers in Slack, newest first, for whoever
reviews them: when, who, which warehouse, the question, the hash of the SQL that ran (the one
the card's buttons and the audit log name, so the run can be found there) and what they said
was wrong.

A report is open while it stands: each person has one rating per answer, so a thumbs down they
later turned into a thumbs up is no longer listed. Read from the bot's store (SQLite in the
data directory, or the `QUERYBOT_STATE_URL` database), as `querybot doctor` reads its counts;
nothing is created where the bot never ran. `--json` writes one object a line, with the whole
SQL, for scripts.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
from collections.abc import Sequence
from datetime import UTC, datetime

import psycopg

from agent.memory.audit import sql_sha256
from agent.memory.postgres import StateDatabaseError
from agent.memory.storage import open_storage
from bot.settings import Settings
from bot.store.feedback import FeedbackLog, Rating
from bot.store.tables import TABLES

#: Characters of the SQL hash shown in the listing (`--json` has all 64).
HASH_SHOWN = 12
#: Said for a rating whose warehouse was not known (a thread with files, an unmapped channel).
NO_WAREHOUSE = "(no warehouse)"


def run(args: argparse.Namespace, settings: Settings) -> int:
    """List the open thumbs down; 0 when the store could be read (with or without reports),
    else 1 (said on stderr)."""
    out = sys.stdout
    said = sys.stderr if args.json else out  # what is not a report: never in the JSON lines
    where = "QUERYBOT_STATE_URL" if settings.state_url else str(settings.state_db)
    if not settings.state_url and not settings.state_db.exists():
        print(f"No feedback yet: the bot has not run with {where}.", file=said)
        return 0
    try:
        db = open_storage(settings.state_url or settings.state_db, TABLES)
    except (StateDatabaseError, psycopg.Error, sqlite3.Error) as exc:
        print(
            f"querybot feedback: the bot's store ({where}) cannot be read: {exc}", file=sys.stderr
        )
        return 1
    try:
        reports = FeedbackLog(db).to_review(args.limit, warehouse=args.warehouse)
    finally:
        db.close()
    if not reports:
        only = f" on {args.warehouse}" if args.warehouse else ""
        print(f"No thumbs down to review{only}.", file=said)
    elif args.json:
        for rating in reports:
            print(json.dumps(as_json(rating), ensure_ascii=False), file=out)
    else:
        print(listing(reports, with_sql=args.sql), file=out)
    return 0


def as_json(rating: Rating) -> dict[str, str]:
    """One report as `--json` writes it."""
    return {
        "rated_at": when(rating.rated_at),
        "user": rating.user,
        "warehouse": rating.warehouse,
        "proposal_id": rating.proposal_id,
        "question": rating.question,
        "sql_sha256": sql_sha256(rating.sql),
        "reason": rating.reason,
        "sql": rating.sql,
    }


def listing(reports: Sequence[Rating], *, with_sql: bool = False) -> str:
    """The reports as a person reads them: a heading line each (when, who, warehouse, SQL hash),
    then the question and what was wrong, indented."""
    blocks = [f"{len(reports)} thumbs down to review, newest first:"]
    for rating in reports:
        head = "  ".join(
            [
                when(rating.rated_at),
                rating.user,
                rating.warehouse or NO_WAREHOUSE,
                f"sql {sql_sha256(rating.sql)[:HASH_SHOWN]}",
                f"proposal {rating.proposal_id}",
            ]
        )
        lines = [head, f"    Asked: {_one_line(rating.question)}"]
        lines.append(f"    Wrong: {_one_line(rating.reason) or '(no reason given)'}")
        if with_sql:
            lines += [f"      {line}" for line in rating.sql.splitlines()]
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def when(rated_at: float) -> str:
    """`rated_at` as a UTC minute: 2026-12-04 14:02 UTC."""
    return datetime.fromtimestamp(rated_at, UTC).strftime("%Y-%m-%d %H:%M UTC")


def _one_line(text: str) -> str:
    """A person's words on one line (a reason may run over several)."""
    return " ".join(text.split())
