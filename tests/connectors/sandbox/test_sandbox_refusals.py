"""Every way an upload can fail to load ends in a refusal that says what is wrong (issue 36, item
5), through the real loader child: a ragged CSV with a 300 kB field once ended in
`_csv.Error: field larger than field limit (131072)` and a traceback. Each file kind's failures
(huge fields, ragged rows, NUL bytes, bad encodings, old line ends, broken JSON, Parquet and
SQLite) is a row of `UPLOADS`; the Slack test (tests/e2e/test_upload_refusals.py)
shares the same files through the bot.
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from connectors.sandbox.bounds import SandboxLimits
from connectors.sandbox.files import FileRejected
from connectors.sandbox.sandboxes import Sandboxes

THREAD = "T0TEST:C0REFUSE:1800000001.000200"
#: The bound on one value in these tests: the issue's 300 kB field is over it.
FIELD_BYTES = 200_000
FIELD = b"x" * 300_000


def _not_a_database(path: Path) -> None:
    path.write_bytes(b"SQLite format 3\x00" + b"\x00" * 200)


def _sqlite_with_a_long_value(path: Path) -> None:
    with closing(sqlite3.connect(path)) as db:
        db.execute("CREATE TABLE t (a TEXT)")
        db.execute("INSERT INTO t VALUES (?)", ["x" * 300_000])
        db.commit()


#: name -> (contents, or a function writing the file; what the refusal says, or None: loads).
UPLOADS: dict[str, tuple[bytes | object, str | None]] = {
    # the issue's file: ragged rows and a field over the bound
    "ragged_field.csv": (
        b"a,b\n1,2\n3," + FIELD + b",4\n5,6\n",
        "ragged_field.csv holds a value longer than the limit; one value may be at most 195 KiB.",
    ),
    "long_field.csv": (
        b"a,b\n1," + FIELD + b"\n2,3\n",
        "long_field.csv holds a value of 293 KiB (column b); one value may be at most 195 KiB.",
    ),
    "long_quoted.csv": (
        b'a,b\n1,"' + FIELD + b'"\n2,3\n',
        "long_quoted.csv holds a value of 293 KiB (column b); one value may be at most 195 KiB.",
    ),
    "long_field.tsv": (
        b"a\tb\n1\t" + FIELD + b"\n",
        "long_field.tsv holds a value of 293 KiB (column b); one value may be at most 195 KiB.",
    ),
    "long_string.json": (
        b'[{"a": "' + FIELD + b'"}]',
        "long_string.json holds a value of 293 KiB (column a); one value may be at most 195 KiB.",
    ),
    "long_value.sqlite": (_sqlite_with_a_long_value, "long_value.sqlite holds a value"),
    "ragged.csv": (
        b"a,b\n1,2\n3,4,5\n6\n",
        "could not read ragged.csv as CSV: line 3 has 3 fields but the header has 2",
    ),
    "late_nul.csv": (
        b"a,b\n" + b"1,2\n" * 30_000 + b"3,\x00\n",
        "could not read late_nul.csv as CSV: ",
    ),
    "nul.csv": (b"a,b\n1,\x002\n", "could not read nul.csv as CSV: it holds binary data"),
    "utf16.csv": ("a,b\n1,2\n".encode("utf-16"), "could not read utf16.csv as CSV"),
    "latin1.csv": (b"a,b\n1,\xe9t\xe9\n", None),
    "old_mac.csv": (b"a,b\r1,2\r", None),
    "broken.json": (b"{not json", "could not read broken.json as JSON: "),
    "deep.json": (b"[" * 100_000 + b"]" * 100_000, "could not read deep.json as JSON: "),
    "broken.parquet": (b"PAR1garbage", "could not read broken.parquet as Parquet: "),
    "footer.parquet": (b"PAR1" + b"\x00" * 100 + b"PAR1", "could not read footer.parquet as "),
    "broken.sqlite": (_not_a_database, "could not read broken.sqlite as SQLite: "),
    "sheet.xlsx": (b"PK\x03\x04" + b"\x00" * 100, "sheet.xlsx is not a CSV, Parquet, JSON or"),
}


def write_upload(directory: Path, name: str) -> Path:
    """The upload `name` of UPLOADS, written under `directory`."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    contents = UPLOADS[name][0]
    if isinstance(contents, bytes):
        path.write_bytes(contents)
    else:
        assert callable(contents)
        contents(path)
    return path


@pytest.fixture(scope="module")
def sandboxes(tmp_path_factory: pytest.TempPathFactory) -> Sandboxes:
    return Sandboxes(
        tmp_path_factory.mktemp("refusals"), SandboxLimits(max_field_bytes=FIELD_BYTES)
    )


@pytest.mark.parametrize("name", list(UPLOADS))
def test_each_upload_loads_or_gets_a_refusal_saying_why(
    sandboxes: Sandboxes, tmp_path: Path, name: str
) -> None:
    file = write_upload(tmp_path, name)
    expected = UPLOADS[name][1]
    if expected is None:
        (table,) = sandboxes.load(f"{THREAD}:{name}", file, name)
        assert (table.rows, table.columns) == (1, 2)
        return
    with pytest.raises(FileRejected) as caught:
        sandboxes.load(f"{THREAD}:{name}", file, name)
    assert caught.value.message.startswith(expected), caught.value.message
    assert "Traceback" not in caught.value.message + caught.value.engine_message
    is_field = "one value may be at most" in expected or name == "long_value.sqlite"
    assert caught.value.bound == ("field" if is_field else ""), caught.value.bound
    assert not sandboxes.exists(f"{THREAD}:{name}")


def test_a_field_within_the_bound_loads_and_the_issue_file_is_refused_as_ragged(
    tmp_path: Path,
) -> None:
    """With the default bound (1 MiB, QUERYBOT_MAX_CELL_BYTES's default) the issue's 300 kB
    field is no problem, and its ragged rows are what is refused."""
    sandboxes = Sandboxes(tmp_path / "sb")
    file = write_upload(tmp_path, "ragged_field.csv")
    with pytest.raises(FileRejected, match="line 3 has 3 fields but the header has 2"):
        sandboxes.load(THREAD, file, file.name)
    (table,) = sandboxes.load(THREAD, write_upload(tmp_path, "long_field.csv"), "long_field.csv")
    assert (table.rows, table.columns) == (2, 2)
