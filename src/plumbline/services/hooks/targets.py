"""Where a webhook may deliver: an http(s) URL whose host resolves to public addresses.

A subscription names a URL that the hooks service then calls from inside the
deployment's network; without a check, anyone who may subscribe could make it call the
cluster's own services, the cloud's metadata address or the host's loopback. Targets
that resolve to a loopback, private, link-local, multicast, reserved or unspecified
address are refused when the subscription is made or changed and again before every
delivery (a name may resolve differently later), unless the operator allows them
(``PLUMBLINE_WEBHOOKS_ALLOW_PRIVATE``, which the tests set for their local receivers).
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import time
from urllib.parse import urlsplit

from plumbline.common.capped import with_room
from plumbline.common.errors import InvalidArgument

#: The longest target URL.
MAX_URL = 2000
#: How long a name's addresses are used before it is resolved again, and the most names
#: kept.
RESOLVED_SECONDS = 10.0
MAX_RESOLVED = 10_000
_resolved: dict[tuple[str, int], tuple[float, list[str]]] = {}


class Refused(Exception):
    """A target that may not be delivered to; the message says why."""


def check_url(url: str) -> str:
    """``url`` if it is an absolute http(s) URL without credentials; InvalidArgument
    saying what is wrong otherwise (resolution is ``check_address``'s)."""
    if len(url) > MAX_URL:
        raise InvalidArgument(f"url must be at most {MAX_URL} characters, got {len(url)}")
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - a port that is not a number raises here
    except ValueError as exc:
        raise InvalidArgument(f"url is not a valid URL ({exc}): {url!r}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InvalidArgument(
            f"url must be an absolute http:// or https:// URL with a host, got {url!r}"
        )
    if parts.username is not None or parts.password is not None:
        raise InvalidArgument(
            "url must not hold a user name or password: receivers verify deliveries by "
            "their signature"
        )
    if parts.fragment:
        raise InvalidArgument(f"url must not have a fragment (#...), got {url!r}")
    return url


async def _resolve(host: str, port: int) -> list[str]:
    """The addresses ``host`` stands for: itself when it is one; a name's, as the
    resolver answered within ``RESOLVED_SECONDS`` (deliveries check before each send)."""
    try:
        return [str(ipaddress.ip_address(host))]
    except ValueError:
        pass
    now = time.monotonic()
    cached = _resolved.get((host, port))
    if cached is not None and cached[0] > now:
        return cached[1]
    try:
        found = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as exc:
        raise Refused(f"the host {host!r} does not resolve ({exc.strerror or exc})") from None
    addresses = sorted({str(info[4][0]) for info in found})
    if len(_resolved) >= MAX_RESOLVED:
        kept = with_room(_resolved, lambda entry: entry[0] > now, MAX_RESOLVED)
        _resolved.clear()
        _resolved.update(kept)
    _resolved[(host, port)] = (now + RESOLVED_SECONDS, addresses)
    return addresses


def _public(address: str) -> bool:
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_global and not ip.is_multicast


async def check_address(url: str, allow_private: bool) -> None:
    """Refused unless every address ``url``'s host resolves to is public (or
    ``allow_private``); Refused too when it does not resolve."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        found = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as exc:
        raise Refused(f"the host {host!r} does not resolve ({exc.strerror or exc})") from None
    if allow_private:
        return
    addresses = sorted({str(info[4][0]) for info in found})
    private = [a for a in addresses if not _public(a)]
    if private:
        raise Refused(
            f"the host {host!r} resolves to {', '.join(private)}, a loopback, private, "
            "link-local or otherwise non-public address; webhooks deliver to public "
            "addresses only (an operator may allow others: PLUMBLINE_WEBHOOKS_ALLOW_PRIVATE)"
        )
