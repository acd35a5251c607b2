"""What the agent keeps between questions: audit log, failures, verified examples, state tables."""
