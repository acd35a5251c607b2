"""`querybot eval --min-accuracy`: a fraction or a percentage, anything else refused clearly."""

from __future__ import annotations

from fractions import Fraction

import pytest

from bot.cli import parser


@pytest.mark.parametrize(
    ("given", "value"),
    [("0.8", Fraction(4, 5)), ("80%", Fraction(4, 5)), ("0", 0), ("1", 1), ("100%", 1)],
)
def test_a_fraction_or_a_percentage_is_taken(given: str, value: Fraction) -> None:
    args = parser().parse_args(["eval", "evals/demo.yaml", "--min-accuracy", given])
    assert args.min_accuracy == value


@pytest.mark.parametrize(
    ("given", "said"),
    [
        ("80", "'80' is not between 0 and 1 (0% and 100%) (for a percentage write 80%)"),
        ("120%", "'120%' is not between 0 and 1 (0% and 100%)"),
        ("-0.1", "'-0.1' is not between 0 and 1"),
        ("most", "'most' is not a number: write a fraction from 0 to 1 (0.8) or a percentage"),
    ],
)
def test_anything_else_is_refused_saying_what_to_write(
    given: str, said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as stopped:
        parser().parse_args(["eval", "evals/demo.yaml", "--min-accuracy", given])
    assert stopped.value.code == 2
    err = capsys.readouterr().err
    assert f"argument --min-accuracy: {said}" in err and "Traceback" not in err
