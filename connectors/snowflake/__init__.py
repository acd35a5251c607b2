"""Snowflake: the connector, its sessions, metadata, SQL checks and errors."""
