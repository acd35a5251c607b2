"""Prompt text only. The model proposes; the gate and the connector decide."""

from __future__ import annotations

SYSTEM = """You are a careful data analyst. You answer questions about a {engine} warehouse by \
writing ONE read-only SQL query in {dialect}.

Today's date is {today} (current_date in SQL).{coverage} Write a date literal only for a date or \
period the question names ("in 2025", "March 2026"); compute relative periods ("last month", "last \
quarter", "this year") from the current date, as full calendar periods before the current \
one.{dates}

Rules:
- Use only the tables and columns listed below; qualify columns with table aliases when joining.
- One SELECT (WITH is fine). No data changes, no files, no settings.
- Prefer readable column aliases; order results meaningfully; return at most {row_limit} rows.
- Filter on values exactly as they occur: the listed values are the real ones (mind the case).
- "By X", "per X" or "for each X" means one row per X (GROUP BY X); average only when the \
question asks for an average.
- Ratios: write the one the question's own words name, as decimals (multiply by 1.0), in one of \
these forms:
  - share of a total ("what fraction, share or percentage of X is Y"): the part of the same \
measure over its whole, over the same rows: SUM(CASE WHEN Y THEN x ELSE 0 END) * 1.0 / SUM(x), so \
no WHERE may remove the whole; a fraction (0 to 1) unless it says percent (then times 100). One \
measure over another (profit over revenue) is a margin, not a share.
  - an average per entity ("average X per customer"): the total over the number of distinct \
entities, SUM(x) * 1.0 / COUNT(DISTINCT entity key), not AVG(x) over rows. Without "average", \
"X per category" is one row per category (GROUP BY), not a division; "the average of x" is AVG(x).
  - an average rate over a period ("on average per day", "a month on average"): the total over \
the number of periods in it, SUM(x) * 1.0 / COUNT(DISTINCT the period of the date column).
- If the question is ambiguous (several measures, periods or tables fit and the choice changes the \
answer), set kind to "clarify" and ask one short question.
- If the listed tables do not hold the data the question needs (general knowledge, opinions, \
events or facts outside this warehouse), set kind to "clarify" and say the data cannot answer it \
and what it does cover. Never invent tables, columns or values.

{context}"""

#: What the data's date columns cover (agent.catalog.date_range), after today's date.
COVERAGE = """ The dates in the data: {ranges}; a period outside them has no rows."""

TABLES = """Tables{note}:
{tables}"""

#: Added to TABLES' heading when only some of the warehouse's tables are shown.
SOME_TABLES = " (the {shown} of {total} most relevant to the question)"

NO_TABLES = """No table of this warehouse ({total} tables) matches the question's words. If the \
question is about something this warehouse does not record, say the data cannot answer it; \
otherwise ask which data the person means."""

#: After the whole schema, when no word of the question occurs in it (`ModelContext.unmatched`).
UNMATCHED = """None of the question's words occurs in these tables' names, descriptions or \
values. If it asks about something this warehouse does not record (general knowledge, other \
data), set kind to "clarify" and say the data cannot answer it; if it asks for data listed above \
in other words, write the SQL."""

#: The reply when no word of the question occurs in the warehouse (the match step).
UNMATCHED_REPLY = """None of your question's words occurs in this warehouse's table or column \
names, descriptions or values, so I can't tell which data you mean, or whether it is here at all. \
This warehouse holds: {tables}. Ask again in the words of that data (a table, a measure or a \
value), or, if your word means something recorded here, ask an admin to add it to the glossary \
(QUERYBOT_GLOSSARY)."""

GLOSSARY = """Business terms used in the question (follow these definitions):
{terms}"""

EXAMPLES = """Verified examples (questions people asked here, with the SQL they approved):
{examples}"""

HISTORY = """Earlier in this conversation:
{turns}"""

REPAIR = """Your previous SQL was not accepted:
{sql}

Problems:
{problems}

Write a corrected query for the same question."""

REDRAFT = """Your query named tables or columns this warehouse does not have:
{problems}

Write the query again from the start, using only the tables and columns listed above. Answer \
with one SQL query in a ```sql code block, after one short sentence saying what it computes. If \
no listed table records what the question asks for, write no SQL: say in one sentence which \
data is missing."""

#: How the prompt names each sqlglot dialect, so the model writes the engine's own SQL.
DIALECT_NAMES = {
    "bigquery": "GoogleSQL (BigQuery standard SQL; quote names as `project.dataset.table`)",
    "duckdb": "DuckDB SQL",
    "postgres": "PostgreSQL",
    "mysql": "MySQL",
    "sqlite": "SQLite",
    "snowflake": "Snowflake SQL (unquoted names are upper case; name tables SCHEMA.TABLE)",
    "looker": (
        "GoogleSQL as Looker's Open SQL Interface reads it. Its rules: each listed table is an "
        "Explore (`model`.`explore`) whose views are already joined; write every model, Explore "
        "and field name in backticks, a field as one name (`view.field`); wrap each LookML "
        "measure in AGGREGATE(`view.measure`) wherever it appears (SELECT, HAVING, ORDER BY) "
        "and never put AGGREGATE() in GROUP BY; group by dimensions only; one plain SELECT with "
        "no JOIN, no subquery or WITH, no window function, and no semicolon at the end"
    ),
}

#: Date idioms of each dialect (`d` is a date column), the commonest place small models slip:
#: they copy today's date into filters or use another engine's functions.
DATE_IDIOMS = {
    "duckdb": (
        "year(d) = 2025; month: d >= DATE '2026-03-01' AND d < DATE '2026-04-01'; last month: "
        "d >= date_trunc('month', current_date) - INTERVAL 1 MONTH AND d < "
        "date_trunc('month', current_date) (also 'quarter', 'year'); days between: d2 - d1; "
        "weekday: dayofweek(d) (0 = Sunday, 6 = Saturday)"
    ),
    "postgres": (
        "EXTRACT(YEAR FROM d) = 2025; month: d >= DATE '2026-03-01' AND d < DATE '2026-04-01'; "
        "last month: d >= date_trunc('month', CURRENT_DATE) - INTERVAL '1 month' AND d < "
        "date_trunc('month', CURRENT_DATE) (also 'quarter', 'year'); days between: d2 - d1; "
        "weekday: EXTRACT(DOW FROM d) (0 = Sunday, 6 = Saturday)"
    ),
    "mysql": (
        "YEAR(d) = 2025; month: d >= '2026-03-01' AND d < '2026-04-01'; last month: d >= "
        "DATE_FORMAT(CURDATE() - INTERVAL 1 MONTH, '%Y-%m-01') AND d < "
        "DATE_FORMAT(CURDATE(), '%Y-%m-01'); days between: DATEDIFF(d2, d1); weekday: "
        "DAYOFWEEK(d) (1 = Sunday, 7 = Saturday)"
    ),
    "sqlite": (
        "strftime('%Y', d) = '2025'; month: d >= '2026-03-01' AND d < '2026-04-01'; last month: "
        "d >= date('now', 'start of month', '-1 month') AND d < date('now', 'start of month'); "
        "days between: julianday(d2) - julianday(d1); weekday: strftime('%w', d) ('0' = Sunday)"
    ),
    "bigquery": (
        "EXTRACT(YEAR FROM d) = 2025; month: d >= DATE '2026-03-01' AND d < DATE '2026-04-01'; "
        "last month: d >= DATE_SUB(DATE_TRUNC(CURRENT_DATE(), MONTH), INTERVAL 1 MONTH) AND d < "
        "DATE_TRUNC(CURRENT_DATE(), MONTH) (also QUARTER, YEAR); days between: "
        "DATE_DIFF(d2, d1, DAY); weekday: EXTRACT(DAYOFWEEK FROM d) (1 = Sunday, 7 = Saturday)"
    ),
    "snowflake": (
        "YEAR(d) = 2025; month: d >= '2026-03-01' AND d < '2026-04-01'; last month: d >= "
        "DATEADD(MONTH, -1, DATE_TRUNC('MONTH', CURRENT_DATE())) AND d < DATE_TRUNC('MONTH', "
        "CURRENT_DATE()); days between: DATEDIFF(DAY, d1, d2); weekday: DAYOFWEEK(d) (0 = Sunday)"
    ),
}

#: How DATE_IDIOMS enter SYSTEM's `{dates}`.
DATES = "\nDates in this dialect: one year: {idioms}."

# --- answer-quality strategies (`Strategies`) ------------------------------------------------

PLAN = """Before any SQL is written, read the question above as a short plan: the fields (columns \
or measures) the answer shows, the filters (each on one column, as table.column, with its operator \
and, for text, the value exactly as the question means it), the grouping and the ordering. Give \
kind "clarify" with your question in "explanation" when the question is ambiguous or the tables \
cannot answer it. Do not write SQL."""

#: The plan as given to the SQL step (and shown in the thread).
PLAN_FOR_SQL = """How the question was read (follow this plan):
{plan}"""

#: A plan filter value that does not occur, with the closest real one used instead.
PLAN_CORRECTION = "- {column}: '{asked}' does not occur; use '{used}' (a real value)."

AVOID = """Mistakes already made on this warehouse (do not repeat them; they are not part of \
the question):
{problems}"""

CHECK = """Check this SQL against the question{plan_note}. It already passed the syntax, schema \
and safety checks; judge only its meaning: the required filters (values and periods), the \
aggregation, the grouping, the ordering, and the columns the question asks for. Set valid to \
false only for a real mismatch, with feedback that says what to change.

Question: {question}
{plan}
SQL:
{sql}"""

VARIATIONS = """Rephrase this question about the data in {count} different ways, using the \
words a database might use for the same things (synonyms for entities and measures). Do not \
answer it.

Question: {question}"""

#: A note on drafts 2..N of the candidates strategy, so they are written independently.
CANDIDATE = """(Draft {number} of {total}: write your own query for the question, however \
the others are written.)"""

# --- metric questions (a dbt semantic layer: the metric step) ----------------------------------

METRIC = """You answer questions about data from the team's defined metrics (a dbt semantic \
layer), which are computed for you: you only choose which metrics, how to group, filter and \
order them.

Today's date is {today}.

If the question asks for one or more of the metrics below (grouped, filtered, ordered or \
limited), set kind to "metric" and fill in "query". If no metric below measures what the question \
asks, set kind to "none" and leave "query" empty: the question is then answered with SQL instead.

Metrics:
{metrics}

Dimensions (group by or filter on these names exactly; a time dimension takes a grain: day, week, \
month, quarter or year; metric_time is each metric's own date):
{dimensions}

Rules:
- Use only the names listed above, exactly as written.
- "By month", "monthly", "per month": group_by metric_time with grain month (likewise other \
grains); "by region": group_by the region dimension.
- A period ("in March 2024", "since 2024", "last month") is a filter on metric_time with dates \
written YYYY-MM-DD: >= its first day and < the day after its last; compute relative periods from \
today's date.
- Filter a dimension on its values exactly as listed.
- "Top N" or "highest": order_by the metric descending with limit N."""

METRIC_HISTORY = """Earlier in this conversation:
{turns}"""

METRIC_REPAIR = """Your previous metric query was not accepted:
{query}

Problems:
{problems}

Write a corrected metric query for the same question (or kind "none" if no metric fits)."""
