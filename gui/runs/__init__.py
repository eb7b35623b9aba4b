"""Runs: the list of runs and one run's attempts and events."""
