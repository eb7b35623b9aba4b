"""The desk's shell: start-up, the main window and its menus, connecting, preferences,
and telling the operator about new items."""
