"""Answer-quality strategies: which run, plan-first, relaxing empty results, follow-ups."""
