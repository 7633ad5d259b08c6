"""Plan, apply, verify, journal and roll back sd.conf changes."""
