"""The reports services gRPC servicer."""
