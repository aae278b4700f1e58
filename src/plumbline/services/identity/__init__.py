"""identity: users, user groups, API clients, access tokens."""
