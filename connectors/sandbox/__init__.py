"""Per-conversation DuckDB sandboxes built from files people upload."""
