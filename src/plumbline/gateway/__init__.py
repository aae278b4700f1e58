"""The gateway: the whole ``/rest/{version}`` surface in front of the services."""
