"""The bot's HTTP server under resource attacks (issue 15): what they cost the real bot process
and what stopped them, as rows of the gate report's resource section.

    uv run python -m bench.resource_http

Each attack meets a fresh `querybot run --http` (the tests' `BotProcess`, on the Web API stand-in
and the demo warehouse) with the default bounds; its peak RSS is the bot's VmHWM once the attack
is over, and the largest of its child processes' (DuckDB workers). The attacks: three unsigned
POSTs claiming 300 MB each and really streaming it (before the bounds, they took the bot from 161
to 1,227 MB); IDLE connections that say nothing or half a request's headers, followed by one
signed request that must still be answered; and every signed but malformed body of the Slack
tests' table (issue 36: eight of eleven got HTTP 500 before), each of which must get a 4xx,
with no traceback in the bot's log, and a signed request answered after them.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable
from pathlib import Path

from bench.resources import ResourceRow, descendants, status_kib, table
from bot.http_server import HttpLimits
from connectors.demo.build import ensure_demo
from tests.support.botproc import SECRET, BotProcess, data_dir_with, write_script
from tests.support.http_attacks import (
    MIB,
    closed_by_server,
    idle_connections,
    memory_kib,
    stream_unsigned,
)
from tests.support.malformed_bodies import MALFORMED
from tests.support.slack_payloads import signed_headers
from tests.support.standin import SlackStandin

ENGINE = "bot, HTTP mode"
#: Idle connections opened at once, well over the default bound of connections served.
IDLE = 500
DEFAULTS = HttpLimits()


def resource_rows() -> list[ResourceRow]:
    """One row per HTTP attack, each against a fresh bot process."""
    with tempfile.TemporaryDirectory(prefix="querybot-resource-http-") as tmp:
        root = Path(tmp)
        demo = ensure_demo(root / "demo")
        return [
            _attack(root / "posts", demo, "three unsigned 300 MB POSTs", _oversized_posts),
            _attack(root / "idle", demo, f"{IDLE} idle connections", _idle_connections),
            _attack(
                root / "malformed",
                demo,
                f"{len(MALFORMED)} signed malformed bodies",
                _malformed_bodies,
            ),
        ]


def _attack(
    folder: Path, demo: Path, name: str, run: Callable[[BotProcess], tuple[str, bool]]
) -> ResourceRow:
    data_dir = data_dir_with(folder / "data", demo)
    script = write_script(folder / "script.jsonl", [])
    with SlackStandin() as slack, BotProcess(slack=slack, data_dir=data_dir, script=script) as bot:
        stopped_by, ok = run(bot)
        assert bot._proc is not None
        peak = memory_kib(bot._proc.pid, "VmHWM") / 1024
        children = [status_kib(child) / 1024 for child in descendants(bot._proc.pid)]
    return ResourceRow(name, ENGINE, peak, 0.0, stopped_by, ok, max(children, default=0.0))


def _oversized_posts(bot: BotProcess) -> tuple[str, bool]:
    results = [stream_unsigned(bot.port, 300 * MIB) for _ in range(3)]
    statuses = sorted({r.status for r in results})
    most = max(r.sent for r in results) / MIB
    stopped = (
        f"HTTP {'/'.join(map(str, statuses))} on the headers (Content-Length over "
        f"QUERYBOT_HTTP_MAX_BODY_KB={DEFAULTS.max_body_bytes // 1024}); at most {most:,.1f} MiB "
        "of each 300 MB sent by then, none of it kept"
    )
    return stopped, statuses == [413] and most < 30


def _idle_connections(bot: BotProcess) -> tuple[str, bool]:
    silent = idle_connections(bot.port, IDLE // 2)
    slow = idle_connections(bot.port, IDLE - IDLE // 2, partial=True)
    try:
        text = json.dumps({"type": "url_verification", "challenge": "c", "token": "x"})
        status, _ = bot.post(text, "application/json", signed_headers(SECRET, text))
        bound = DEFAULTS.max_connections
        evicted = closed_by_server(silent + slow, at_least=IDLE + 1 - bound)
    finally:
        for sock in silent + slow:
            sock.close()
    stopped = (
        f"QUERYBOT_HTTP_MAX_CONNECTIONS={bound}: the oldest still reading evicted "
        f"({evicted} of {IDLE}); a signed request then answered HTTP {status}"
    )
    return stopped, status == 200 and evicted >= IDLE + 1 - bound


def _malformed_bodies(bot: BotProcess) -> tuple[str, bool]:
    statuses = [
        bot.post(body, kind, signed_headers(SECRET, body))[0] for body, kind in MALFORMED.values()
    ]
    text = json.dumps({"type": "url_verification", "challenge": "c", "token": "x"})
    status, _ = bot.post(text, "application/json", signed_headers(SECRET, text))
    traceback = "Traceback" in bot.log()
    counts = ", ".join(f"{statuses.count(s)} x HTTP {s}" for s in sorted(set(statuses)))
    stopped = (
        f"the payload models (bot/payloads.py): {counts}; "
        f"{'a traceback' if traceback else 'no traceback'} in the log; a signed request then "
        f"answered HTTP {status}"
    )
    return stopped, all(400 <= s < 500 for s in statuses) and status == 200 and not traceback


def main() -> int:
    rows = resource_rows()
    print("\n".join(table(rows)))
    return 0 if all(r.ok for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
