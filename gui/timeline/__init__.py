"""The visual (Gantt-like) timeline of a run."""
