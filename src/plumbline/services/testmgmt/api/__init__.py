"""testmgmt's gRPC servicers: one module per proto service."""
