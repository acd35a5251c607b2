"""`querybot eval`: measure answer quality on a golden set, or export approvals as one.

    querybot eval evals/demo.yaml [--warehouse demo] [--out report.json] [--compare old.json]
    querybot eval evals/demo.yaml --min-accuracy 80%   (exit 1 below it: a team's CI gate)
    querybot eval evals/demo.yaml --baseline [--strategies default]   (side by side)
    querybot eval --defog [--corpora DIR] [--cache DIR] [--databases academic,restaurants]
    querybot eval --defog --sample 15 --categories unanswerable,ratio   (only those categories)
    querybot eval --export-examples PATH
    querybot eval --from-feedback PATH   (only the answers verified with a thumbs up in Slack)

The model is QUERYBOT_MODEL (with its key, as for the bot); every proposal is approved
automatically and runs on a read-only connection to the warehouse.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import sys
from dataclasses import dataclass, replace
from fractions import Fraction
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel

from agent.context import AgentLimits, Strategies
from agent.evaluation import defog
from agent.evaluation.baseline import NaiveBaseline
from agent.evaluation.golden import GoldenQuestion, GoldenSet, dump_golden, load_golden
from agent.evaluation.report import (
    build_report,
    comparison,
    diff,
    render,
    render_comparison,
    render_diff,
)
from agent.evaluation.runner import QuestionResult, empty_gold, evaluation_agent, run_golden
from agent.memory.examples import ExampleStore
from agent.model.providers import load_model
from agent.semantic.artifacts import DbtProjectError, ProjectArtifacts
from agent.strategies.options import StrategiesError, describe, parse_strategies
from bot.config import deployment_config, load_config
from bot.settings import Settings
from bot.wiring import warehouse_file
from connectors import open_connector
from connectors.base import Connector
from connectors.duckdb.connector import DuckDBConnector
from connectors.units import counted

#: The name of the naive baseline's configuration in a report.
BASELINE = "naive baseline"


def run(args: argparse.Namespace, settings: Settings) -> int:
    if (
        args.corpora is None
    ):  # resolved here: the parser (bot.commands.evaluate_arguments) imports no defog
        args.corpora = defog.CORPORA
    if args.cache is None:  # what querybot builds goes to its data directory, not the cwd
        args.cache = settings.data_dir / "defog"
    if args.export_examples:
        return export_examples(settings, args.export_examples, args.warehouse)
    if args.from_feedback:
        return export_examples(settings, args.from_feedback, args.warehouse, verified=True)
    if not args.defog and not args.golden:
        print(
            "querybot eval: name a golden set, or use --defog, --export-examples or "
            "--from-feedback",
            file=sys.stderr,
        )
        return 2
    if args.out is not None and args.out.is_dir():  # said now, not after the whole run
        print(
            f"querybot eval: --out {args.out} is a folder: name the report's file, "
            f"for example --out {args.out / 'report.json'}",
            file=sys.stderr,
        )
        return 2
    golden = None if args.defog else _selected(load_golden(args.golden), args)
    specs = args.strategies or [settings.strategies or "default"]
    try:
        configurations = {spec: parse_strategies(spec) for spec in specs}
    except StrategiesError as exc:
        print(f"querybot eval: --strategies: {exc}", file=sys.stderr)
        return 2
    settings.require(*settings.model_secrets())
    # as the bot does (bot.wiring): profile column values unless told not to (BigQuery bills it)
    limits = AgentLimits(
        row_limit=settings.row_limit,
        query_timeout_s=settings.query_timeout_s,
        max_attempts=settings.max_repairs,
        model_backoff_s=settings.model_backoff_s,
        profile_values=settings.profile_values != "off",
    )
    # one model for every configuration: a scripted one replays its replies across them in order
    model = load_model(settings.model, timeout_s=settings.model_timeout_s)
    check_model = (
        load_model(settings.check_model, timeout_s=settings.model_timeout_s)
        if settings.check_model
        else None
    )
    reports = {}
    runs = [(name, Setup(model, check_model, limits, s)) for name, s in configurations.items()]
    if args.baseline:
        runs.insert(0, (BASELINE, Setup(model, None, limits, Strategies(), baseline=True)))
    for name, setup in runs:
        try:
            results, meta = _evaluate(args, settings, setup, golden)
        except DbtProjectError as exc:
            print(f"querybot eval: dbt project: {exc}", file=sys.stderr)
            return 2
        described = BASELINE if setup.baseline else describe(setup.strategies)
        reports[name] = build_report(
            results, {**meta, "model": settings.model, "strategies": described}
        )
    if not _report(args, settings, reports):
        return 2
    if args.min_accuracy is None:
        return 0
    gated = {name: r for name, r in reports.items() if name != BASELINE}
    named = len(gated) > 1
    verdicts = [_meets(name if named else "", r, args.min_accuracy) for name, r in gated.items()]
    return 0 if all(verdicts) else 1


def _meets(name: str, report: dict[str, Any], threshold: Fraction) -> bool:
    """Whether one configuration's accuracy reaches `--min-accuracy`, said on stderr with the
    configuration's `name` when there are several (a set where no question was scored measured
    nothing, and does not)."""
    s = report["summary"]
    of = f" of --strategies {name}" if name else ""
    wanted = f"--min-accuracy {float(threshold):.1%}"
    if not s["questions"]:
        said = f"no question was scored, so the accuracy{of} cannot meet {wanted}: FAILED"
        print(f"querybot eval: {said}", file=sys.stderr)
        return False
    passed = Fraction(s["correct"], s["questions"]) >= threshold
    accuracy = f"{s['correct'] / s['questions']:.1%} ({s['correct']}/{s['questions']})"
    verdict = f"meets {wanted}: passed" if passed else f"is below {wanted}: FAILED"
    print(f"querybot eval: accuracy{of} {accuracy} {verdict}", file=sys.stderr)
    return passed


def _evaluate(
    args: argparse.Namespace, settings: Settings, setup: Setup, golden: GoldenSet | None
) -> tuple[list[QuestionResult], dict[str, str]]:
    """One configuration's results, on the golden set's warehouse or on defog's databases when
    there is no golden set, and where they ran (for the report's meta). With the warehouse's
    dbt project unless `--without-dbt` (raises DbtProjectError when it cannot be read)."""
    if golden is None:
        return _defog(args, replace(setup, today=settings.today))
    warehouse, spec, dbt_project = _warehouse(args.warehouse or golden.warehouse, settings)
    if args.without_dbt:
        dbt_project = None
    # raises DbtProjectError before anything opens
    project = ProjectArtifacts(dbt_project) if dbt_project else None
    # the set's pinned day wins: the demo is built for it, the model is told it
    today = golden.today or settings.today
    setup = replace(setup, today=today)
    connector = open_connector(
        spec, data_dir=settings.data_dir, limits=settings.limits, settings=settings, today=today
    )
    meta = {"golden": str(args.golden), "warehouse": warehouse}
    if today:
        meta["today"] = today.isoformat()
    if empty := empty_gold(golden, connector, setup.limits):
        meta["empty_gold"] = ", ".join(empty)
        print(
            f"querybot eval: warning: the gold answer is empty for {', '.join(empty)}; an empty "
            "answer matches it (pin the set's `today:` to a day its data covers)",
            file=sys.stderr,
        )
    if connector.name in ("bigquery", "snowflake") and settings.profile_values == "auto":
        setup = replace(setup, limits=replace(setup.limits, profile_values=False))
    results = _run_on(connector, golden, replace(setup, project=project), "")
    if dbt_project:
        meta["dbt_project"] = str(dbt_project)
    return results, meta


def _report(
    args: argparse.Namespace, settings: Settings, reports: dict[str, dict[str, Any]]
) -> bool:
    """Print the report (a comparison when several configurations ran), write it to `--out`
    (and nothing beside it), and print how it differs from `--compare`'s. False when the report
    could not be written."""
    if len(reports) == 1:
        (report,) = reports.values()
        print(render(report))
    else:
        rows = comparison(reports)
        for name, one in reports.items():
            print(f"== Strategies: {name} ==\n{render(one)}\n")
        print("Configurations compared:\n" + render_comparison(rows))
        report = {"meta": {"model": settings.model}, "configurations": reports, "comparison": rows}
    if args.out:
        try:
            args.out.parent.mkdir(parents=True, exist_ok=True)
            args.out.write_text(json.dumps(report, indent=2, default=str), encoding="utf-8")
        except OSError as exc:
            print(
                f"querybot eval: the report could not be written to {args.out} "
                f"({exc.strerror or exc}): name a file in a folder you can write",
                file=sys.stderr,
            )
            return False
        print(f"\nReport written to {args.out}", file=sys.stderr)
    if args.compare and "configurations" not in report:
        old = json.loads(args.compare.read_text(encoding="utf-8"))
        print("\nCompared with " + str(args.compare) + ":\n" + render_diff(diff(old, report)))
    return True


@dataclass(frozen=True)
class Setup:
    """What one configuration of the evaluation runs with."""

    model: BaseChatModel
    check_model: BaseChatModel | None
    limits: AgentLimits
    strategies: Strategies
    #: Run the naive baseline (agent.evaluation.baseline) instead of the bot's graph.
    baseline: bool = False
    #: The warehouse's dbt project (metric questions get governed answers), or None.
    project: ProjectArtifacts | None = None
    #: The day the questions are asked on (the set's `today:`, else QUERYBOT_TODAY), or None.
    today: dt.date | None = None


def _run_on(
    connector: Connector, golden: GoldenSet, setup: Setup, database: str
) -> list[QuestionResult]:
    """Evaluate `golden` on `connector`, then close it."""
    if setup.baseline:
        baseline = NaiveBaseline(
            connector, setup.model, limits=setup.limits, pinned_today=setup.today
        )
        try:
            return run_golden(golden, baseline, database=database, progress=_progress)
        finally:
            connector.close()
    agent = evaluation_agent(
        connector,
        setup.model,
        limits=setup.limits,
        strategies=setup.strategies,
        check_model=setup.check_model,
        project=setup.project,
        today=setup.today,
    )
    try:
        return run_golden(golden, agent, database=database, progress=_progress)
    finally:
        agent.close()  # once a background catalog refresh (value profiling) has ended


def _warehouse(warehouse: str | None, settings: Settings) -> tuple[str, str, Path | None]:
    """(name for the report, spec, dbt project) of `warehouse`: a spec (with
    QUERYBOT_DBT_PROJECT), or the name of a QUERYBOT_CONFIG warehouse (with its `dbt_project`);
    with none named, the bot's (the config's default, else QUERYBOT_WAREHOUSE)."""
    if settings.config_file is None:
        spec = warehouse or settings.warehouse
        return spec, spec, settings.dbt_project
    config = load_config(settings.config_file, os.environ)
    if warehouse is None or warehouse in config.warehouses:
        chosen = config.pick(warehouse)
        return chosen.name, chosen.spec, chosen.dbt_project
    return warehouse, warehouse, settings.dbt_project


def _selected(golden: GoldenSet, args: argparse.Namespace) -> GoldenSet:
    """The threads of `golden` that `--categories` names (a thread with a question of one of
    them is kept whole, so a follow-up keeps the question it follows), then the first
    `--limit` of those."""
    chains = golden.chains()
    if args.categories:
        wanted = {c.strip() for c in args.categories.split(",")}
        chains = [c for c in chains if any(q.category in wanted for q in c)]
    if args.limit is not None:
        chains = chains[: args.limit]
    return replace(golden, questions=tuple(q for chain in chains for q in chain))


def _progress(result: QuestionResult) -> None:
    mark = "ok " if result.status == "pass" else "FAIL"
    print(f"{mark} {result.id} ({result.latency_s:.1f} s)", file=sys.stderr, flush=True)


def _defog(args: argparse.Namespace, setup: Setup) -> tuple[list[QuestionResult], dict[str, str]]:
    if not (args.corpora / "sql-eval").is_dir():
        raise ValueError(f"--corpora {args.corpora} holds no sql-eval folder (and defog-data).")
    wanted = set(args.databases.split(",")) if args.databases else None
    results: list[QuestionResult] = []
    sets = defog.golden_sets(args.corpora)
    if args.sample:
        sets = defog.stratified_sample(sets, args.sample)
    for database, golden in sets.items():
        if wanted and database not in wanted:
            continue
        path = defog.build_defog(database, args.cache / f"{database}.duckdb", corpora=args.corpora)
        chosen = _selected(golden, args)
        if chosen.questions:
            results += _run_on(DuckDBConnector(path), chosen, setup, database)
    meta = {"golden": "defog sql-eval", "corpora": str(args.corpora)}
    if args.sample:
        meta["sample"] = f"{args.sample} per category: " + ", ".join(
            q.id for golden in sets.values() for q in golden.questions
        )
    return results, meta


def export_examples(
    settings: Settings, path: Path, warehouse: str | None = None, *, verified: bool = False
) -> int:
    """Write the approved examples the bot has learnt as a golden set (a regression suite): with
    QUERYBOT_CONFIG, those of `warehouse` (default: the config's default, or its only one).
    `verified`: only those a person verified with a thumbs up (`--from-feedback`)."""
    config = deployment_config(settings, os.environ)
    chosen = config.pick(warehouse) if config.path else config.pick(None)
    where = settings.state_url or warehouse_file(settings, config, "examples", chosen.name)
    store = ExampleStore(where, warehouse=chosen.name)
    try:
        examples = store.verified() if verified else store.active()
    finally:
        store.close()
    kind = "verified" if verified else "approved"
    questions = tuple(
        GoldenQuestion(f"{kind}-{e.id}", kind, e.question, (e.sql,)) for e in examples
    )
    # the set names the warehouse as `querybot eval` will find it: its config name, or the spec
    name = chosen.name if config.path else settings.warehouse
    dump_golden(GoldenSet(questions, warehouse=name), path)
    print(f"{counted(len(questions), f'{kind} example')} written to {path}", file=sys.stderr)
    return 0
