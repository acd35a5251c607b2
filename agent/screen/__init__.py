"""Deterministic screens of a draft beside the gate: periods, pasted SQL, the judge."""
