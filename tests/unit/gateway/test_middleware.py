"""The middleware's helpers: printable log values, trusted Host headers."""

from __future__ import annotations

from plumbline.gateway.middleware import printable, trusted_host


def test_log_values_are_printable() -> None:
    assert printable("/rest/v1/x\n2026 INFO forged\\") == "/rest/v1/x\\x0a2026 INFO forged\\x5c"
    assert printable("/rest/v1/ünïcode") == "/rest/v1/ünïcode"


def test_untrusted_hosts_become_the_local_address() -> None:
    def host(value: str, trusted: frozenset[str] = frozenset()) -> bytes:
        scope = {"server": ("127.0.0.1", 8080), "headers": [(b"host", value.encode())]}
        headers = dict(trusted_host(scope, trusted)["headers"])
        return bytes(headers[b"host"])

    assert host("127.0.0.1:8080") == b"127.0.0.1:8080"
    assert host("evil.example") == b"127.0.0.1:8080"
    assert host("api.example:443", frozenset({"api.example"})) == b"api.example:443"
    assert host("api.example:443", frozenset({"api.example:8443"})) == b"127.0.0.1:8080"
    assert host("API.example", frozenset({"api.example"})) == b"API.example"
