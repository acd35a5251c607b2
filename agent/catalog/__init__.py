"""What the agent knows of a warehouse: tables, columns, profiles, documentation, access."""
