"""Memory: entries agents remember, and conflicts waiting for a person."""
