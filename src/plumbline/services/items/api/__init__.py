"""items' gRPC servicers: one module per proto service, each a thin mapping."""
