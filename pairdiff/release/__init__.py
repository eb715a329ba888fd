"""Release builders: pure functions from accepted pairs to release files."""
