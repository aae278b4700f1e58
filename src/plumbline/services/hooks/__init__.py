"""hooks: changes going out, the change feed (and webhooks), built from every service's
events."""
