"""What a result's chart costs the bot: building one, and the approvals phase of the load
benchmark with every decision's chart counted, not only its result message.

    uv run python -m bench.chart_report [--threads 50] [--delay 2] [--workers 50] [--runs 1]
        [--refuse-native]

- one chart: the demo golden set's answers that get a chart (gold SQL run on the demo
  warehouse), each built as Slack's native block (`chart`) and drawn as the PNG fallback
  (`chart_file`), in this process: CPU time of the first PNG (importing matplotlib, building its
  font cache) and the median of each afterwards.
- approvals: the load benchmark reads the bot's CPU time when the last result message is
  posted; a chart follows its result (a native chart message, or a PNG drawn and uploaded), so
  some charts are still being made then. Here the same phase (THREADS questions at once, then
  every proposal approved at once; bench.load_measures' `concurrency`) is followed by a wait
  until the bot's log says every decision is done, and the CPU time is read again. With
  --refuse-native the stand-in refuses the native chart block, as an older workspace does: one
  refused call, then every chart a PNG.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb

from agent.evaluation.golden import load_golden
from agent.nodes.execute import plain
from agent.outcome import Answer
from bench.load_measures import concurrency, ms
from bench.load_run import Run
from bench.load_script import GOLDEN, asked
from bench.load_slack import cpu_seconds
from bot.blocks import chart
from bot.blocks.attachments import chart_file, chart_kind
from connectors.demo.build import ensure_demo

DONE = re.compile(r"Decision on proposal \w+ done")


def charted_answers(demo: Path) -> list[Answer]:
    """The demo golden set's answers that get a chart, their explanation the question."""
    found = []
    with duckdb.connect(str(demo), read_only=True) as con:
        con.execute("USE demo.main")
        for q in load_golden(GOLDEN).questions:
            if q.expect != "answer":
                continue
            cursor = con.execute(q.gold[0])
            columns = [d[0] for d in cursor.description]
            rows = [[plain(v) for v in row] for row in cursor.fetchall()]
            a = Answer(
                question=q.question, sql=q.gold[0], explanation=q.question, tables=[],
                columns=columns, rows=rows, total_rows=len(rows), capped=False, elapsed_s=0,
                connector="duckdb", approved_by="U1",
            )  # fmt: skip
            if chart_kind(a):
                found.append(a)
    return found


def cpu_ms(build: Callable[[Answer], object], answer: Answer) -> float:
    """CPU time of this thread building `answer`'s chart, in ms."""
    start = time.thread_time()
    build(answer)
    return (time.thread_time() - start) * 1000


def one_chart(demo: Path, repeats: int = 5) -> dict[str, Any]:
    """Native block and PNG, each answer `repeats` times; the first PNG on its own."""
    answers = charted_answers(demo)
    first_png = cpu_ms(chart_file, answers[0])
    native = [cpu_ms(chart, a) for a in answers for _ in range(repeats)]
    png = [cpu_ms(chart_file, a) for a in answers for _ in range(repeats)]
    kinds: dict[str, int] = {}
    for a in answers:
        message = chart(a)
        kind = message.blocks[0]["chart"]["type"] if message else "png"
        kinds[kind] = kinds.get(kind, 0) + 1
    return {
        "answers": len(answers),
        "charts": kinds,
        "native_ms_median": round(statistics.median(native), 2),
        "native_ms_max": round(max(native), 2),
        "png_first_ms": round(first_png, 1),
        "png_ms_median": round(statistics.median(png), 1),
        "png_ms_max": round(max(png), 1),
    }


def approvals(
    root: Path, demo: Path, threads: int, delay: float, workers: int, *, refuse: bool
) -> dict[str, Any]:
    """The load benchmark's concurrency phase, then the bot's CPU once every decision is done."""
    questions, script = asked(threads, delay)
    run = Run(root, demo, script, {"QUERYBOT_WORKERS": str(workers)})
    if refuse:
        run.slack.refuse_block_type("data_visualization")
    try:
        run.start()
        figures = concurrency(run, questions, delay, workers)
        cpu_results = cpu_seconds(run.bot.pid)
        deadline = time.monotonic() + 120
        while len(DONE.findall(run.bot.log())) < figures["proposals"]:
            if time.monotonic() > deadline:
                run.problems.append("not every decision finished within 120 s")
                break
            time.sleep(0.1)
        cpu_done = cpu_seconds(run.bot.pid)
        messages = list(run.slack.messages.values())
        native: dict[str, int] = {}
        for m in messages:
            for b in m.blocks:
                if b.get("type") == "data_visualization":
                    native[b["chart"]["type"]] = native.get(b["chart"]["type"], 0) + 1
        pngs = sum(1 for u in run.slack.uploads if u.filename == "chart.png")
    finally:
        run.stop()
    approved = max(1, figures["results"])
    per_result = figures["bot_cpu_ms_per_approval"]
    return {
        "approvals": figures["results"],
        "approvals_wall_s": figures["approvals_wall_s"],
        "bot_cpu_ms_per_approval_at_results": per_result,
        "bot_cpu_ms_per_approval_all_done": round(
            per_result + ms((cpu_done - cpu_results) / approved), 1
        ),
        "native_charts": native,
        "png_charts": pngs,
        "problems": run.problems,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=50)
    parser.add_argument("--delay", type=float, default=2.0)
    parser.add_argument("--workers", type=int, default=50)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument(
        "--refuse-native", action="store_true", help="the stand-in refuses native charts"
    )
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="querybot-chart-bench-") as tmp:
        root = Path(tmp)
        demo = ensure_demo(root / "demo")
        single = one_chart(demo)
        runs = [
            approvals(
                root / f"approvals-{i}",
                demo,
                args.threads,
                args.delay,
                args.workers,
                refuse=args.refuse_native,
            )
            for i in range(args.runs)
        ]
    out = {"one_chart": single, "approvals": runs}
    print(
        f"one chart ({single['answers']} demo answers: {single['charts']}): native block "
        f"{single['native_ms_median']} ms CPU (max {single['native_ms_max']}); PNG "
        f"{single['png_ms_median']} ms (max {single['png_ms_max']}), the first "
        f"{single['png_first_ms']} ms"
    )
    for r in runs:
        print(
            f"{r['approvals']} approvals at once ({args.workers} workers): wall "
            f"{r['approvals_wall_s']} s; bot CPU an approval "
            f"{r['bot_cpu_ms_per_approval_at_results']} ms at the last result, "
            f"{r['bot_cpu_ms_per_approval_all_done']} ms once every decision was done; "
            f"charts: native {r['native_charts']}, {r['png_charts']} PNG"
        )
        for problem in r["problems"]:
            print(f"PROBLEM: {problem}")
    if args.json:
        args.json.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    return 1 if any(r["problems"] for r in runs) else 0


if __name__ == "__main__":
    raise SystemExit(main())
