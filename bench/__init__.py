"""``make bench``: throughput, latency and growth against the stack's own limit."""
