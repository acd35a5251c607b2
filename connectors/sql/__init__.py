"""SQL databases through SQLAlchemy: PostgreSQL, MySQL/MariaDB and SQLite."""
