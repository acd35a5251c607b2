"""Files people share in a thread: from Slack into the thread's sandbox."""
