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
import math
import os
import shutil
import statistics
import tempfile
import time
from collections.abc import Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from agent.evaluation.golden import load_golden
from agent.evaluation.report import percentile
from bench.load_slack import (
    ACK_LIMIT_S,
    SECRET,
    BotProcess,
    Posted,
    Sent,
    TimedStandin,
    all_at_once,
    approve,
    ask,
    cpu_seconds,
    is_proposal,
    is_result,
    payloads,
    peak_rss_mib,
    scratch_state,
    shown_at,
)
from bot.settings import DEFAULT_WORKERS
from connectors.demo.build import ensure_demo

GOLDEN = Path(__file__).resolve().parents[1] / "evals" / "demo.yaml"
#: --faults: a rate limit the agent's retry absorbs, and a bad key it tells at once.
PASSING_FAULT = {"__error__": "Resource has been exhausted (e.g. check quota).", "status": 429}
PERMANENT_FAULT = {"__error__": "API key not valid. Please pass a valid API key.", "status": 401}
#: --faults: a query that never ends on the demo warehouse, stopped at FAULT_TIMEOUT_S.
NEVER_ENDS = (
    "SELECT COUNT(*) AS n FROM demo.main.order_items AS a"
    " CROSS JOIN demo.main.order_items AS b CROSS JOIN demo.main.order_items AS c"
)
FAULT_TIMEOUT_S = 2


def questions() -> list[tuple[str, str]]:
    """(question, gold SQL) of the demo golden set's answerable first questions: realistic
    questions whose scripted reply the gate accepts as it is (one model call each)."""
    golden = load_golden(GOLDEN)
    return [
        (q.question, q.gold[0])
        for q in golden.questions
        if q.expect == "answer" and not q.follow_up_of
    ]


def sql_line(sql: str, delay: float = 0) -> dict[str, Any]:
    line: dict[str, Any] = {"kind": "sql", "explanation": "Answers the question.", "sql": sql}
    if delay:
        line["__delay__"] = delay
    return line


def ms(seconds: float) -> float:
    return round(seconds * 1000, 1)


def spread_ms(values: Sequence[float]) -> dict[str, float]:
    if not values:
        return {"n": 0}
    return {
        "n": len(values),
        "median_ms": ms(statistics.median(values)),
        "p95_ms": ms(percentile(values, 0.95)),
        "max_ms": ms(max(values)),
    }


class Run:
    """One bot process on its own stand-in and data directory (and, with `state_server`, its
    own PostgreSQL state database); collects functional problems."""

    def __init__(
        self,
        work: Path,
        demo: Path | None,
        script: list[dict[str, Any]],
        env: dict[str, str] | None = None,
        *,
        slack_latency_s: float = 0,
        state_server: str | None = None,
    ) -> None:
        work.mkdir(parents=True)
        if demo is not None:
            shutil.copy(demo, work / demo.name)
        path = work / "script.jsonl"
        path.write_text("".join(json.dumps(line) + "\n" for line in script), encoding="utf-8")
        self._state = ExitStack()
        env = dict(env or {})
        if state_server:
            env["QUERYBOT_STATE_URL"] = self._state.enter_context(scratch_state(state_server))
        self.state = "postgresql" if state_server else "sqlite"
        self.slack = TimedStandin(slack_latency_s)
        self.bot = VerifiedBot(slack=self.slack, data_dir=work, script=path, env=env)
        self.channel = payloads.new_channel()
        self.problems: list[str] = []

    def start(self) -> float:
        """Start the stand-in and the bot; seconds until the bot answered url_verification."""
        self.slack.start()
        started = time.monotonic()
        self.bot.start(timeout=120)
        return time.monotonic() - started

    def stop(self) -> None:
        try:
            self.bot.stop()
        finally:
            self.slack.stop()
            self._state.close()
        self.problems += [
            f"Slack would refuse {c.method}: {c.answer.get('error')}" for c in self.slack.refused
        ]

    def check_acks(self, what: str, sent: Sequence[Sent]) -> None:
        late = [s for s in sent if not s.acked]
        if late:
            worst = max(late, key=lambda s: s.ack_s)
            self.problems.append(
                f"{len(late)} of {len(sent)} {what} not acked with 200 within {ACK_LIMIT_S:g} s "
                f"(e.g. status {worst.status} after {worst.ack_s:.2f} s)"
            )

    def wait(self, roots: list[str], check: Any, what: str, timeout: float) -> dict[str, Any]:
        found = self.slack.wait_threads(self.channel, roots, check, timeout=timeout)
        if len(found) < len(roots):
            self.problems.append(
                f"{len(roots) - len(found)} of {len(roots)} questions got no {what}"
            )
        return found


class VerifiedBot(BotProcess):
    """Ready when a signed `url_verification` is answered with its challenge (as Slack checks a
    Request URL), not merely when the port accepts connections."""

    def _ready(self, connections_before: int) -> bool:
        from tests.support.slack_payloads import signed_headers

        body = json.dumps({"token": "x", "challenge": "ready?", "type": "url_verification"})
        try:
            status, text = self.post(body, "application/json", signed_headers(SECRET, body))
        except OSError:
            return False
        return status == 200 and "ready?" in text

    @property
    def pid(self) -> int:
        assert self._proc is not None
        return self._proc.pid


def asked(
    count: int, delay: float = 0, faults: float = 0
) -> tuple[list[str], list[dict[str, Any]]]:
    """`count` questions of the golden set (again from the top when more are wanted) and the
    scripted model's replies to them, each taking `delay` seconds; with `faults`, that share of
    the replies fails (alternately PASSING_FAULT, which takes one more reply, and
    PERMANENT_FAULT) and that share of the SQL is NEVER_ENDS."""
    picked = [questions()[i % len(questions())] for i in range(count)]
    every = round(1 / faults) if faults else 0
    script: list[dict[str, Any]] = []
    for i, (_, sql) in enumerate(picked):
        if every and i % every == every // 2:
            sql = NEVER_ENDS
        if every and i % every == 0:
            if i // every % 2:
                script.append(PERMANENT_FAULT)
                continue
            script.append(PASSING_FAULT)  # the retry takes the next line
        script.append(sql_line(sql, delay))
    return [q for q, _ in picked], script


def is_failure(message: Posted) -> bool:
    """A message telling the thread what failed (bot.blocks.failure)."""
    return any(text.startswith(":warning:") for text in message.all_text().splitlines())


def overhead(run: Run, asked: list[str], warmup: int) -> dict[str, Any]:
    """Ask one question at a time, approve its proposal, wait for the result."""
    proposal_s: list[float] = []
    result_s: list[float] = []
    sent: list[Sent] = []
    cpu_start = 0.0
    for i, question in enumerate(asked):
        if i == warmup:
            cpu_start = cpu_seconds(run.bot.pid)
        root, mention = ask(run.bot, run.channel, question)
        proposal = run.wait([root], is_proposal, "proposal", 30).get(root)
        if proposal is None:
            continue
        click = approve(run.bot, proposal)
        result = run.wait([root], is_result, "result", 30).get(root)
        sent += [mention, click]
        if result is None or i < warmup:
            continue
        proposal_s.append(shown_at(run.slack, proposal, is_proposal) - mention.at)
        result_s.append(shown_at(run.slack, result, is_result) - click.at)
    cpu = cpu_seconds(run.bot.pid) - cpu_start
    run.check_acks("requests", sent)
    return {
        "questions": len(asked) - warmup,
        "bot_cpu_ms_per_question_and_approval": ms(cpu / max(1, len(asked) - warmup)),
        "warmup": warmup,
        "mention_to_proposal": spread_ms(proposal_s),
        "approve_to_result": spread_ms(result_s),
        "ack": spread_ms([s.ack_s for s in sent]),
    }


def concurrency(run: Run, asked: list[str], delay: float, workers: int) -> dict[str, Any]:
    """Ask every question at once, each in its own thread, then approve every proposal at once.
    Each scripted reply takes `delay` seconds; the bot has `workers` workers."""
    threads = len(asked)
    load_before = os.getloadavg()[0]
    idle_rss = peak_rss_mib(run.bot.pid)[1]
    cpu_start = cpu_seconds(run.bot.pid)
    mentions = all_at_once([lambda q=q: ask(run.bot, run.channel, q) for q in asked])
    sent = dict(mentions)
    first = min(s.at for s in sent.values())
    pool_bound = delay * math.ceil(threads / min(workers, threads))
    ended = run.wait(
        list(sent), lambda m: is_proposal(m) or is_failure(m), "proposal", 60 + 2 * pool_bound
    )
    proposals = {root: m for root, m in ended.items() if is_proposal(m)}
    shown = {root: shown_at(run.slack, p, is_proposal) for root, p in proposals.items()}
    cpu_asked = cpu_seconds(run.bot.pid)
    clicks = all_at_once([lambda p=p: approve(run.bot, p) for p in proposals.values()])
    click_first = min((c.at for c in clicks), default=time.monotonic())
    ran = run.wait(list(proposals), lambda m: is_result(m) or is_failure(m), "result", 60)
    results = {root: m for root, m in ran.items() if is_result(m)}
    results_at = [shown_at(run.slack, r, is_result) for r in results.values()]
    cpu_end = cpu_seconds(run.bot.pid)
    run.check_acks("mentions", list(sent.values()))
    run.check_acks("Approve clicks", clicks)
    peak_rss, _ = peak_rss_mib(run.bot.pid)
    wall = max(shown.values()) - first if shown else math.nan
    return {
        "threads": threads,
        "slack_latency_s": run.slack.latency_s,
        "model_delay_s": delay,
        "workers": workers,
        "state": run.state,
        "proposals": len(proposals),
        "results": len(results),
        "told_no_proposal": len(ended) - len(proposals),
        "told_no_result": len(ran) - len(results),
        "proposals_wall_s": round(wall, 2),
        "ideal_model_bound_s": delay,
        "ideal_pool_bound_s": pool_bound,
        "wall_over_model_bound": round(wall / delay, 2),
        "mention_to_proposal": spread_ms([shown[r] - sent[r].at for r in shown]),
        "mention_ack": spread_ms([s.ack_s for s in sent.values()]),
        "approvals_wall_s": round(max(results_at) - click_first, 2) if results_at else None,
        "click_ack": spread_ms([c.ack_s for c in clicks]),
        # the bot's own CPU time per question, whatever else the machine is doing
        "bot_cpu_ms_per_question": ms((cpu_asked - cpu_start) / threads),
        "bot_cpu_ms_per_approval": ms((cpu_end - cpu_asked) / max(1, len(clicks))),
        "rss_idle_mib": round(idle_rss, 1),
        "rss_peak_mib": round(peak_rss, 1),
        "load_1min": [round(load_before, 2), round(os.getloadavg()[0], 2)],
    }


def cold_start(
    work: Path, demo: Path | None, state_server: str | None
) -> tuple[dict[str, Any], list[str]]:
    """Start a bot; then its first question, from the mention to the proposal."""
    question, sql = questions()[0]
    run = Run(work, demo, [sql_line(sql)], state_server=state_server)
    try:
        ready = run.start()
        root, mention = ask(run.bot, run.channel, question)
        proposal = run.wait([root], is_proposal, "proposal", 60).get(root)
        first = shown_at(run.slack, proposal, is_proposal) - mention.at if proposal else math.nan
        run.check_acks("requests", [mention])
    finally:
        run.stop()
    return {"ready_s": round(ready, 2), "first_proposal_ms": ms(first)}, run.problems


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
