"""Model calls: providers, prompts, the structured replies, errors and accounting."""
