"""A service address setting, turned into the target and balancing policy grpc is given.

``PLUMBLINE_<SVC>_ADDR`` takes three forms:

    items:9090                    one address, as before (grpc resolves it, pick-first)
    10.0.0.7:9090,10.0.0.8:9090   several IP addresses: round robin over all of them
    dns:///items-headless:9090    every A/AAAA record of a name (a headless Service):
                                  round robin; grpc re-resolves when a connection drops

grpc's own ``ipv4:``/``ipv6:`` targets are accepted as written. A comma list is given to
grpc as an ``ipv4:``/``ipv6:`` target, which takes IP literals only: host names in a
list are refused rather than resolved once here, which would pin the addresses a name
had at start-up while the pods behind it come and go.
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import re
import socket
from dataclasses import dataclass

from plumbline.common.errors import InvalidArgument

#: The service config of a balanced channel: round robin over the addresses whose gRPC
#: health (the whole process's, name "") says SERVING, so a replica draining after SIGTERM
#: gets no more calls while it is still connected. (A starting process reports SERVING
#: from the moment its server binds; in Kubernetes a headless Service lists ready pods only.)
ROUND_ROBIN = json.dumps(
    {"loadBalancingConfig": [{"round_robin": {}}], "healthCheckConfig": {"serviceName": ""}}
)

_FORMS = (
    "use host:port, a comma list of IP addresses (10.0.0.7:9090,10.0.0.8:9090) or "
    "dns:///name:port (round robin over every address of the name)"
)
_HOST_PORT = re.compile(r"(?:\[(?P<v6>[^\]]+)\]|(?P<host>[^:\[\]/,\s]+)):(?P<port>\d+)")


@dataclass(frozen=True)
class Target:
    """What a channel is opened on: grpc's target string, and whether to balance."""

    uri: str
    round_robin: bool


class _Invalid(Exception):
    """Why an address is not valid (a phrase; :func:`target_of` makes it a sentence)."""


def target_of(service: str, address: str) -> Target:
    """The grpc target for ``address``; InvalidArgument saying what is wrong otherwise."""
    text = address.strip()
    try:
        if not text:
            raise _Invalid("it is empty")
        scheme, _, rest = text.partition(":")
        if scheme == "dns":
            _dns_name(rest)
            return Target(text, round_robin=True)
        if scheme in ("ipv4", "ipv6"):
            _ip_list(rest, version=4 if scheme == "ipv4" else 6)
            return Target(text, round_robin=True)
        if "," not in text:
            _host_port(text)
            return Target(text, round_robin=False)
        return Target(_ip_list(text, version=None), round_robin=True)
    except _Invalid as why:
        raise InvalidArgument(
            f"The {service} service's address {address!r} is not valid: {why}; {_FORMS}."
        ) from None


def _host_port(entry: str) -> tuple[str, int]:
    """(host, port) of ``host:port`` or ``[ipv6]:port``."""
    match = _HOST_PORT.fullmatch(entry)
    if match is None:
        if entry.count(":") > 1 and "[" not in entry:
            raise _Invalid(f"{entry!r} is not host:port (write an IPv6 address as [::1]:9090)")
        raise _Invalid(f"{entry!r} is not host:port")
    port = int(match["port"])
    if not 1 <= port <= 65535:
        raise _Invalid(f"the port of {entry!r} must be between 1 and 65535")
    return match["v6"] or match["host"], port


def _dns_name(rest: str) -> None:
    """Checks what follows ``dns:``: ``[//dns-server/]name:port``."""
    name = rest
    if rest.startswith("//"):
        _server, slash, name = rest[2:].partition("/")
        if not slash:
            raise _Invalid("a dns: address is dns:///name:port")
    if "," in name:
        raise _Invalid("a dns: address names one host; list IP addresses without dns:")
    _host_port(name)


def _ip_list(text: str, version: int | None) -> str:
    """The ``ipv4:``/``ipv6:`` target of a comma list of IP addresses.

    ``version`` is the family a scheme already chose; None takes the entries' own.
    """
    entries = [entry.strip() for entry in text.split(",")]
    if "" in entries:
        raise _Invalid("an entry of the list is empty")
    hosts: list[tuple[ipaddress.IPv4Address | ipaddress.IPv6Address, int]] = []
    for entry in entries:
        host, port = _host_port(entry)
        try:
            ip = ipaddress.ip_address(host)
        except ValueError:
            raise _Invalid(
                f"a comma list must name IP addresses, and {entry!r} names a host"
            ) from None
        hosts.append((ip, port))
    versions = {ip.version for ip, _ in hosts}
    if len(versions) > 1:
        raise _Invalid("the list mixes IPv4 and IPv6 addresses")
    [found] = versions
    if version is not None and found != version:
        raise _Invalid(f"an ipv{version}: list must hold IPv{version} addresses only")
    if found == 4:
        return "ipv4:" + ",".join(f"{ip}:{port}" for ip, port in hosts)
    return "ipv6:" + ",".join(f"[{ip}]:{port}" for ip, port in hosts)


async def replicas_of(service: str, address: str) -> list[str]:
    """Every replica ``address`` stands for, one ``host:port`` each: the entries of a
    list, or what a ``dns:`` name resolves to now. For calls that must reach every
    replica, not one of them (``Access.Settle``)."""
    target = target_of(service, address)
    if not target.round_robin:
        return [address.strip()]
    scheme, _, rest = target.uri.partition(":")
    if scheme in ("ipv4", "ipv6"):
        return [entry.strip() for entry in rest.split(",")]
    name = rest[2:].partition("/")[2] if rest.startswith("//") else rest
    host, port = _host_port(name)
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    found: dict[str, None] = {}
    for family, _, _, _, sockaddr in infos:
        ip = str(sockaddr[0])
        found[f"[{ip}]:{port}" if family == socket.AF_INET6 else f"{ip}:{port}"] = None
    return list(found)
