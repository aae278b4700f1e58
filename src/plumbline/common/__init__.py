"""Code shared by every Plumbline service and the gateway."""
