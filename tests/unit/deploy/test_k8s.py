"""The Kubernetes manifests: rendered with kustomize, validated against the schemas, offline."""

from __future__ import annotations

import base64
import ipaddress
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import kubernetes_validate
import pytest
import yaml

from plumbline.common.rpc import target_of
from plumbline.common.settings import Settings
from plumbline.gateway.middleware import trusted_host
from plumbline.services.hooks.secrets import Sealer

ROOT = Path(__file__).resolve().parents[3] / "deploy" / "k8s"
KUBERNETES_VERSION = "1.33.0"
#: The ConfigMap of settings every process reads (its generated name has a hash after it).
CONFIG = "plumbline-config"
APP_SERVICES = (
    "identity",
    "items",
    "testmgmt",
    "activity",
    "attachments",
    "baselines",
    "hooks",
    "reports",
    "trace",
    "gateway",
)
#: What reaches PostgreSQL: every service, and trace (the items database, read only).
WITH_DATABASE = (
    "identity",
    "items",
    "testmgmt",
    "activity",
    "attachments",
    "baselines",
    "hooks",
    "reports",
    "trace",
)
#: What migrates a database of its own (an init container): all but trace, which reads
#: items'.
MIGRATING = tuple(name for name in WITH_DATABASE if name != "trace")
#: The gRPC services each one calls (its ``runtime.channel``s, set by PLUMBLINE_<SVC>_ADDR):
#: its egress reaches exactly these, and each of these admits it.
UPSTREAMS = {
    "identity": set(),
    "items": {"identity"},  # project access, and where a new project is placed
    "testmgmt": {"identity", "items"},
    "activity": {"identity", "items"},  # items for restores
    "attachments": {"identity", "items"},
    # The owners' records at the first start (the history's start), a baseline's items.
    "baselines": {"identity", "items", "testmgmt", "attachments"},
    "hooks": {"identity"},  # project access only
    "reports": {"identity"},  # project access, and the tokens it reads the REST API with
    "trace": {"identity"},  # project access
    "gateway": {
        "identity",
        "items",
        "testmgmt",
        "activity",
        "attachments",
        "baselines",
        "hooks",
        "reports",
        "trace",
    },
}
#: The event consumers: replicas share the events' partitions under leases.
CONSUMERS = ("activity", "baselines", "hooks")
#: Deployments an HPA scales (the stateless ones; reports' replicas share a queue of
#: reports in its database, not the events' partitions).
AUTOSCALED = ("gateway", "testmgmt", "reports", "trace", *CONSUMERS)
#: Where the gateway finds each service (testmgmt: every pod, round robin).
GATEWAY_UPSTREAMS = {
    "identity": "identity:9090",
    "items": "items:9090",
    "activity": "activity:9090",
    "testmgmt": "dns:///testmgmt-headless:9090",
    "attachments": "attachments:9090",
    "baselines": "baselines:9090",
    "hooks": "hooks:9090",
    # Any pod: the reports are queued in its database and every pod's worker takes them.
    "reports": "reports:9090",
    # Traces, coverage and impact, apart from items (decision 0030).
    "trace": "trace:9090",
}
#: The services that call the REST API through the gateway (PLUMBLINE_GATEWAY_URL), and
#: where they find it: hooks reads the changed records it delivers, as a webhook's owner,
#: reports a report's data, as whoever asked for the report.
API_CLIENTS = ("hooks", "reports")
#: The index of each API client's egress rule to the gateway's HTTP port: after rules 0 to
#: 2 (database and bus, DNS, gRPC) and, for hooks, its webhook deliveries' rule 3.
API_RULE = {"hooks": 4, "reports": 3}
GATEWAY_URL = "http://gateway:8080"
#: Where attachments keeps the file bytes by default: its volume, mounted there.
FILES_PATH = "/var/lib/plumbline/files"
#: The s3-blobs component's Secret and ConfigMap (the overlay provides the ConfigMap).
S3_SECRET = "attachments-s3"
S3_CONFIG = "attachments-s3-config"
#: The Secret hooks seals the webhook signing secrets with (the same key in every replica).
WEBHOOKS_SECRET = "plumbline-webhooks"
DATABASE = (5432, "TCP")
BUS = (4222, "TCP")
DNS = {(53, "UDP"), (53, "TCP")}
#: The OpenTelemetry collector's OTLP/HTTP port (the opentelemetry component).
OTLP = 4318
#: The ports tried for what a service may send anywhere: those it uses and those it may not
#: (the object store's among them, by default).
TRIED_PORTS = {
    DATABASE,
    BUS,
    *DNS,
    *((port, "TCP") for port in (OTLP, 443, 80, 8333, 8080, 9090)),
    (53, "SCTP"),
}
#: What a policy rule without a pod or namespace selector lets through (outside the cluster).
ANYWHERE = "anywhere"
#: The address ANYWHERE stands for where a rule names addresses (an ipBlock): a public one.
PUBLIC_ADDRESS = "203.0.113.7"
#: The ranges hooks' webhook deliveries must not reach (private, link-local with the cloud
#: metadata address, loopback, shared): the cluster's pods, nodes and Services live there.
PRIVATE_RANGES = (
    "10.0.0.0/8",
    "172.16.0.0/12",
    "192.168.0.0/16",
    "169.254.0.0/16",
    "127.0.0.0/8",
    "100.64.0.0/10",
)
#: An address in each of them (a Service's, a node's, the metadata address, ...).
PRIVATE_ADDRESSES = (
    "10.96.0.10",
    "172.16.5.4",
    "192.168.1.20",
    "169.254.169.254",
    "127.0.0.1",
    "100.64.0.10",
)
#: Services that may send to public addresses on any TCP port: hooks delivers webhooks to
#: the URLs users register (any host, any port).
WEBHOOK_SENDERS = ("hooks",)
#: Scrapers run in namespaces labelled so.
METRICS = "metrics namespace"
#: The in-cluster PostgreSQL and NATS of the dev overlay.
BACKENDS = ("postgres", "nats")
#: The opentelemetry component's collector, and the overlays that use the component.
COLLECTOR = "otel-collector"
TRACED = ("dev",)
NAME = "app.kubernetes.io/name"
OVERLAYS = ("dev", "prod")


def outside(service: str, address: str = ANYWHERE) -> set[tuple[int, str]]:
    """What ``service`` may send to ``address`` outside the cluster (ANYWHERE: a public one):
    its database (if it has one), the bus, DNS; and the webhook senders, to a public address
    only, every TCP port."""
    used = {BUS, *DNS} | ({DATABASE} if service in WITH_DATABASE else set())
    if service in WEBHOOK_SENDERS and address == ANYWHERE:
        used |= {(port, protocol) for port, protocol in TRIED_PORTS if protocol == "TCP"}
    return used


def _render(overlay: str | Path) -> list[dict[str, Any]]:
    """The documents of an overlay of ours (by name) or of any kustomization directory."""
    directory = ROOT / "overlays" / overlay if isinstance(overlay, str) else overlay
    kubectl = Path(sys.executable).parent / "kubectl"
    result = subprocess.run(
        [str(kubectl), "kustomize", str(directory)],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return [doc for doc in yaml.safe_load_all(result.stdout) if doc]


@pytest.fixture(scope="module", params=OVERLAYS)
def rendered(request: pytest.FixtureRequest) -> tuple[str, list[dict[str, Any]]]:
    return request.param, _render(request.param)


@pytest.fixture(scope="module")
def dev() -> list[dict[str, Any]]:
    """The dev overlay alone: the one with PostgreSQL and NATS in the cluster."""
    return _render("dev")


def _of_kind(docs: list[dict[str, Any]], kind: str) -> dict[str, dict[str, Any]]:
    return {d["metadata"]["name"]: d for d in docs if d["kind"] == kind}


def test_every_document_is_schema_valid(rendered: tuple[str, list[dict[str, Any]]]) -> None:
    _overlay, docs = rendered
    for doc in docs:
        kubernetes_validate.validate(doc, KUBERNETES_VERSION, strict=True)


def test_one_deployment_per_service_running_its_target(
    rendered: tuple[str, list[dict[str, Any]]],
) -> None:
    overlay, docs = rendered
    deployments = _of_kind(docs, "Deployment")
    collector = {COLLECTOR} if overlay in TRACED else set()
    assert set(deployments) == set(APP_SERVICES) | collector
    for name in APP_SERVICES:
        deployment = deployments[name]
        [container] = deployment["spec"]["template"]["spec"]["containers"]
        assert container["args"] == ["run", "--target", name]
        assert container["image"].split(":")[0].endswith("plumbline")
        init = deployment["spec"]["template"]["spec"].get("initContainers", [])
        if name in MIGRATING:
            assert [c["args"] for c in init] == [["migrate", "--target", name]]
        else:
            assert init == []
        assert (
            deployment["metadata"]["namespace"]
            == {"dev": "plumbline-dev", "prod": "plumbline"}[overlay]
        )
    services = _of_kind(docs, "Service")
    assert set(APP_SERVICES) <= set(services)
    assert set(APP_SERVICES) <= set(_of_kind(docs, "ServiceAccount"))


def test_probes_resources_and_security(rendered: tuple[str, list[dict[str, Any]]]) -> None:
    _overlay, docs = rendered
    for name, deployment in _of_kind(docs, "Deployment").items():
        pod = deployment["spec"]["template"]["spec"]
        assert pod["securityContext"]["runAsNonRoot"] is True, name
        assert pod["securityContext"]["seccompProfile"]["type"] == "RuntimeDefault", name
        assert pod["automountServiceAccountToken"] is False, name
        for container in pod["containers"] + pod.get("initContainers", []):
            security = container["securityContext"]
            assert security["allowPrivilegeEscalation"] is False, name
            assert security["readOnlyRootFilesystem"] is True, name
            assert security["capabilities"]["drop"] == ["ALL"], name
            for bound in ("requests", "limits"):
                assert {"cpu", "memory"} <= set(container["resources"][bound]), (name, bound)
        [main] = pod["containers"]
        if name == COLLECTOR:  # probes its OTLP port
            continue
        assert main["livenessProbe"]["httpGet"]["path"] == "/healthz"
        assert main["readinessProbe"]["httpGet"]["path"] == "/readyz"
        assert main["startupProbe"]["httpGet"]["path"] == "/healthz"


def test_configuration_reaches_the_right_services(
    rendered: tuple[str, list[dict[str, Any]]],
) -> None:
    overlay, docs = rendered
    deployments = _of_kind(docs, "Deployment")

    def env(name: str) -> dict[str, Any]:
        container = deployments[name]["spec"]["template"]["spec"]["containers"][0]
        return {e["name"]: e for e in container["env"]}

    for name in WITH_DATABASE:
        assert "PLUMBLINE_DATABASE_URL" in env(name)
    assert "PLUMBLINE_ADMIN_PASSWORD" in env("identity")
    assert "PLUMBLINE_DATABASE_URL" not in env("gateway")
    for upstream, address in GATEWAY_UPSTREAMS.items():
        assert env("gateway")[f"PLUMBLINE_{upstream.upper()}_ADDR"]["value"] == address
    assert env("testmgmt")["PLUMBLINE_IDENTITY_ADDR"]["value"] == "identity:9090"
    assert env("testmgmt")["PLUMBLINE_ITEMS_ADDR"]["value"] == "items:9090"
    assert "PLUMBLINE_ADMIN_PASSWORD" not in env("testmgmt")
    assert env("attachments")["PLUMBLINE_ITEMS_ADDR"]["value"] == "items:9090"
    assert env("attachments")["PLUMBLINE_IDENTITY_ADDR"]["value"] == "identity:9090"
    for owner in ("items", "testmgmt", "attachments"):
        assert env("baselines")[f"PLUMBLINE_{owner.upper()}_ADDR"]["value"] == f"{owner}:9090"
    assert env("attachments")["PLUMBLINE_BLOB_URL"]["value"] == f"file://{FILES_PATH}"
    # Both read the upload limit; they must agree on it (1 GiB).
    for name in ("gateway", "attachments"):
        assert env(name)["PLUMBLINE_MAX_UPLOAD_BYTES"]["value"] == str(1 << 30), name
    for name in APP_SERVICES:
        called = set()
        for variable, value in env(name).items():
            if variable.endswith("_ADDR"):
                service = variable.removeprefix("PLUMBLINE_").removesuffix("_ADDR").lower()
                target_of(service, value["value"])  # the form the process will accept
                called.add(service)
        assert called == UPSTREAMS[name], name  # what the network policies let it reach
    for name in APP_SERVICES:
        url = env(name).get("PLUMBLINE_GATEWAY_URL", {}).get("value")
        assert url == (GATEWAY_URL if name in API_CLIENTS else None), name
    for name in APP_SERVICES:
        assert env(name)["PLUMBLINE_HOST"]["value"] == "0.0.0.0"
        if overlay in TRACED:
            assert env(name)["OTEL_SERVICE_NAME"]["value"] == f"plumbline-{name}"
            assert env(name)["OTEL_EXPORTER_OTLP_ENDPOINT"]["value"] == (
                f"http://{COLLECTOR}:{OTLP}"
            )
        else:  # tracing is off
            assert not [v for v in env(name) if v.startswith("OTEL_")], name


#: Environment variables that carry a secret: each must come from a Secret (secretKeyRef).
SECRET_VARIABLE = re.compile(r"PASSWORD|SECRET|DATABASE_URL|ACCESS_KEY|TOKEN|SIGNING|_KEY$")
#: A URL with a user and password in it.
CREDENTIALS_IN_URL = re.compile(r"://[^/@\s:]+:[^/@\s]+@")


def _secret_values(docs: list[dict[str, Any]]) -> set[str]:
    """The values of the rendered Secrets (dev's generated ones)."""
    return {
        base64.b64decode(value).decode()
        for secret in _of_kind(docs, "Secret").values()
        for value in secret.get("data", {}).values()
    } | {
        value
        for secret in _of_kind(docs, "Secret").values()
        for value in secret.get("stringData", {}).values()
    }


def _assert_no_inline_secrets(docs: list[dict[str, Any]]) -> None:
    """No workload's environment holds a secret inline, and no ConfigMap does either:
    passwords, database URLs, S3 credentials come from Secrets through secretKeyRef."""
    secrets = _secret_values(docs)
    assert all(len(value) >= 8 for value in secrets)  # long enough to search for

    def inline(value: str) -> list[str]:
        found = [s for s in secrets if s in value]
        if CREDENTIALS_IN_URL.search(value) or "password" in value.lower():
            found.append(value)
        return found

    for kind in ("Deployment", "StatefulSet"):
        for name, workload in _of_kind(docs, kind).items():
            pod = workload["spec"]["template"]["spec"]
            for container in pod["containers"] + pod.get("initContainers", []):
                assert "envFrom" not in container, (name, container["name"])
                for variable in container.get("env", []):
                    where = (name, container["name"], variable["name"])
                    if SECRET_VARIABLE.search(variable["name"]):
                        assert set(variable) == {"name", "valueFrom"}, where
                        assert set(variable["valueFrom"]) == {"secretKeyRef"}, where
                    assert inline(variable.get("value", "")) == [], where
                for argument in container.get("args", []) + container.get("command", []):
                    assert inline(argument) == [], (name, container["name"])
    for name, config_map in _of_kind(docs, "ConfigMap").items():
        for key, value in config_map.get("data", {}).items():
            assert inline(value) == [], (name, key)


def test_no_secret_is_inline(rendered: tuple[str, list[dict[str, Any]]]) -> None:
    _overlay, docs = rendered
    _assert_no_inline_secrets(docs)
    pod = _of_kind(docs, "Deployment")["identity"]["spec"]["template"]["spec"]
    env = {e["name"]: e for e in pod["containers"][0]["env"]}
    reference = env["PLUMBLINE_ADMIN_PASSWORD"]["valueFrom"]["secretKeyRef"]
    assert reference["key"] == "password"
    assert reference["name"].startswith("plumbline-admin")
    pod = _of_kind(docs, "Deployment")["hooks"]["spec"]["template"]["spec"]
    env = {e["name"]: e for e in pod["containers"][0]["env"]}
    reference = env["PLUMBLINE_WEBHOOKS_KEY"]["valueFrom"]["secretKeyRef"]
    assert reference["key"] == "key"
    assert reference["name"].startswith(WEBHOOKS_SECRET)
    [migrate] = pod["initContainers"]  # migrating seals nothing
    assert "PLUMBLINE_WEBHOOKS_KEY" not in {e["name"] for e in migrate["env"]}
    for name in set(APP_SERVICES) - {"hooks"}:
        [container] = _of_kind(docs, "Deployment")[name]["spec"]["template"]["spec"]["containers"]
        assert "PLUMBLINE_WEBHOOKS_KEY" not in {e["name"] for e in container["env"]}, name
    for name in WITH_DATABASE:
        pod = _of_kind(docs, "Deployment")[name]["spec"]["template"]["spec"]
        for container in pod["containers"] + pod.get("initContainers", []):
            env = {e["name"]: e for e in container["env"]}
            reference = env["PLUMBLINE_DATABASE_URL"]["valueFrom"]["secretKeyRef"]
            assert reference["key"] == "url"
            assert reference["name"].startswith("plumbline-database"), name


def test_dev_secrets_are_generated_and_marked_dev_only(
    dev: list[dict[str, Any]], tmp_path: Path
) -> None:
    """dev generates its Secrets from values in the repository, each saying it is for
    development only (the webhooks key, base64 of 32 bytes, in its comment); the services'
    database URL carries PostgreSQL's own password."""
    secrets = {
        name.rsplit("-", 1)[0]: {
            key: base64.b64decode(value).decode() for key, value in secret["data"].items()
        }
        for name, secret in _of_kind(dev, "Secret").items()
    }
    assert set(secrets) == {"plumbline-database", "plumbline-admin", WEBHOOKS_SECRET, "postgres"}
    key = secrets.pop(WEBHOOKS_SECRET)["key"]
    Sealer.from_settings(key, tmp_path)  # the form hooks accepts
    assert list(tmp_path.iterdir()) == []  # and uses, rather than a key file of its own
    for values in secrets.values():
        assert all("dev-only" in value for value in values.values()), values
    url = secrets["plumbline-database"]["url"]
    assert f":{secrets['postgres']['password']}@postgres:5432/" in url
    assert "{service}" in url


def _matches(selector: dict[str, Any], app: str) -> bool:
    """Whether a pod selector picks the pods of ``app`` (labelled with its name)."""
    labels = {NAME: app}
    if any(labels.get(key) != value for key, value in selector.get("matchLabels", {}).items()):
        return False
    for expression in selector.get("matchExpressions", []):
        assert expression["operator"] == "In", "teach _matches the other operators"
        if labels.get(expression["key"]) not in expression["values"]:
            return False
    return True


def _admits_peer(peer: dict[str, Any], other: str) -> bool:
    """Whether one ``from``/``to`` entry names ``other`` (an app, METRICS, ANYWHERE or an
    address outside the cluster)."""
    if "ipBlock" in peer:
        address = _address(other)
        block = peer["ipBlock"]
        return (
            address is not None
            and address in ipaddress.ip_network(block["cidr"])
            and not any(address in ipaddress.ip_network(e) for e in block.get("except", []))
        )
    if "namespaceSelector" in peer:
        assert "podSelector" not in peer, "teach _admits_peer namespace and pod selectors"
        return other == METRICS
    return other != METRICS and _address(other) is None and _matches(peer["podSelector"], other)


def _address(other: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """The address outside the cluster ``other`` is (ANYWHERE: a public one), or None for a
    pod's app or METRICS."""
    try:
        return ipaddress.ip_address(PUBLIC_ADDRESS if other == ANYWHERE else other)
    except ValueError:
        return None


def _admits(rule: dict[str, Any], peers: str, other: str, port: int, protocol: str) -> bool:
    ports = rule.get("ports")
    if ports is not None and not any(  # an entry without a port: every port
        p.get("port", port) == port and p.get("protocol", "TCP") == protocol for p in ports
    ):
        return False
    return not rule.get(peers) or any(_admits_peer(peer, other) for peer in rule[peers])


def _allows(
    policies: dict[str, dict[str, Any]],
    direction: str,
    app: str,
    other: str,
    port: int,
    protocol: str,
) -> bool:
    """Whether ``app``'s pods may take traffic from ``other`` (ingress) or send it there
    (egress): free unless a policy of that direction selects them, else one rule must admit."""
    kind = direction.capitalize()
    selecting = [
        p["spec"]
        for p in policies.values()
        if kind in p["spec"]["policyTypes"] and _matches(p["spec"]["podSelector"], app)
    ]
    peers = "from" if direction == "ingress" else "to"
    return not selecting or any(
        _admits(rule, peers, other, port, protocol)
        for spec in selecting
        for rule in spec.get(direction, [])
    )


def can_reach(
    policies: dict[str, dict[str, Any]], source: str, target: str, port: int, protocol: str = "TCP"
) -> bool:
    """Whether the source's egress and the target's ingress both let a connection through
    (the target: an app, or ANYWHERE or an address outside the cluster)."""
    leaves = source in (METRICS, ANYWHERE) or _allows(
        policies, "egress", source, target, port, protocol
    )
    enters = _address(target) is not None or _allows(
        policies, "ingress", target, source, port, protocol
    )
    return leaves and enters


def _sources(policies: dict[str, dict[str, Any]], target: str, port: int) -> set[str]:
    candidates = (*APP_SERVICES, *BACKENDS, COLLECTOR, METRICS)
    return {s for s in candidates if can_reach(policies, s, target, port)}


def test_services_take_grpc_only_from_their_callers(
    rendered: tuple[str, list[dict[str, Any]]],
) -> None:
    _overlay, docs = rendered
    policies = _of_kind(docs, "NetworkPolicy")
    assert set(APP_SERVICES) <= set(policies)
    assert policies["default-deny-ingress"]["spec"]["podSelector"] == {}
    callers = {name: _sources(policies, name, 9090) for name in APP_SERVICES}
    assert callers == {
        name: {caller for caller, called in UPSTREAMS.items() if name in called}
        for name in APP_SERVICES
    }
    assert callers["identity"] == set(APP_SERVICES) - {"identity"}
    assert callers["gateway"] == set()
    for name in APP_SERVICES:
        if name == "gateway":  # the API, from anywhere
            assert _allows(policies, "ingress", name, ANYWHERE, 8080, "TCP")
        else:  # health and metrics
            assert _sources(policies, name, 8080) == {METRICS}, name


def _assert_egress(
    policies: dict[str, dict[str, Any]],
    source: str,
    *,
    traced: bool,
    also: frozenset[tuple[int, str]] = frozenset(),
) -> None:
    """``source`` reaches exactly its upstreams over gRPC, the collector exactly when
    ``traced``, and of the ports tried, exactly ``outside(source, address)`` and ``also`` at
    a public address and at private ones."""
    assert {t for t in APP_SERVICES if can_reach(policies, source, t, 9090)} == UPSTREAMS[source]
    # HTTP: the gateway's REST API for its clients; no other service's (health, metrics).
    api = {"gateway"} if source in API_CLIENTS else set()
    assert {t for t in APP_SERVICES if can_reach(policies, source, t, 8080)} == api, source
    assert can_reach(policies, source, COLLECTOR, OTLP) == traced, source
    assert not can_reach(policies, source, COLLECTOR, 8080), source
    for address in (ANYWHERE, *PRIVATE_ADDRESSES):
        allowed = outside(source, address) | also
        for port, protocol in TRIED_PORTS:
            assert can_reach(policies, source, address, port, protocol) == (
                (port, protocol) in allowed
            ), (source, address, port, protocol)


@pytest.mark.parametrize("source", APP_SERVICES)
def test_egress_reaches_exactly_what_is_used(
    rendered: tuple[str, list[dict[str, Any]]], source: str
) -> None:
    overlay, docs = rendered
    policies = _of_kind(docs, "NetworkPolicy")
    _assert_egress(policies, source, traced=overlay in TRACED)
    if overlay == "dev":
        assert can_reach(policies, source, "postgres", 5432) == (source in WITH_DATABASE)
        assert can_reach(policies, source, "nats", 4222)
        for backend, port in (("postgres", 4222), ("nats", 5432), ("nats", 8222)):
            assert not can_reach(policies, source, backend, port)


def test_the_database_port_is_patched_as_documented(tmp_path: Path) -> None:
    """Every policy keeps the database in egress rule 0 (the network-policies README)."""
    with_database = "|".join(WITH_DATABASE)
    (tmp_path / "kustomization.yaml").write_text(
        yaml.safe_dump(
            {
                "resources": [os.path.relpath(ROOT / "overlays" / "prod", tmp_path)],
                "patches": [
                    {
                        "target": {"kind": "NetworkPolicy", "name": with_database},
                        "patch": (
                            "- {op: test, path: /spec/egress/0/ports/0/port, value: 5432}\n"
                            "- {op: replace, path: /spec/egress/0/ports/0/port, value: 6432}\n"
                        ),
                    }
                ],
            }
        )
    )
    policies = _of_kind(_render(tmp_path), "NetworkPolicy")
    # A private address, as a database's is: hooks may send to a public one on any TCP port.
    database = PRIVATE_ADDRESSES[0]
    for source in APP_SERVICES:
        assert can_reach(policies, source, database, 6432) == (source in WITH_DATABASE)
        assert not can_reach(policies, source, database, 5432)
        assert can_reach(policies, source, database, 4222)


def test_hooks_delivers_webhooks_to_public_addresses_only(
    rendered: tuple[str, list[dict[str, Any]]],
) -> None:
    """hooks POSTs to the URLs users register (any host, any port): its egress lets it out to
    public addresses on any TCP port, never to the private ranges (the cluster's pods, nodes
    and Services, the cloud metadata address); no other service goes there."""
    _overlay, docs = rendered
    policies = _of_kind(docs, "NetworkPolicy")
    [block] = [
        peer["ipBlock"]
        for rule in policies["hooks"]["spec"]["egress"]
        for peer in rule.get("to", [])
        if "ipBlock" in peer
    ]
    assert block["cidr"] == "0.0.0.0/0"
    assert sorted(block["except"]) == sorted(PRIVATE_RANGES)
    for address in PRIVATE_ADDRESSES:
        assert any(ipaddress.ip_address(address) in ipaddress.ip_network(r) for r in PRIVATE_RANGES)
    for port in (443, 80, 8443, 9000):  # a URL names its own port
        assert can_reach(policies, "hooks", ANYWHERE, port), port
        assert not can_reach(policies, "hooks", ANYWHERE, port, "UDP"), port
        for address in PRIVATE_ADDRESSES:
            assert not can_reach(policies, "hooks", address, port), (address, port)
        for source in set(APP_SERVICES) - set(WEBHOOK_SENDERS):
            assert not can_reach(policies, source, ANYWHERE, port), (source, port)


@pytest.mark.parametrize("client", API_CLIENTS)
def test_api_clients_call_the_rest_api_through_the_gateway(
    rendered: tuple[str, list[dict[str, Any]]], client: str
) -> None:
    """hooks reads the changed records it delivers from the REST API, as a webhook's owner,
    and reports a report's data, as whoever asked for it: the PLUMBLINE_GATEWAY_URL names
    the gateway Service's HTTP port (a base URL, no path), and the client's policy lets it
    there (a rule of its own: hooks' 4, after the webhook deliveries' 3; reports' 3) and to
    no other service's HTTP port, nor to the gateway's gRPC one."""
    _overlay, docs = rendered
    pod = _of_kind(docs, "Deployment")[client]["spec"]["template"]["spec"]
    [container] = pod["containers"]
    url = urlsplit({e["name"]: e for e in container["env"]}["PLUMBLINE_GATEWAY_URL"]["value"])
    assert url.scheme == "http"
    assert (url.path, url.query, url.fragment) == ("", "", "")  # a base URL: no path
    assert url.username is None  # no credentials: a token of the user it acts for
    [migrate] = pod["initContainers"]  # migrating calls nothing
    assert "PLUMBLINE_GATEWAY_URL" not in {e["name"] for e in migrate["env"]}
    service = _of_kind(docs, "Service")[str(url.hostname)]["spec"]
    assert service["selector"] == {NAME: "gateway"}
    [port] = [p for p in service["ports"] if p["port"] == url.port]
    assert port["name"] == "http"
    [gateway] = _of_kind(docs, "Deployment")["gateway"]["spec"]["template"]["spec"]["containers"]
    container_port = {p["name"]: p["containerPort"] for p in gateway["ports"]}[port["targetPort"]]
    policies = _of_kind(docs, "NetworkPolicy")
    assert can_reach(policies, client, "gateway", container_port)
    assert not can_reach(policies, client, "gateway", 9090)
    for target in set(APP_SERVICES) - {"gateway"}:
        assert not can_reach(policies, client, target, container_port), target
    # The client's own egress holds it too, whatever the others' ingress admits.
    for target, port in {(t, container_port) for t in APP_SERVICES} | {("gateway", 9090)}:
        allowed = (target, port) == ("gateway", container_port) or (
            port == 9090 and target in UPSTREAMS[client]
        )
        assert _allows(policies, "egress", client, target, port, "TCP") == allowed, (target, port)
    # Rules 0 to 3 keep their documented indices (patches use them): the API comes after.
    egress = policies[client]["spec"]["egress"]
    if client in WEBHOOK_SENDERS:
        assert "ipBlock" in egress[3]["to"][0]
    assert egress[API_RULE[client]] == {
        "to": [{"podSelector": {"matchLabels": {NAME: "gateway"}}}],
        "ports": [{"port": container_port, "protocol": "TCP"}],
    }


def test_reports_makes_reports_with_room_of_its_own(
    rendered: tuple[str, list[dict[str, Any]]],
) -> None:
    """reports renders spreadsheets: more memory than the others, a bounded /tmp to spool
    rows and write files in, a set number of reports at once per pod, and an HPA of its own
    (replicas share a queue in its database, so the partition count does not bound it)."""
    overlay, docs = rendered
    deployment = _of_kind(docs, "Deployment")["reports"]
    pod = deployment["spec"]["template"]["spec"]
    [container] = pod["containers"]
    assert container["resources"] == {
        "requests": {"cpu": "100m", "memory": "192Mi"},
        "limits": {"cpu": "1", "memory": "768Mi"},
    }
    env = {e["name"]: e for e in container["env"]}
    concurrency = env["PLUMBLINE_REPORTS_CONCURRENCY"]["value"]
    assert Settings(reports_concurrency=concurrency).reports_concurrency == 2
    assert env["PLUMBLINE_IDENTITY_ADDR"]["value"] == "identity:9090"
    assert env["PLUMBLINE_GATEWAY_URL"]["value"] == GATEWAY_URL
    assert "PLUMBLINE_WEBHOOKS_KEY" not in env
    volumes = {v["name"]: v for v in pod["volumes"]}
    [tmp] = [m for m in container["volumeMounts"] if m["mountPath"] == "/tmp"]
    assert volumes[tmp["name"]] == {"name": tmp["name"], "emptyDir": {"sizeLimit": "1Gi"}}
    assert not any("persistentVolumeClaim" in v for v in volumes.values())
    spec = _of_kind(docs, "HorizontalPodAutoscaler")["reports"]["spec"]
    testmgmt = _of_kind(docs, "HorizontalPodAutoscaler")["testmgmt"]["spec"]
    assert (spec["minReplicas"], spec["maxReplicas"]) == (2, 10)
    assert spec["metrics"] == testmgmt["metrics"]
    assert _of_kind(docs, "PodDisruptionBudget")["reports"]["spec"] == {
        "maxUnavailable": 1,
        "selector": {"matchLabels": {NAME: "reports"}},
    }
    # As hooks is, but for the webhooks and what a webhook sender may reach.
    for kind in ("Service", "ServiceAccount"):
        of_kind = _of_kind(docs, kind)
        assert of_kind["reports"] == _renamed(of_kind["hooks"], "hooks", "reports"), kind
    policies = _of_kind(docs, "NetworkPolicy")
    assert policies["reports"]["spec"]["ingress"] == _renamed(
        policies["hooks"]["spec"]["ingress"], "hooks", "reports"
    )
    assert _sources(policies, "reports", 9090) == {"gateway"}
    assert _sources(policies, "reports", 8080) == {METRICS}
    if overlay == "prod":
        assert deployment["spec"]["replicas"] == 2


def _without_env(deployment: dict[str, Any], *names: str) -> Any:
    """A copy of ``deployment`` without the environment variables ``names``."""
    copy = json.loads(json.dumps(deployment))
    for container in copy["spec"]["template"]["spec"]["containers"]:
        container["env"] = [e for e in container["env"] if e["name"] not in names]
    return copy


def _without_egress(policy: dict[str, Any]) -> Any:
    copy = json.loads(json.dumps(policy))
    del copy["spec"]["egress"]
    return copy


def _renamed(doc: dict[str, Any], old: str, new: str) -> Any:
    return json.loads(json.dumps(doc).replace(old, new))


#: The other event consumers, and the environment variables (the upstream addresses,
#: PLUMBLINE_<SVC>_ADDR, and hooks' webhooks key) in which each Deployment differs from
#: activity's: those it has and activity has not, and the reverse.
LIKE_ACTIVITY = {
    # Its first start reads every owner's records (the history's start).
    "baselines": (("PLUMBLINE_TESTMGMT_ADDR", "PLUMBLINE_ATTACHMENTS_ADDR"), ()),
    # Project access only: no items (activity's, for restores); the key it seals the
    # webhook signing secrets with; and the REST API's URL (it reads the changed records).
    "hooks": (("PLUMBLINE_WEBHOOKS_KEY", "PLUMBLINE_GATEWAY_URL"), ("PLUMBLINE_ITEMS_ADDR",)),
}


@pytest.mark.parametrize("consumer", LIKE_ACTIVITY)
def test_the_consumers_are_shaped_like_activity(
    rendered: tuple[str, list[dict[str, Any]]], consumer: str
) -> None:
    """An event consumer with its own database and a gRPC API for the gateway, like
    activity: the same Deployment (but for the services it calls), Service, policy, budget
    and replicas, HPA, no volume."""
    _overlay, docs = rendered
    own, activity_only = LIKE_ACTIVITY[consumer]
    for kind in ("Deployment", "Service", "ServiceAccount", "NetworkPolicy", "PodDisruptionBudget"):
        of_kind = _of_kind(docs, kind)
        shaped, activity = of_kind[consumer], of_kind["activity"]
        if kind == "Deployment":
            shaped, activity = _without_env(shaped, *own), _without_env(activity, *activity_only)
        if kind == "NetworkPolicy":  # egress: test_egress_reaches_exactly_what_is_used
            shaped, activity = _without_egress(shaped), _without_egress(activity)
        assert shaped == _renamed(activity, "activity", consumer), kind
    hpas = _of_kind(docs, "HorizontalPodAutoscaler")
    assert hpas[consumer] == _renamed(hpas["activity"], "activity", consumer)
    pod = _of_kind(docs, "Deployment")[consumer]["spec"]["template"]["spec"]
    assert not any("persistentVolumeClaim" in v for v in pod["volumes"])
    policies = _of_kind(docs, "NetworkPolicy")
    assert can_reach(policies, "gateway", consumer, 9090)
    assert _sources(policies, consumer, 9090) == {"gateway"}
    assert _sources(policies, consumer, 8080) == {METRICS}


def test_the_in_cluster_backends_admit_their_clients(dev: list[dict[str, Any]]) -> None:
    """PostgreSQL admits the services with a database, NATS every Plumbline process (each
    writes events or follows them: identity its outbox, the gateway identity's events)."""
    policies = _of_kind(dev, "NetworkPolicy")
    assert _sources(policies, "postgres", 5432) == set(WITH_DATABASE)
    assert _sources(policies, "nats", 4222) == set(APP_SERVICES)
    for backend in BACKENDS:
        for port in (5432, 4222, 8222, 8080):
            if (backend, port) not in {("postgres", 5432), ("nats", 4222)}:
                assert _sources(policies, backend, port) == set(), (backend, port)


def test_the_collector_takes_the_services_traces(dev: list[dict[str, Any]]) -> None:
    """The opentelemetry component brings the otel-collector the services send to, which
    listens where they send and admits them only."""
    policies = _of_kind(dev, "NetworkPolicy")
    assert _sources(policies, COLLECTOR, OTLP) == set(APP_SERVICES)
    assert _sources(policies, COLLECTOR, 8080) == set()
    [port] = _of_kind(dev, "Service")[COLLECTOR]["spec"]["ports"]
    assert port["port"] == OTLP
    pod = _of_kind(dev, "Deployment")[COLLECTOR]["spec"]["template"]["spec"]
    [container] = pod["containers"]
    assert container["image"].startswith("otel/opentelemetry-collector:")
    assert {p["name"]: p["containerPort"] for p in container["ports"]}[port["targetPort"]] == OTLP
    [config_arg] = container["args"]
    path = Path(config_arg.removeprefix("--config="))
    [mount] = [m for m in container["volumeMounts"] if Path(m["mountPath"]) == path.parent]
    [volume] = [v for v in pod["volumes"] if v["name"] == mount["name"]]
    config_map = _of_kind(dev, "ConfigMap")[volume["configMap"]["name"]]
    config = yaml.safe_load(config_map["data"][path.name])
    assert config["receivers"]["otlp"]["protocols"]["http"]["endpoint"] == f"0.0.0.0:{OTLP}"
    assert config["service"]["pipelines"]["traces"]["receivers"] == ["otlp"]
    assert container["readinessProbe"]["tcpSocket"]["port"] == port["targetPort"]


def test_the_collector_config_is_replaced_as_documented(tmp_path: Path) -> None:
    """prod with the opentelemetry component and the README's patch of its configuration."""
    readme = (ROOT / "components" / "opentelemetry" / "README.md").read_text()
    [patch] = [
        block.removeprefix("yaml\n")
        for block in readme.split("```")[1::2]
        if "kind: ConfigMap" in block
    ]
    (tmp_path / "otel-collector-config.yaml").write_text(patch)
    (tmp_path / "kustomization.yaml").write_text(
        yaml.safe_dump(
            {
                "resources": [os.path.relpath(ROOT / "overlays" / "prod", tmp_path)],
                "components": [os.path.relpath(ROOT / "components" / "opentelemetry", tmp_path)],
                "patches": [{"path": "otel-collector-config.yaml"}],
            }
        )
    )
    docs = _render(tmp_path)
    [config_map] = [c for n, c in _of_kind(docs, "ConfigMap").items() if n.startswith(COLLECTOR)]
    config = yaml.safe_load(config_map["data"]["config.yaml"])
    assert config["service"]["pipelines"]["traces"]["exporters"] == ["otlphttp"]
    pod = _of_kind(docs, "Deployment")[COLLECTOR]["spec"]["template"]["spec"]
    assert pod["volumes"][0]["configMap"]["name"] == config_map["metadata"]["name"]
    policies = _of_kind(docs, "NetworkPolicy")
    assert _sources(policies, COLLECTOR, OTLP) == set(APP_SERVICES)
    for source in APP_SERVICES:
        _assert_egress(policies, source, traced=True)


def test_testmgmt_has_a_headless_service_for_the_gateway(
    rendered: tuple[str, list[dict[str, Any]]],
) -> None:
    _overlay, docs = rendered
    services = _of_kind(docs, "Service")
    headless = services["testmgmt-headless"]["spec"]
    assert headless["clusterIP"] == "None"
    assert headless["selector"] == {NAME: "testmgmt"}
    assert [(p["port"], p["targetPort"]) for p in headless["ports"]] == [(9090, "grpc")]
    assert services["testmgmt"]["spec"].get("clusterIP") is None  # the ordinary one stays
    target = target_of("testmgmt", GATEWAY_UPSTREAMS["testmgmt"])
    assert target.round_robin
    assert target.uri == "dns:///testmgmt-headless:9090"


def test_the_stateless_services_autoscale_on_cpu(
    rendered: tuple[str, list[dict[str, Any]]],
) -> None:
    _overlay, docs = rendered
    hpas = _of_kind(docs, "HorizontalPodAutoscaler")
    deployments = _of_kind(docs, "Deployment")
    assert set(hpas) == set(AUTOSCALED)
    for name in AUTOSCALED:
        spec = hpas[name]["spec"]
        assert spec["scaleTargetRef"] == {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "name": name,
        }
        assert [m["resource"]["name"] for m in spec["metrics"]] == ["cpu"]
        assert spec["minReplicas"] >= 2
        [container] = deployments[name]["spec"]["template"]["spec"]["containers"]
        assert "cpu" in container["resources"]["requests"]  # utilisation is relative to it
    assert set(_of_kind(docs, "PodDisruptionBudget")) == set(APP_SERVICES)


def test_every_process_splits_events_into_the_consumers_partitions(
    rendered: tuple[str, list[dict[str, Any]]],
) -> None:
    """Publishers and consumers agree on the partitions (one ConfigMap key), and the
    consumers' autoscalers stop at that count: a pod beyond it would only stand by."""
    _overlay, docs = rendered
    [config] = [c for n, c in _of_kind(docs, "ConfigMap").items() if n.startswith(CONFIG)]
    partitions = int(config["data"]["event_partitions"])
    assert partitions > 1
    for name, deployment in _of_kind(docs, "Deployment").items():
        if name not in APP_SERVICES:
            continue
        [container] = deployment["spec"]["template"]["spec"]["containers"]
        [ref] = [e for e in container["env"] if e["name"] == "PLUMBLINE_EVENT_PARTITIONS"]
        key = ref["valueFrom"]["configMapKeyRef"]
        assert key["name"].startswith(CONFIG), name
        assert key["key"] == "event_partitions", name
    hpas = _of_kind(docs, "HorizontalPodAutoscaler")
    for consumer in CONSUMERS:
        assert hpas[consumer]["spec"]["maxReplicas"] == partitions


def test_dev_runs_its_own_backends_and_prod_does_not(
    rendered: tuple[str, list[dict[str, Any]]],
) -> None:
    overlay, docs = rendered
    statefulsets = set(_of_kind(docs, "StatefulSet"))
    if overlay == "dev":
        assert statefulsets == {"postgres", "nats"}
        assert set(_of_kind(docs, "Namespace")) == {"plumbline-dev"}  # apply needs nothing first
        assert {"plumbline-database", "plumbline-admin", WEBHOOKS_SECRET} <= {
            name.rsplit("-", 1)[0] for name in _of_kind(docs, "Secret")
        }
    else:
        assert statefulsets == set()
        assert _of_kind(docs, "Secret") == {}  # the operator's
        assert _of_kind(docs, "Namespace") == {}
        replicas = {n: d["spec"]["replicas"] for n, d in _of_kind(docs, "Deployment").items()}
        assert replicas.pop("attachments") == 1  # its volume is ReadWriteOnce
        assert set(replicas.values()) == {2}


def _attachments_pod(docs: list[dict[str, Any]]) -> dict[str, Any]:
    pod: dict[str, Any] = _of_kind(docs, "Deployment")["attachments"]["spec"]["template"]["spec"]
    return pod


def test_attachments_keeps_its_files_on_one_volume(
    rendered: tuple[str, list[dict[str, Any]]],
) -> None:
    _overlay, docs = rendered
    deployment = _of_kind(docs, "Deployment")["attachments"]
    # ReadWriteOnce: one pod, and the old one gone before the new one mounts the volume.
    assert deployment["spec"]["replicas"] == 1
    assert deployment["spec"]["strategy"] == {"type": "Recreate"}
    claim = _of_kind(docs, "PersistentVolumeClaim")["attachments-files"]
    assert claim["spec"]["accessModes"] == ["ReadWriteOnce"]
    pod = _attachments_pod(docs)
    volumes = {v["name"]: v for v in pod["volumes"]}
    [container] = pod["containers"]
    [files] = [m for m in container["volumeMounts"] if m["mountPath"] == FILES_PATH]
    assert volumes[files["name"]]["persistentVolumeClaim"] == {"claimName": "attachments-files"}
    assert not files.get("readOnly", False)
    for init in pod["initContainers"]:  # migrating needs no files
        assert FILES_PATH not in {m["mountPath"] for m in init["volumeMounts"]}
    assert "attachments" not in _of_kind(docs, "HorizontalPodAutoscaler")


def _with_s3_blobs(
    directory: Path, object_store_port: int | None = None, base: str = "prod"
) -> Path:
    """A copy of the overlay ``base`` in ``directory`` with the s3-blobs component after its
    others, the settings ConfigMap it needs, and (if given) the README's patch of the
    object store's port."""
    overlay = ROOT / "overlays" / base
    kustomization = yaml.safe_load((overlay / "kustomization.yaml").read_text())

    directory.mkdir(parents=True, exist_ok=True)

    def moved(path: str) -> str:
        """Kustomize takes directories by relative path, and files only in or below the
        kustomization's own (the overlay's manifests are copied)."""
        source = (overlay / path).resolve()
        if source.is_file():
            shutil.copy(source, directory / source.name)
            return source.name
        return os.path.relpath(source, directory)

    kustomization["resources"] = [moved(p) for p in kustomization["resources"]]
    kustomization["components"] = [
        *(moved(p) for p in kustomization["components"]),
        os.path.relpath(ROOT / "components" / "s3-blobs", directory),
    ]
    kustomization["configMapGenerator"].append(
        {
            "name": S3_CONFIG,
            "literals": [
                "blob_url=s3://plumbline-files",
                "endpoint=https://objects.example.internal",
                "region=eu-central-1",
            ],
        }
    )
    if object_store_port is not None:
        kustomization["patches"] = [
            {
                "target": {"kind": "NetworkPolicy", "name": "attachments"},
                "patch": (
                    "- {op: test, path: /spec/egress/2/ports/0/port, value: 443}\n"
                    f"- {{op: replace, path: /spec/egress/2/ports/0/port, value: {object_store_port}}}\n"
                ),
            }
        ]
    (directory / "kustomization.yaml").write_text(yaml.safe_dump(kustomization))
    return directory


@pytest.fixture(scope="module")
def s3(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    """prod with the s3-blobs component."""
    return _render(_with_s3_blobs(tmp_path_factory.mktemp("prod-s3")))


@pytest.fixture(scope="module")
def dev_s3(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    """dev (with its collector) and the s3-blobs component."""
    return _render(_with_s3_blobs(tmp_path_factory.mktemp("dev-s3"), base="dev"))


def test_s3_blobs_is_schema_valid(s3: list[dict[str, Any]], dev_s3: list[dict[str, Any]]) -> None:
    for doc in s3 + dev_s3:
        kubernetes_validate.validate(doc, KUBERNETES_VERSION, strict=True)


def test_s3_blobs_takes_its_credentials_from_the_secret(s3: list[dict[str, Any]]) -> None:
    [container] = _attachments_pod(s3)["containers"]
    env = {e["name"]: e for e in container["env"]}
    assert len(env) == len(container["env"])  # no variable twice
    for name, key in {
        "PLUMBLINE_S3_ACCESS_KEY_ID": "access_key_id",
        "PLUMBLINE_S3_SECRET_ACCESS_KEY": "secret_access_key",
    }.items():
        assert env[name] == {
            "name": name,
            "valueFrom": {"secretKeyRef": {"name": S3_SECRET, "key": key}},
        }
    [config] = [n for n in _of_kind(s3, "ConfigMap") if n.startswith(f"{S3_CONFIG}-")]
    for name, key in {
        "PLUMBLINE_BLOB_URL": "blob_url",
        "PLUMBLINE_S3_ENDPOINT": "endpoint",
        "PLUMBLINE_S3_REGION": "region",
    }.items():
        assert env[name] == {
            "name": name,
            "valueFrom": {"configMapKeyRef": {"name": config, "key": key}},
        }
    assert _of_kind(s3, "ConfigMap")[config]["data"]["blob_url"].startswith("s3://")
    assert _of_kind(s3, "Secret") == {}  # created out of band
    for name in _of_kind(s3, "ConfigMap"):  # nothing secret in plain configuration
        assert "secret" not in str(_of_kind(s3, "ConfigMap")[name]["data"]).lower()


def test_s3_blobs_keeps_its_credentials_out_of_the_manifests(
    s3: list[dict[str, Any]], dev_s3: list[dict[str, Any]]
) -> None:
    _assert_no_inline_secrets(s3)
    _assert_no_inline_secrets(dev_s3)


def test_s3_blobs_drops_the_volume(s3: list[dict[str, Any]]) -> None:
    pod = _attachments_pod(s3)
    assert "attachments-files" not in _of_kind(s3, "PersistentVolumeClaim")
    assert not any("persistentVolumeClaim" in v for v in pod["volumes"])
    for container in pod["containers"] + pod["initContainers"]:
        assert FILES_PATH not in {m["mountPath"] for m in container["volumeMounts"]}
    # Stateless now: the ordinary rolling update.
    assert _of_kind(s3, "Deployment")["attachments"]["spec"]["strategy"]["type"] == (
        "RollingUpdate"
    )


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_s3_blobs_lets_attachments_alone_out_to_the_object_store(
    s3: list[dict[str, Any]], dev_s3: list[dict[str, Any]], overlay: str
) -> None:
    docs = {"prod": s3, "dev": dev_s3}[overlay]
    policies = _of_kind(docs, "NetworkPolicy")
    store = frozenset({(443, "TCP")})
    for source in APP_SERVICES:  # the rest is as without the component
        also = store if source == "attachments" else frozenset()
        _assert_egress(policies, source, traced=overlay in TRACED, also=also)
    assert _sources(policies, "attachments", 9090) == {"gateway", "baselines"}


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_the_object_store_port_is_patched_as_documented(tmp_path: Path, overlay: str) -> None:
    docs = _render(_with_s3_blobs(tmp_path / "s3", object_store_port=8333, base=overlay))
    policies = _of_kind(docs, "NetworkPolicy")
    for source in APP_SERVICES:
        also = frozenset({(8333, "TCP")}) if source == "attachments" else frozenset()
        _assert_egress(policies, source, traced=overlay in TRACED, also=also)


def test_s3_blobs_without_network_policies_holds_nothing(tmp_path: Path) -> None:
    """Its policy rule patches the network-policies component's; alone it adds no policy
    (which would hold all of attachments' other egress)."""
    (tmp_path / "kustomization.yaml").write_text(
        yaml.safe_dump(
            {
                "resources": [os.path.relpath(ROOT / "base", tmp_path)],
                "components": [os.path.relpath(ROOT / "components" / "s3-blobs", tmp_path)],
            }
        )
    )
    docs = _render(tmp_path)
    assert _of_kind(docs, "NetworkPolicy") == {}
    assert FILES_PATH not in str(_attachments_pod(docs))


#: What a client reaching dev through ``kubectl port-forward`` sends as Host (any local port).
PORT_FORWARD_HOSTS = ("127.0.0.1:8080", "localhost:18080", "[::1]:8080")


def test_dev_links_name_the_address_the_client_used(dev: list[dict[str, Any]]) -> None:
    """Through a port-forward, the gateway's links name the forwarded address, not the pod's
    own (which the client cannot reach): dev trusts the local Host names (any port)."""
    container = _of_kind(dev, "Deployment")["gateway"]["spec"]["template"]["spec"]["containers"][0]
    env = {e["name"]: e.get("value") for e in container["env"]}
    assert "PLUMBLINE_PUBLIC_URL" not in env  # one fixed URL would be wrong for another port
    trusted = Settings(trusted_hosts=env["PLUMBLINE_TRUSTED_HOSTS"]).trusted_host_names
    pod = ("10.244.0.7", 8080)
    for host in PORT_FORWARD_HOSTS:
        scope = {"type": "http", "server": pod, "headers": [(b"host", host.encode())]}
        assert trusted_host(scope, trusted)["headers"] == [(b"host", host.encode())], host
    # Any other name still gets the pod's address (a client cannot choose others' links).
    scope = {"type": "http", "server": pod, "headers": [(b"host", b"evil.example")]}
    assert trusted_host(scope, trusted)["headers"] == [(b"host", b"10.244.0.7:8080")]
