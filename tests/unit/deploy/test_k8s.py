"""The Kubernetes manifests: rendered with kustomize, validated against the schemas, offline."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from plumbline.common.rpc import target_of

ROOT = Path(__file__).resolve().parents[3] / "deploy" / "k8s"
KUBERNETES_VERSION = "1.33.0"
APP_SERVICES = ("identity", "items", "testmgmt", "activity", "gateway")
WITH_DATABASE = ("identity", "items", "testmgmt", "activity")
#: Deployments an HPA scales (the stateless ones).
AUTOSCALED = ("gateway", "testmgmt")
#: Where the gateway finds each service (testmgmt: every pod, round robin).
GATEWAY_UPSTREAMS = {
    "identity": "identity:9090",
    "items": "items:9090",
    "activity": "activity:9090",
    "testmgmt": "dns:///testmgmt-headless:9090",
}
#: What a policy rule without a pod or namespace selector lets through (outside the cluster).
ANYWHERE = "anywhere"
#: Scrapers run in namespaces labelled so.
METRICS = "metrics namespace"
#: The in-cluster PostgreSQL and NATS of the dev overlay.
BACKENDS = ("postgres", "nats")
NAME = "app.kubernetes.io/name"
OVERLAYS = ("dev", "prod")


def _render(overlay: str) -> list[dict[str, Any]]:
    kubectl = Path(sys.executable).parent / "kubectl"
    result = subprocess.run(
        [str(kubectl), "kustomize", str(ROOT / "overlays" / overlay)],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return [doc for doc in yaml.safe_load_all(result.stdout) if doc]


@pytest.fixture(scope="module", params=OVERLAYS)
def rendered(request: pytest.FixtureRequest) -> tuple[str, list[dict[str, Any]]]:
    return request.param, _render(request.param)


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
    assert set(deployments) == set(APP_SERVICES)
    for name, deployment in deployments.items():
        [container] = deployment["spec"]["template"]["spec"]["containers"]
        assert container["args"] == ["run", "--target", name]
        assert container["image"].split(":")[0].endswith("plumbline")
        init = deployment["spec"]["template"]["spec"].get("initContainers", [])
        if name in WITH_DATABASE:
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
        assert main["livenessProbe"]["httpGet"]["path"] == "/healthz"
        assert main["readinessProbe"]["httpGet"]["path"] == "/readyz"
        assert main["startupProbe"]["httpGet"]["path"] == "/healthz"


def test_configuration_reaches_the_right_services(
    rendered: tuple[str, list[dict[str, Any]]],
) -> None:
    _overlay, docs = rendered
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
    for name in APP_SERVICES:
        for variable, value in env(name).items():
            if variable.endswith("_ADDR"):
                service = variable.removeprefix("PLUMBLINE_").removesuffix("_ADDR").lower()
                target_of(service, value["value"])  # the form the process will accept
    for name in APP_SERVICES:
        assert env(name)["OTEL_SERVICE_NAME"]["value"] == f"plumbline-{name}"
        assert env(name)["PLUMBLINE_HOST"]["value"] == "0.0.0.0"


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
    """Whether one ``from``/``to`` entry names ``other`` (an app, METRICS or ANYWHERE)."""
    if "ipBlock" in peer:
        return other == ANYWHERE
    if "namespaceSelector" in peer:
        assert "podSelector" not in peer, "teach _admits_peer namespace and pod selectors"
        return other == METRICS
    return other not in (METRICS, ANYWHERE) and _matches(peer["podSelector"], other)


def _admits(rule: dict[str, Any], peers: str, other: str, port: int, protocol: str) -> bool:
    ports = rule.get("ports")
    if ports is not None and not any(
        p["port"] == port and p.get("protocol", "TCP") == protocol for p in ports
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
    """Whether the source's egress and the target's ingress both let a connection through."""
    leaves = source in (METRICS, ANYWHERE) or _allows(
        policies, "egress", source, target, port, protocol
    )
    enters = target == ANYWHERE or _allows(policies, "ingress", target, source, port, protocol)
    return leaves and enters


def _sources(policies: dict[str, dict[str, Any]], target: str, port: int) -> set[str]:
    return {s for s in (*APP_SERVICES, *BACKENDS, METRICS) if can_reach(policies, s, target, port)}


def test_services_take_grpc_only_from_their_callers(
    rendered: tuple[str, list[dict[str, Any]]],
) -> None:
    _overlay, docs = rendered
    policies = _of_kind(docs, "NetworkPolicy")
    assert set(APP_SERVICES) <= set(policies)
    assert policies["default-deny-ingress"]["spec"]["podSelector"] == {}
    callers = {name: _sources(policies, name, 9090) for name in APP_SERVICES}
    assert callers == {
        "identity": {"gateway", "items", "testmgmt", "activity"},
        "items": {"gateway", "testmgmt", "activity"},
        "testmgmt": {"gateway"},
        "activity": {"gateway"},
        "gateway": set(),
    }
    for name in APP_SERVICES:
        if name == "gateway":  # the API, from anywhere
            assert _allows(policies, "ingress", name, ANYWHERE, 8080, "TCP")
        else:  # health and metrics
            assert _sources(policies, name, 8080) == {METRICS}, name


def test_testmgmt_reaches_exactly_what_it_uses(
    rendered: tuple[str, list[dict[str, Any]]],
) -> None:
    overlay, docs = rendered
    policies = _of_kind(docs, "NetworkPolicy")
    assert {t for t in APP_SERVICES if can_reach(policies, "testmgmt", t, 9090)} == {
        "identity",
        "items",
    }
    assert not can_reach(policies, "testmgmt", "gateway", 8080)
    used = {(5432, "TCP"), (4222, "TCP"), (53, "UDP"), (53, "TCP"), (4318, "TCP")}
    for port, protocol in used:
        assert can_reach(policies, "testmgmt", ANYWHERE, port, protocol), (port, protocol)
    for port, protocol in {(443, "TCP"), (80, "TCP"), (8080, "TCP"), (9090, "TCP"), (53, "SCTP")}:
        assert not can_reach(policies, "testmgmt", ANYWHERE, port, protocol), (port, protocol)
    if overlay == "dev":
        assert can_reach(policies, "testmgmt", "postgres", 5432)
        assert can_reach(policies, "testmgmt", "nats", 4222)


@pytest.fixture(scope="module")
def dev() -> list[dict[str, Any]]:
    """The dev overlay alone: the one with PostgreSQL and NATS in the cluster."""
    return _render("dev")


def test_the_in_cluster_backends_admit_their_clients(dev: list[dict[str, Any]]) -> None:
    policies = _of_kind(dev, "NetworkPolicy")
    assert _sources(policies, "postgres", 5432) == set(WITH_DATABASE)
    assert _sources(policies, "nats", 4222) == set(APP_SERVICES)


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


def test_dev_runs_its_own_backends_and_prod_does_not(
    rendered: tuple[str, list[dict[str, Any]]],
) -> None:
    overlay, docs = rendered
    statefulsets = set(_of_kind(docs, "StatefulSet"))
    if overlay == "dev":
        assert statefulsets == {"postgres", "nats"}
        assert {"plumbline-database", "plumbline-admin"} <= {
            name.rsplit("-", 1)[0] for name in _of_kind(docs, "Secret")
        }
    else:
        assert statefulsets == set()
        assert _of_kind(docs, "Secret") == {}
        replicas = {n: d["spec"]["replicas"] for n, d in _of_kind(docs, "Deployment").items()}
        assert set(replicas.values()) == {2}
