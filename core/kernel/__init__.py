"""The kernel: pure helpers every layer shares (canonical JSON and digests, limits on agent data,
safe text, request origins, digest re-checks, the rule condition language). No storage."""
