"""The bot's own state: handled deliveries and proposals, on SQLite or PostgreSQL."""
