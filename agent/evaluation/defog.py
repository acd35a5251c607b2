"""defog's sql-eval questions over the defog-data databases, loaded into DuckDB files.

Each defog database (a PostgreSQL dump plus a JSON of column descriptions) becomes its own DuckDB
file (`academic.duckdb` holds `academic.main.author`), with the descriptions as column comments so
the bot's catalog reads them as it would a team's warehouse. The gold SQL stays PostgreSQL; the
evaluation transpiles it with sqlglot.
"""

from __future__ import annotations

import csv
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

import duckdb
import sqlglot
from sqlglot import exp

from agent.evaluation.golden import GoldenQuestion, GoldenSet, parse_question

#: The shared corpora folder next to the project checkout, or `$QUERYBOT_CORPORA`. The one
#: definition: tests, bench scripts and `querybot eval` all read it from here.
CORPORA = Path(
    os.environ.get("QUERYBOT_CORPORA") or Path(__file__).resolve().parents[3] / "shared" / "corpora"
)

#: sql-eval's gold files, by the sqlglot dialect their SQL is written in.
GOLD_FILES = {
    "postgres": "questions_gen_postgres.csv",
    "mysql": "questions_gen_mysql.csv",
    "sqlite": "questions_gen_sqlite.csv",
    "bigquery": "questions_gen_bigquery.csv",
}


def databases(corpora: Path = CORPORA) -> tuple[str, ...]:
    """The names of the defog-data databases found in `corpora`."""
    return tuple(sorted(p.stem for p in (corpora / "defog-data").glob("*.sql")))


def build_defog(database: str, target: Path, *, corpora: Path = CORPORA) -> Path:
    """The PostgreSQL dump of `database` as the DuckDB file `target` (built once)."""
    if target.exists():
        return target
    source = corpora / "defog-data"
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(".partial")
    partial.unlink(missing_ok=True)
    con = duckdb.connect(str(partial))
    for statement in duckdb_statements((source / f"{database}.sql").read_text()):
        con.execute(statement)
    meta = json.loads((source / f"{database}.json").read_text())["table_metadata"]
    for table, columns in meta.items():
        for column in columns:
            text = column["column_description"].replace("'", "''")
            con.execute(f"COMMENT ON COLUMN {table}.\"{column['column_name']}\" IS '{text}'")
    con.close()
    partial.rename(target)
    return target


def duckdb_statements(dump: str) -> list[str]:
    """The statements of a defog-data PostgreSQL dump as DuckDB runs them. Two spellings sqlglot
    or DuckDB cannot read ('15 min' intervals, a MySQL-style TO_CHAR format) are written the
    PostgreSQL way first."""
    dump = re.sub(r"INTERVAL '(\d+) min'", r"INTERVAL '\1 minutes'", dump)
    dump = dump.replace("'%Y%m%d %H:%i:%s'", "'YYYYMMDD HH24:MI:SS'")
    return [_for_duckdb(tree) for tree in sqlglot.parse(dump, read="postgres") if tree is not None]


def _for_duckdb(tree: exp.Expr) -> str:
    """One statement of a defog-data dump as DuckDB runs it: tables out of `public`, serials as
    plain integers, no foreign keys (DuckDB checks their types), and CREATE SCHEMA IF NOT
    EXISTS."""
    for table in tree.find_all(exp.Table):
        if table.db == "public":
            table.set("db", None)
    for type_ in tree.find_all(exp.DataType):
        if type_.this in (exp.DataType.Type.SERIAL, exp.DataType.Type.BIGSERIAL):
            type_.set("this", exp.DataType.Type.INT)
    for node in list(tree.find_all(exp.ForeignKey, exp.Reference)):
        (node.parent if isinstance(node.parent, exp.ColumnConstraint) else node).pop()
    if isinstance(tree, exp.Create) and tree.kind == "SCHEMA":
        tree.set("exists", True)
    return tree.sql("duckdb")


@dataclass(frozen=True)
class Gold:
    database: str
    question: str
    category: str
    #: Each acceptable answer's SQL (PostgreSQL unless read for another dialect, braces
    #: expanded to the first choice).
    queries: tuple[str, ...]
    #: sql-eval's instructions for the question (its `instruct` category), part of its prompt.
    instructions: str = ""

    def table_sets(self) -> list[set[str]]:
        """Per acceptable answer, the qualified names (`academic.main.author`) it reads."""
        sets = []
        for query in self.queries:
            try:
                tree = sqlglot.parse_one(query, read="postgres")
            except sqlglot.errors.ParseError:
                continue
            ctes = {c.alias_or_name.lower() for c in tree.find_all(exp.CTE)}
            names = set()
            for table in tree.find_all(exp.Table):
                if table.name.lower() in ctes or not table.name:
                    continue
                schema = (table.db or "main").lower()
                names.add(f"{self.database}.{schema}.{table.name.lower()}")
            if names:
                sets.append(names)
        return sets


def gold_questions(corpora: Path = CORPORA, dialect: str = "postgres") -> list[Gold]:
    """sql-eval's questions with the gold SQL written for `dialect` (see GOLD_FILES)."""
    with (corpora / "sql-eval" / GOLD_FILES[dialect]).open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    return [
        Gold(
            r["db_name"],
            r["question"],
            r["query_category"],
            tuple(_alternatives(r["query"])),
            (r.get("instructions") or "").strip(),
        )
        for r in rows
    ]


def _alternatives(text: str) -> list[str]:
    """sql-eval's `a; b` alternatives, with `{x, y}` column choices reduced to the first."""
    parts: list[str] = []
    current: list[str] = []
    quote = ""
    for char in text:
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"`":  # MySQL quotes identifiers in backticks
            quote = char
        elif char == ";":
            parts.append("".join(current))
            current = []
            continue
        current.append(char)
    parts.append("".join(current))
    out = []
    for part in (p.strip() for p in parts if p.strip()):
        match = re.search(r"\{([^{}]*)\}", part)
        if match and match.group(1).strip():
            first = match.group(1).split(",")[0].strip()
            part = part[: match.start()] + first + part[match.end() :]
            part = part.replace("GROUP BY {}", f"GROUP BY {first}")
        out.append(part)
    return out


def idk_questions(corpora: Path = CORPORA) -> list[tuple[str, str]]:
    """(database, question) pairs the data cannot answer."""
    with (corpora / "sql-eval" / "idk.csv").open(newline="") as handle:
        return [(r["db_name"], r["question"]) for r in csv.DictReader(handle)]


def golden_sets(corpora: Path = CORPORA, *, idk: bool = True) -> dict[str, GoldenSet]:
    """Per defog database, its sql-eval questions (and, with `idk`, its unanswerable ones) as a
    golden set with PostgreSQL gold SQL."""
    questions: dict[str, list[GoldenQuestion]] = {}
    for n, gold in enumerate(gold_questions(corpora), 1):
        raw: dict[str, object] = {
            "id": f"{gold.database}-{n:03d}",
            "category": gold.category,
            # as sql-eval asks it: the instructions are part of the question
            "question": f"{gold.question}\n{gold.instructions}".strip(),
            "gold": list(gold.queries),
        }
        if gold.category == "order_by":
            raw["ordered"] = True
        questions.setdefault(gold.database, []).append(parse_question(raw, "sql-eval"))
    if idk:
        for n, (database, question) in enumerate(idk_questions(corpora), 1):
            raw = {
                "id": f"{database}-idk-{n:03d}",
                "category": "unanswerable",
                "question": question,
                "expect": "decline",
            }
            questions.setdefault(database, []).append(parse_question(raw, "idk"))
    return {db: GoldenSet(tuple(qs), dialect="postgres") for db, qs in sorted(questions.items())}


def stratified_sample(sets: dict[str, GoldenSet], per_category: int) -> dict[str, GoldenSet]:
    """A fixed sample: `per_category` questions of each category (unanswerable included),
    evenly spaced through the category's questions in id order, so every run picks the same."""
    by_category: dict[str, list[GoldenQuestion]] = {}
    for golden in sets.values():
        for question in golden.questions:
            by_category.setdefault(question.category, []).append(question)
    chosen: set[str] = set()
    for questions in by_category.values():
        questions.sort(key=lambda q: q.id)
        step = max(1.0, len(questions) / per_category)
        chosen |= {questions[int(i * step)].id for i in range(min(per_category, len(questions)))}
    out = {}
    for database, golden in sets.items():
        kept = tuple(q for q in golden.questions if q.id in chosen)
        if kept:
            out[database] = GoldenSet(kept, golden.warehouse, golden.dialect, golden.meta)
    return out
