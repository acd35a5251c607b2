"""Answer-quality evaluation: a golden set of questions with gold SQL, run through the same graph
the bot uses (approval given automatically), scored the way defog's sql-eval scores results."""
