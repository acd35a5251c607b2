"""The demo warehouse: a small online shop's sales, built as a DuckDB file."""
