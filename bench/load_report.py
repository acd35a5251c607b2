"""Load benchmark: the real bot process (`querybot run --http`) on the demo warehouse, driven the
way Slack drives it (signed requests) against the Web API stand-in, with a scripted model.

    uv run python -m bench.load_report [--questions 100] [--threads 50] [--delay 2]
        [--workers 64] [--cold-runs 3] [--slack-latency 0] [--state-url URL] [--faults 0.1]
        [--json PATH]
    uv run python -m bench.load_report --short      # CI: one bot, 6 questions, then 8 at once

- overhead: one question at a time, the model answering at once. From the signed `app_mention`
  leaving the client to the stand-in answering the chat.update that shows the proposal, and from
  the Approve click to the chat.postMessage of the result: median and p95.
- concurrency: THREADS questions at once in as many threads, each model call taking DELAY
  seconds, for each worker pool size in WORKERS (QUERYBOT_WORKERS): every proposal posted, the
  wall time from the first mention to the last proposal against the ideal, each request's ack
  time, then every proposal approved at once; the bot's peak resident memory (VmHWM) and its
  CPU time, and the machine's 1-minute load average before and after. SLACK_LATENCY makes the
  stand-in answer each Web API call that much later, as Slack's own API does (tens to hundreds
  of milliseconds).
- FAULTS (e.g. 0.1): in the concurrency runs, that share of the model's replies fail (half a
  429 the agent's retry absorbs, half a 401 told at once) and that share of the approved queries
  run past QUERYBOT_QUERY_TIMEOUT_S (FAULT_TIMEOUT_S, DuckDB's own interrupt); a question then
  counts when it ends in a proposal or a clear error, an approval when it ends in a result or a
  clear error, and the figures say how many were told what failed.
- STATE_URL (postgresql://USER@HOST:PORT/DB, a user that may create databases): each bot keeps
  its state in PostgreSQL (QUERYBOT_STATE_URL), in a throwaway database created on that server
  and dropped afterwards; without it, in SQLite files in its data directory.
- cold start: process start to the first signed `url_verification` answered (polled every
  0.1 s), with the demo warehouse already built and without; then the first question's proposal.

Times come from one clock (time.monotonic in this process, which runs the stand-in too).
The exit status is 1 on a functional problem only: a question without its proposal or result,
or a request not acknowledged with 200 within Slack's 3 seconds. Timings never fail it.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path
from typing import Any

from bench.load_measures import cold_start, concurrency, ms, overhead
from bench.load_run import Run
from bench.load_script import FAULT_TIMEOUT_S, asked
from bot.settings import DEFAULT_WORKERS
from connectors.demo.build import ensure_demo


def full(args: argparse.Namespace, root: Path, demo: Path) -> tuple[dict[str, Any], list[str]]:
    """Each measurement on a bot process of its own."""
    out: dict[str, Any] = {"cold_start": {}, "concurrency": []}
    problems: list[str] = []
    for prebuilt in (True, False) if args.cold_runs else ():
        runs = []
        for i in range(args.cold_runs):
            name = f"cold-{'built' if prebuilt else 'fresh'}-{i}"
            figures, found = cold_start(root / name, demo if prebuilt else None, args.state_url)
            runs.append(figures)
            problems += found
        out["cold_start"]["demo built" if prebuilt else "demo not built"] = runs
    if args.questions:
        questions_, script = asked(args.warmup + args.questions)
        run = Run(root / "overhead", demo, script, state_server=args.state_url)
        try:
            run.start()
            out["overhead"] = overhead(run, questions_, args.warmup)
        finally:
            run.stop()
            problems += run.problems
    for workers in args.workers if args.threads else ():
        questions_, script = asked(args.threads, args.delay, args.faults)
        env = {"QUERYBOT_WORKERS": str(workers)}
        if args.faults:
            env["QUERYBOT_QUERY_TIMEOUT_S"] = str(FAULT_TIMEOUT_S)
        run = Run(
            root / f"concurrency-{workers}",
            demo,
            script,
            env,
            slack_latency_s=args.slack_latency,
            state_server=args.state_url,
        )
        try:
            run.start()
            out["concurrency"].append(concurrency(run, questions_, args.delay, workers))
        finally:
            run.stop()
            problems += run.problems
    return out, problems


def short(root: Path, demo: Path) -> tuple[dict[str, Any], list[str]]:
    """CI: one bot process (default settings) for a few questions one by one, then 8 at once."""
    one_by_one, script = asked(6)
    at_once, slow = asked(8, delay=0.5)
    run = Run(root / "short", demo, script + slow)
    try:
        ready = run.start()
        out = {
            "cold_start": {"demo built": [{"ready_s": round(ready, 2)}]},
            "overhead": overhead(run, one_by_one, warmup=1),
            "concurrency": [concurrency(run, at_once, 0.5, DEFAULT_WORKERS)],
        }
    finally:
        run.stop()
    return out, run.problems


def render(out: dict[str, Any]) -> str:
    lines = []
    for case, runs in out["cold_start"].items():
        ready = ", ".join(f"{r['ready_s']:.2f}" for r in runs)
        line = f"cold start ({case}): ready in {ready} s"
        if "first_proposal_ms" in runs[0]:
            first = ", ".join(f"{r['first_proposal_ms']:.0f}" for r in runs)
            line += f"; first question's proposal {first} ms"
        lines.append(line)
    o = out.get("overhead", {})
    if o:
        cpu = o["bot_cpu_ms_per_question_and_approval"]
        lines.append(f"overhead: bot CPU {cpu} ms a question and its approval")
    for key in ("mention_to_proposal", "approve_to_result", "ack"):
        f = o.get(key, {"n": 0})
        if f["n"]:
            lines.append(
                f"overhead {key}: median {f['median_ms']} ms, p95 {f['p95_ms']} ms, "
                f"max {f['max_ms']} ms (n={f['n']})"
            )
    for c in out["concurrency"]:
        lines.append(
            f"concurrency {c['threads']} threads, model {c['model_delay_s']:g} s, "
            f"Slack API {ms(c['slack_latency_s']):g} ms, "
            f"{c['workers']} workers, {c['state']} state: "
            f"{c['proposals']} proposals, {c['results']} results"
            f" ({c['told_no_proposal']} + {c['told_no_result']} told what failed); "
            f"proposals wall {c['proposals_wall_s']} s (model bound {c['ideal_model_bound_s']:g} s"
            f", x{c['wall_over_model_bound']}; pool bound {c['ideal_pool_bound_s']:g} s); "
            f"approvals wall {c['approvals_wall_s']} s; "
            f"mention ack median {c['mention_ack'].get('median_ms')} ms max "
            f"{c['mention_ack'].get('max_ms')} ms; click ack median "
            f"{c['click_ack'].get('median_ms')} ms max {c['click_ack'].get('max_ms')} ms; "
            f"bot CPU {c['bot_cpu_ms_per_question']} ms a question, "
            f"{c['bot_cpu_ms_per_approval']} ms an approval; "
            f"RSS idle {c['rss_idle_mib']} MiB, peak {c['rss_peak_mib']} MiB; "
            f"load {c['load_1min'][0]} -> {c['load_1min'][1]}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--short", action="store_true", help="CI: few questions, fails on drops only")
    p.add_argument("--questions", type=int, default=100)
    p.add_argument("--warmup", type=int, default=3, help="first questions left out of overhead")
    p.add_argument("--threads", type=int, default=50, help="0: no concurrency runs")
    p.add_argument("--delay", type=float, default=2.0, help="seconds per model call")
    p.add_argument(
        "--workers", default=str(DEFAULT_WORKERS), help="QUERYBOT_WORKERS values to try, e.g. 8,64"
    )
    p.add_argument("--cold-runs", type=int, default=3)
    p.add_argument(
        "--slack-latency", type=float, default=0, help="seconds the stand-in takes per call"
    )
    p.add_argument(
        "--state-url",
        metavar="URL",
        help="postgresql://USER@HOST:PORT/DB: keep each bot's state in a throwaway database "
        "created (and dropped) on that server, as with QUERYBOT_STATE_URL",
    )
    p.add_argument(
        "--faults",
        type=float,
        default=0,
        help="share of model replies and of queries that fail in the concurrency runs, e.g. 0.1",
    )
    p.add_argument("--json", type=Path, help="also write the figures as JSON here")
    args = p.parse_args(argv)
    args.workers = [int(w) for w in str(args.workers).split(",")]
    with tempfile.TemporaryDirectory(prefix="querybot-load-") as tmp:
        root = Path(tmp)
        demo = ensure_demo(root / "demo")
        out, problems = short(root, demo) if args.short else full(args, root, demo)
    print(render(out))
    if args.json:
        args.json.write_text(json.dumps(out, indent=2), encoding="utf-8")
    for problem in problems:
        print(f"PROBLEM: {problem}")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
