"""Effects: reserve, begin, commit or fail; ambiguous when the outcome is unknown, resolved by
a person. The service, its rows inside a write, and the desk's views."""
