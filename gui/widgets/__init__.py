"""Widgets and models shared by the desk's pages."""
