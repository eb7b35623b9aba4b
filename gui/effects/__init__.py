"""Effects: side effects and their outcomes; ambiguous ones wait for a person."""
