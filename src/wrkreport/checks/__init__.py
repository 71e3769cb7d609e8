"""Checks: is every measurement of a run comparable? Each verdict a Check with a sentence (plain, TLS, HTTP/2 and --app setups)."""
