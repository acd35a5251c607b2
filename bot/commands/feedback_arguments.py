"""The arguments of `querybot feedback`, apart from it so that building the CLI's parser (and
`querybot --help`) imports no database library."""

from __future__ import annotations

import argparse

#: Reports listed unless `--limit` says otherwise.
LIMIT = 50


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--warehouse", metavar="NAME", help="only the reports on this warehouse")
    p.add_argument(
        "--limit",
        type=_positive,
        default=LIMIT,
        metavar="N",
        help=f"the newest N reports (default {LIMIT})",
    )
    p.add_argument("--sql", action="store_true", help="print each report's SQL under it")
    p.add_argument("--json", action="store_true", help="one JSON object a line, with the whole SQL")


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number above 0")
    return value
