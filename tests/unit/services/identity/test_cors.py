"""identity's check of CORS origins: what is kept, how it is written, what is refused."""

from __future__ import annotations

import pytest

from plumbline.common.errors import InvalidArgument
from plumbline.services.identity.cors import origin


@pytest.mark.parametrize(
    ("given", "stored"),
    [
        ("https://app.example.com", "https://app.example.com"),
        (" HTTPS://App.Example.COM/ ", "https://app.example.com"),
        ("https://app.example.com:443", "https://app.example.com"),
        ("http://localhost:80", "http://localhost"),
        ("http://localhost:3000", "http://localhost:3000"),
        ("https://app.example.com:80", "https://app.example.com:80"),
        ("http://127.0.0.1:8080", "http://127.0.0.1:8080"),
        ("http://[::1]:8080", "http://[::1]:8080"),
        ("https://xn--bcher-kva.example", "https://xn--bcher-kva.example"),
    ],
)
def test_origins_are_normalised_as_browsers_send_them(given: str, stored: str) -> None:
    assert origin(given) == stored


@pytest.mark.parametrize(
    ("given", "words"),
    [
        ("", "1 to 255"),
        ("x" * 300, "1 to 255"),
        ("app.example.com", "http or https origin"),
        ("ftp://app.example.com", "http or https origin"),
        ("https://", "http or https origin"),
        ("https://app.example.com/api", "origin only"),
        ("https://app.example.com?x=1", "origin only"),
        ("https://app.example.com#top", "origin only"),
        ("https://me:pw@app.example.com", "origin only"),
        ("https://*.example.com", "no wildcards"),
        ("https://app_example.com", "invalid host name"),
        ("https://-app.example.com", "invalid host name"),
        ("https://app.example.com:0x50", "invalid port"),
        ("https://app.example.com:70000", "invalid port"),
        ("http://[::zz]:8080", "invalid host"),
    ],
)
def test_anything_else_is_refused_with_a_reason(given: str, words: str) -> None:
    with pytest.raises(InvalidArgument) as refused:
        origin(given)
    assert words in refused.value.message
    assert "https://app.example.com" in refused.value.message
