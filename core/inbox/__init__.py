"""The inbox: everything that waits for a person, across runs, in one keyset-paged list."""
