"""The cross-run inbox: everything that waits for a person."""
