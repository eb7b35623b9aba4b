"""The desk's infrastructure, below every page: the task runner, the store guard, the
watcher, settings, words, theme, the action registry and the error presenter."""
