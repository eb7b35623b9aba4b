"""Memory: scoped entries, every change a mutation row, conflicts reviewed by a person; the
service and the desk's views."""
