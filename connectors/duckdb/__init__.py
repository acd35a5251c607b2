"""DuckDB files, opened read-only and locked down, queried in worker processes."""
