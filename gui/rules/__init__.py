"""The Rules page: standing decisions, what they decided, revoke."""
