"""Core journal tests (a package so module names never clash with tests/gui/)."""
