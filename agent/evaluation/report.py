"""The evaluation report (JSON), its readable summary, and the difference between two reports."""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Sequence
from typing import Any

from agent.evaluation.runner import QuestionResult
from connectors.units import counted


def percentile(values: Sequence[float], q: float) -> float:
    """The nearest-rank percentile (0 for no values)."""
    if not values:
        return 0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * len(ordered) + 0.5) - 1))]


def _spread(values: Sequence[float]) -> dict[str, float]:
    if not values:
        return {"median": 0, "p95": 0, "total": 0}
    return {
        "median": round(statistics.median(values), 3),
        "p95": round(percentile(values, 0.95), 3),
        "total": round(sum(values), 3),
    }


def _accuracy(results: Sequence[QuestionResult]) -> dict[str, Any]:
    scored = [r for r in results if r.status != "gold_error"]
    correct = sum(r.status == "pass" for r in scored)
    return {
        "questions": len(scored),
        "correct": correct,
        "accuracy": round(correct / len(scored), 4) if scored else 0.0,
    }


def _per_question(results: Sequence[QuestionResult]) -> dict[str, Any]:
    """Mean model calls and tokens (input + output) per question, and calls by graph node."""
    count = len(results) or 1
    nodes: dict[str, dict[str, int]] = {}
    for r in results:
        for node, used in r.nodes.items():
            total = nodes.setdefault(node, {"calls": 0, "input_tokens": 0, "output_tokens": 0})
            for key in total:
                total[key] += used.get(key, 0)
    return {
        "calls_per_question": round(sum(r.model_calls for r in results) / count, 2),
        "tokens_per_question": round(
            sum(r.input_tokens + r.output_tokens for r in results) / count, 1
        ),
        "by_node": dict(sorted(nodes.items())),
    }


def _fix_counts(results: Sequence[QuestionResult]) -> dict[str, int]:
    """How many questions each of the gate's fixes fired in, most frequent first."""
    counts = Counter(fix for r in results for fix in set(r.gate_fixes))
    return dict(counts.most_common())


def build_report(results: Sequence[QuestionResult], meta: dict[str, Any]) -> dict[str, Any]:
    """The machine-readable report: summary figures, failures, and every question's record."""
    categories = sorted({r.category for r in results})
    by_expect = {e: [r for r in results if r.expect == e] for e in ("clarify", "decline")}
    answered = [r for r in results if r.expect == "answer" and r.status == "pass"]
    summary = {
        **_accuracy(results),
        "exact": sum(r.match == "exact" for r in answered),
        "subset": sum(r.match == "subset" for r in answered),
        "rightly_declined": sum(r.status == "pass" for r in by_expect["decline"]),
        "unanswerable": len(by_expect["decline"]),
        "rightly_clarified": sum(r.status == "pass" for r in by_expect["clarify"]),
        "ambiguous": len(by_expect["clarify"]),
        "gold_errors": sum(r.status == "gold_error" for r in results),
        "questions_repaired": sum(r.repairs > 0 for r in results),
        "repairs": sum(r.repairs for r in results),
        # written afresh (the redraft strategy), and how many of those ended right
        "questions_redrafted": sum("redraft" in r.steps for r in results),
        "redrafted_right": sum("redraft" in r.steps and r.status == "pass" for r in results),
        # the gate's deterministic fixes (the row cap excepted): questions each fix fired in
        "questions_gate_fixed": sum(bool(r.gate_fixes) for r in results),
        "gate_fixed_right": sum(bool(r.gate_fixes) and r.status == "pass" for r in results),
        "gate_fixes": _fix_counts(results),
        "model_calls": _spread([r.model_calls for r in results]),
        "input_tokens": _spread([r.input_tokens for r in results]),
        "output_tokens": _spread([r.output_tokens for r in results]),
        "latency_s": _spread([r.latency_s for r in results]),
        **_per_question(results),
    }
    governed = [r for r in results if r.kind.startswith("governed")]
    if governed or any(r.kind for r in results):
        # where the warehouse has metric definitions: how many answers were governed, and right
        summary["governed"] = len(governed)
        summary["governed_right"] = sum(r.status == "pass" for r in governed)
    return {
        "meta": meta,
        "summary": summary,
        "by_category": {c: _accuracy([r for r in results if r.category == c]) for c in categories},
        "failures": [
            {
                k: r.to_dict()[k]
                for k in ("id", "category", "question", "reason", "sql", "refused_sql", "message")
            }
            for r in results
            if r.status != "pass"
        ],
        "questions": [r.to_dict() for r in results],
    }


def _pct(value: float) -> str:
    return f"{100 * value:.1f}%"


def _outcomes(s: dict[str, Any]) -> str:
    """The accuracy, repairs and gold errors lines of a report's summary `s`."""
    if not s["questions"]:
        accuracy = "Accuracy: no question was scored"
    else:
        accuracy = (
            f"Accuracy: {_pct(s['accuracy'])} ({s['correct']}/{counted(s['questions'], 'question')}"
            f"; {s['exact']} exact, {counted(s['subset'], 'subset match', 'subset matches')})"
        )
    lines = [accuracy]
    expected = [
        f"{verb}: {right} of {counted(total, f'{kind} question')}"
        for verb, right, total, kind in (
            ("rightly declined", s["rightly_declined"], s["unanswerable"], "unanswerable"),
            ("rightly clarified", s["rightly_clarified"], s["ambiguous"], "ambiguous"),
        )
        if total
    ]
    if expected:
        joined = "; ".join(expected)
        lines.append(joined[0].upper() + joined[1:])
    if s["repairs"]:
        lines.append(
            f"Repairs: {counted(s['repairs'], 'repair')} in "
            f"{counted(s['questions_repaired'], 'question')}"
        )
    elif s["questions"]:
        lines.append("Repairs: none (no question needed a second draft)")
    if redrafted := s.get("questions_redrafted"):
        lines.append(
            f"Written afresh (redraft): {counted(redrafted, 'question')}, "
            f"{s['redrafted_right']} of them right"
        )
    if fixed := s.get("questions_gate_fixed"):
        lines.append(
            f"Fixed by the gate (besides the row cap): {counted(fixed, 'question')}, "
            f"{s['gate_fixed_right']} of them right ("
            + "; ".join(f"{fix}: {n}" for fix, n in s["gate_fixes"].items())
            + ")"
        )
    if s["gold_errors"]:
        lines.append(f"Gold SQL errors: {s['gold_errors']} (not scored)")
    return "\n".join(lines)


def render(report: dict[str, Any], *, failures: int = 20) -> str:
    """The report as text for a terminal or a pull request."""
    s = report["summary"]
    if not report["questions"]:
        return "No questions ran: there is nothing to report."
    lines = [_outcomes(s)]
    if "governed" in s:
        lines.append(
            f"governed (metric queries compiled by MetricFlow): {s['governed']} of "
            f"{counted(len(report['questions']), 'question')}, {s['governed_right']} right"
        )
    for name, unit in (
        ("model_calls", ""),
        ("input_tokens", ""),
        ("output_tokens", ""),
        ("latency_s", " s"),
    ):
        v = s[name]
        lines.append(
            f"{name.replace('_', ' ')} per question: median {v['median']}{unit}, "
            f"p95 {v['p95']}{unit} (total {v['total']}{unit})"
        )
    lines.append(
        f"per question: {counted(s['calls_per_question'], 'model call')}, "
        f"{s['tokens_per_question']:,.0f} tokens"
        + (
            " (by node: "
            + ", ".join(f"{n} {counted(v['calls'], 'call')}" for n, v in s["by_node"].items())
            + ")"
            if s.get("by_node")
            else ""
        )
    )
    lines.append("\nBy category:")
    for category, acc in report["by_category"].items():
        if not acc["questions"]:
            lines.append(f"  {category:<14} {'-':>6}  (no question scored)")
            continue
        lines.append(
            f"  {category:<14} {_pct(acc['accuracy']):>6}  ({acc['correct']}/{acc['questions']})"
        )
    shown = report["failures"][:failures]
    if shown:
        lines.append(f"\nFailures ({len(report['failures'])}):")
    for f in shown:
        lines.append(f"  [{f['id']}] {f['question']}\n    why: {f['reason']}")
        if f["sql"]:
            lines.append("    sql: " + " ".join(f["sql"].split())[:300])
        elif f.get("refused_sql"):
            lines.append("    last draft: " + " ".join(f["refused_sql"].split())[:300])
    if len(report["failures"]) > len(shown):
        lines.append(f"  ... and {len(report['failures']) - len(shown)} more in the JSON report")
    return "\n".join(lines)


def diff(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """What changed from `old` to `new`: accuracy, costs, and the questions fixed or broken."""
    before = {q["id"]: q for q in old["questions"]}
    after = {q["id"]: q for q in new["questions"]}
    common = [i for i in after if i in before]
    o, n = old["summary"], new["summary"]
    return {
        "accuracy": {"old": o["accuracy"], "new": n["accuracy"]},
        "fixed": [i for i in common if before[i]["status"] != "pass" == after[i]["status"]],
        "broken": [i for i in common if before[i]["status"] == "pass" != after[i]["status"]],
        "added": [i for i in after if i not in before],
        "removed": [i for i in before if i not in after],
        "by_category": {
            c: {
                "old": old["by_category"].get(c, {}).get("accuracy"),
                "new": new["by_category"].get(c, {}).get("accuracy"),
            }
            for c in sorted({*old["by_category"], *new["by_category"]})
        },
        "median": {
            k: {"old": o[k]["median"], "new": n[k]["median"]}
            for k in ("model_calls", "input_tokens", "output_tokens", "latency_s")
        },
        "repairs": {"old": o["repairs"], "new": n["repairs"]},
    }


def render_diff(change: dict[str, Any]) -> str:
    a = change["accuracy"]
    lines = [f"Accuracy: {_pct(a['old'])} -> {_pct(a['new'])}"]
    for c, v in change["by_category"].items():
        if v["old"] != v["new"]:
            old = "-" if v["old"] is None else _pct(v["old"])
            new = "-" if v["new"] is None else _pct(v["new"])
            lines.append(f"  {c}: {old} -> {new}")
    for key, label in (("fixed", "Better (now right)"), ("broken", "Worse (now wrong)")):
        lines.append(f"{label}: {', '.join(change[key]) or 'none'}")
    for key in ("added", "removed"):
        if change[key]:
            lines.append(f"{key.capitalize()}: {', '.join(change[key])}")
    for k, v in change["median"].items():
        lines.append(f"median {k.replace('_', ' ')}: {v['old']} -> {v['new']}")
    lines.append(f"repairs: {change['repairs']['old']} -> {change['repairs']['new']}")
    return "\n".join(lines)


def comparison(configurations: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per configuration (strategies -> its report): accuracy and what it cost."""
    rows = []
    for name, report in configurations.items():
        s = report["summary"]
        rows.append(
            {
                "strategies": name,
                "accuracy": s["accuracy"],
                "correct": s["correct"],
                "questions": s["questions"],
                "calls_per_question": s["calls_per_question"],
                "tokens_per_question": s["tokens_per_question"],
                "model_calls": s["model_calls"]["total"],
                "tokens": s["input_tokens"]["total"] + s["output_tokens"]["total"],
                "repairs": s["repairs"],
                "latency_s_median": s["latency_s"]["median"],
            }
        )
    return rows


def render_comparison(rows: list[dict[str, Any]]) -> str:
    """The configurations side by side, as a Markdown table."""
    lines = [
        "| Strategies | Accuracy | Calls/question | Tokens/question | Calls (total) | "
        "Tokens (total) | Repairs |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['strategies']} | {_pct(r['accuracy'])} ({r['correct']}/{r['questions']}) | "
            f"{r['calls_per_question']} | {r['tokens_per_question']:,.0f} | "
            f"{r['model_calls']:,.0f} | {r['tokens']:,.0f} | {r['repairs']} |"
        )
    return "\n".join(lines)
