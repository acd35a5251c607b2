"""Scheduled questions and alerts: approved SQL run again on a schedule, posted exactly once."""
