"""The terminal commands besides running the bot: eval, gate, and the terminal rendering."""
