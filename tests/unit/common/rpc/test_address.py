"""Service addresses: one, a comma list, a DNS name; balancing over real local servers."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass

import grpc
import pytest

from plumbline.common import errors
from plumbline.common.rpc import Context, GrpcServer, connect, wait_ready
from plumbline.common.rpc._address import ROUND_ROBIN, Target, replicas_of, target_of
from tests.unit.common.conftest import free_port


@pytest.mark.parametrize(
    "address",
    ["items:9090", "127.0.0.1:9090", "[::1]:9090", "items.plumbline.svc.cluster.local:9090"],
)
def test_one_address_is_given_to_grpc_unchanged(address: str) -> None:
    assert target_of("items", address) == Target(address, round_robin=False)


@pytest.mark.parametrize(
    ("address", "uri"),
    [
        ("10.0.0.7:9090,10.0.0.8:9091", "ipv4:10.0.0.7:9090,10.0.0.8:9091"),
        (" 10.0.0.7:9090 , 10.0.0.8:9090 ", "ipv4:10.0.0.7:9090,10.0.0.8:9090"),
        ("[::1]:9090,[fd00::2]:9090", "ipv6:[::1]:9090,[fd00::2]:9090"),
    ],
)
def test_a_comma_list_of_ips_is_balanced(address: str, uri: str) -> None:
    assert target_of("items", address) == Target(uri, round_robin=True)


@pytest.mark.parametrize(
    "address",
    [
        "dns:///testmgmt-headless:9090",
        "dns://10.96.0.10/testmgmt-headless.plumbline.svc:9090",
        "dns:testmgmt-headless:9090",
        "ipv4:10.0.0.7:9090,10.0.0.8:9090",
        "ipv6:[::1]:9090",
    ],
)
def test_grpc_targets_are_balanced_as_written(address: str) -> None:
    assert target_of("testmgmt", address) == Target(address, round_robin=True)


@pytest.mark.parametrize(
    ("address", "why"),
    [
        ("", "it is empty"),
        ("   ", "it is empty"),
        ("items", "'items' is not host:port"),
        ("items:http", "'items:http' is not host:port"),
        ("items:0", "the port of 'items:0' must be between 1 and 65535"),
        ("items:70000", "the port of 'items:70000' must be between 1 and 65535"),
        ("::1:9090", "'::1:9090' is not host:port (write an IPv6 address as [::1]:9090)"),
        ("10.0.0.7:9090,", "an entry of the list is empty"),
        (
            "10.0.0.7:9090,items-1:9090",
            "a comma list must name IP addresses, and 'items-1:9090' names a host",
        ),
        ("10.0.0.7:9090,[::1]:9090", "the list mixes IPv4 and IPv6 addresses"),
        ("ipv4:[::1]:9090", "an ipv4: list must hold IPv4 addresses only"),
        ("dns://10.96.0.10", "a dns: address is dns:///name:port"),
        ("dns:///items", "'items' is not host:port"),
        ("dns:///a:1,b:2", "a dns: address names one host; list IP addresses without dns:"),
    ],
)
def test_an_invalid_address_says_what_is_wrong_and_what_is_allowed(address: str, why: str) -> None:
    with pytest.raises(errors.InvalidArgument) as info:
        target_of("items", address)
    assert info.value.message == (
        f"The items service's address {address!r} is not valid: {why}; use host:port, a "
        "comma list of IP addresses (10.0.0.7:9090,10.0.0.8:9090) or dns:///name:port "
        "(round robin over every address of the name)."
    )
    assert info.value.http_status == 400


def test_connect_refuses_an_invalid_address() -> None:
    with pytest.raises(errors.InvalidArgument, match="names a host"):
        connect("items", "10.0.0.7:9090,items-1:9090")


def test_the_balancing_config_asks_for_round_robin_over_serving_addresses() -> None:
    assert json.loads(ROUND_ROBIN) == {
        "loadBalancingConfig": [{"round_robin": {}}],
        "healthCheckConfig": {"serviceName": ""},
    }


#: The one method of the test servers: it answers with the server's name.
WHO = "/test.Who/Name"


async def _server(name: str) -> GrpcServer:
    async def who(request: bytes, context: Context) -> bytes:
        return name.encode()

    server = GrpcServer("127.0.0.1", 0)
    handler: grpc.RpcMethodHandler[bytes, bytes] = grpc.unary_unary_rpc_method_handler(who)
    server.server.add_generic_rpc_handlers(
        [grpc.method_handlers_generic_handler("test.Who", {"Name": handler})]
    )
    await server.start()
    await server.set_serving(True)
    return server


@pytest.fixture
async def two_servers() -> AsyncIterator[tuple[GrpcServer, GrpcServer]]:
    first, second = await _server("first"), await _server("second")
    try:
        yield first, second
    finally:
        await first.stop(0)
        await second.stop(0)


@dataclass
class Caller:
    """A channel to an address, asking which server answers."""

    address: str
    channel: grpc.aio.Channel

    async def servers(self, calls: int = 20) -> Counter[str]:
        """Which server answered each of ``calls`` calls, one after another."""
        who: grpc.aio.UnaryUnaryMultiCallable[bytes, bytes] = self.channel.unary_unary(WHO)
        return Counter([(await who(b"")).decode() for _ in range(calls)])

    async def until_servers(self, expected: set[str]) -> None:
        """Round robin adds an address once it has connected and reported SERVING, and
        drops it once it reports otherwise; both happen in the background."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 5
        while set(await self.servers(4)) != expected:
            assert loop.time() < deadline, f"the rotation never became {expected}"


@contextlib.asynccontextmanager
async def calling(address: str) -> AsyncIterator[Caller]:
    """A ready :class:`Caller` to ``address``, closed afterwards."""
    channel = connect("items", address)
    try:
        await wait_ready(channel, f"items at {address}", 5)
        yield Caller(address, channel)
    finally:
        await channel.close()


async def test_a_comma_list_balances_over_every_server(
    two_servers: tuple[GrpcServer, GrpcServer],
) -> None:
    first, second = two_servers
    async with calling(f"127.0.0.1:{first.port},127.0.0.1:{second.port}") as caller:
        await caller.until_servers({"first", "second"})
        assert await caller.servers(20) == {"first": 10, "second": 10}


async def test_a_dns_name_is_resolved_and_balanced(
    two_servers: tuple[GrpcServer, GrpcServer],
) -> None:
    """Here the name has one address (a name with several needs a DNS server of its own);
    this checks that a dns: target resolves, passes the health check and answers."""
    first, _second = two_servers
    async with calling(f"dns:///localhost:{first.port}") as caller:
        assert await caller.servers(20) == {"first": 20}


async def test_one_address_reaches_its_server(
    two_servers: tuple[GrpcServer, GrpcServer],
) -> None:
    first, _second = two_servers
    async with calling(f"127.0.0.1:{first.port}") as caller:
        assert await caller.servers(20) == {"first": 20}


async def test_a_listed_server_that_is_down_is_skipped(
    two_servers: tuple[GrpcServer, GrpcServer],
) -> None:
    first, _second = two_servers
    async with calling(f"127.0.0.1:{free_port()},127.0.0.1:{first.port}") as caller:
        assert await caller.servers(20) == {"first": 20}


async def test_a_server_that_stops_serving_leaves_the_rotation(
    two_servers: tuple[GrpcServer, GrpcServer],
) -> None:
    """A replica draining after SIGTERM (health NOT_SERVING) gets no more calls, and
    wait_ready waits while no listed server serves."""
    first, second = two_servers
    async with calling(f"127.0.0.1:{first.port},127.0.0.1:{second.port}") as caller:
        await caller.until_servers({"first", "second"})
        await second.set_serving(False)
        await caller.until_servers({"first"})
        assert await caller.servers(20) == {"first": 20}
        await first.set_serving(False)
        with pytest.raises(errors.Unavailable, match="is not ready"):
            await wait_ready(caller.channel, f"items at {caller.address}", 0.5)
        await second.set_serving(True)
        await wait_ready(caller.channel, f"items at {caller.address}", 5)
        assert await caller.servers(20) == {"second": 20}


@pytest.mark.parametrize(
    ("address", "replicas"),
    [
        ("items:9090", ["items:9090"]),
        ("10.0.0.7:9090, 10.0.0.8:9091", ["10.0.0.7:9090", "10.0.0.8:9091"]),
        ("ipv6:[::1]:9090,[::2]:9090", ["[::1]:9090", "[::2]:9090"]),
        ("dns:///localhost:9090", ["127.0.0.1:9090"]),
    ],
)
async def test_every_replica_of_an_address(address: str, replicas: list[str]) -> None:
    found = await replicas_of("testmgmt", address)
    # localhost may also resolve to ::1; every IPv4 answer must be the loopback.
    assert [r for r in found if not r.startswith("[") or address.startswith("ipv6")] == replicas
