"""The load benchmark's measurements on a running bot: overhead (one question at a time),
concurrency (every question at once, then every approval) and cold start; each returns its
figures, in milliseconds where it times."""

from __future__ import annotations

import math
import os
import statistics
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agent.evaluation.report import percentile
from bench.load_run import Run
from bench.load_script import questions, sql_line
from bench.load_slack import (
    Posted,
    Sent,
    all_at_once,
    approve,
    ask,
    cpu_seconds,
    is_proposal,
    is_result,
    peak_rss_mib,
    shown_at,
)


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
