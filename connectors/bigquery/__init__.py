"""Google BigQuery: the connector, its client, jobs, metadata, SQL checks and errors."""
