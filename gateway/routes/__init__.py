"""Routes per resource family."""
