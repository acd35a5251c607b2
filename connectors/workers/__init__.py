"""Worker processes that run a connector's statements under hard time and memory bounds."""
