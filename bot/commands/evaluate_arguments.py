"""The arguments of `querybot eval`, apart from it so that building the CLI's parser (and
`querybot --help`) imports none of the evaluation's model or warehouse libraries."""

from __future__ import annotations

import argparse
from fractions import Fraction
from pathlib import Path


def min_accuracy(text: str) -> Fraction:
    """`--min-accuracy`'s value: a fraction from 0 to 1 (`0.8`) or a percentage (`80%`); a
    bare number above 1 is refused, since `80` could mean either."""
    spoken = text.strip()
    percent = spoken.endswith("%")
    try:
        value = Fraction(spoken.removesuffix("%").strip()) / (100 if percent else 1)
    except (ValueError, ZeroDivisionError):
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a number: write a fraction from 0 to 1 (0.8) or a percentage (80%)"
        ) from None
    if not 0 <= value <= 1:
        hint = f" (for a percentage write {spoken}%)" if not percent and 1 < value <= 100 else ""
        raise argparse.ArgumentTypeError(f"{text!r} is not between 0 and 1 (0% and 100%){hint}")
    return value


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("golden", nargs="?", type=Path, help="golden set (YAML or JSONL)")
    p.add_argument(
        "--warehouse",
        help="warehouse to run on: a spec, or a name in QUERYBOT_CONFIG (default: the set's, "
        "else the bot's default)",
    )
    p.add_argument("--defog", action="store_true", help="run defog's sql-eval questions instead")
    p.add_argument(
        "--corpora",
        type=Path,
        help="defog-data + sql-eval (default: $QUERYBOT_CORPORA, else shared/corpora next to the "
        "checkout)",
    )
    p.add_argument(
        "--cache",
        type=Path,
        help="where --defog builds its DuckDB files (default: QUERYBOT_DATA_DIR/defog)",
    )
    p.add_argument("--databases", help="comma-separated defog databases (default: all)")
    p.add_argument(
        "--sample",
        type=int,
        metavar="N",
        help="with --defog: a fixed stratified sample, N questions of each category",
    )
    p.add_argument(
        "--categories",
        metavar="A,B",
        help="evaluate only questions of these categories (with the questions they follow up)",
    )
    p.add_argument("--limit", type=int, help="evaluate only the first N threads of each set")
    p.add_argument(
        "--out", type=Path, metavar="FILE", help="write the JSON report to this file (only there)"
    )
    p.add_argument(
        "--min-accuracy",
        type=min_accuracy,
        metavar="X",
        help="exit 1 when the accuracy is below X: a fraction (0.8) or a percentage (80%%); "
        "with --baseline or several --strategies, every configuration but the baseline must "
        "reach it",
    )
    p.add_argument("--compare", type=Path, help="an earlier JSON report to compare with")
    p.add_argument("--export-examples", type=Path, metavar="PATH", help="write approvals as a set")
    p.add_argument(
        "--from-feedback",
        type=Path,
        metavar="PATH",
        help="write the answers people verified with a thumbs up in Slack as a golden set",
    )
    p.add_argument(
        "--strategies",
        action="append",
        metavar="SPEC",
        help="answer-quality strategies, as QUERYBOT_STRATEGIES (default: its value); repeat "
        "to compare configurations in one report (the model's replies are shared, in order)",
    )

    p.add_argument(
        "--without-dbt",
        action="store_true",
        help="leave the warehouse's dbt project out (QUERYBOT_DBT_PROJECT, dbt_project): every "
        "answer ad hoc SQL, to compare with the governed run",
    )
    p.add_argument(
        "--baseline",
        action="store_true",
        help="also run the naive baseline (whole schema, one call, no checks) with the same "
        "model, scored the same way, side by side",
    )
