"""activity: the history of changes, built from every service's events."""
