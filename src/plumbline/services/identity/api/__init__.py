"""identity's gRPC servicers: one module per proto service, each a thin mapping."""
