"""The Kubernetes manifests: rendered with kustomize, validated against the schemas, offline."""

from __future__ import annotations

import json
import os
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
APP_SERVICES = (
    "identity",
    "items",
    "testmgmt",
    "activity",
    "attachments",
    "baselines",
    "gateway",
)
WITH_DATABASE = ("identity", "items", "testmgmt", "activity", "attachments", "baselines")
#: Deployments an HPA scales (the stateless ones).
AUTOSCALED = ("gateway", "testmgmt")
#: Where the gateway finds each service (testmgmt: every pod, round robin).
GATEWAY_UPSTREAMS = {
    "identity": "identity:9090",
    "items": "items:9090",
    "activity": "activity:9090",
    "testmgmt": "dns:///testmgmt-headless:9090",
    "attachments": "attachments:9090",
    "baselines": "baselines:9090",
}
#: Where attachments keeps the file bytes by default: its volume, mounted there.
FILES_PATH = "/var/lib/plumbline/files"
#: The s3-blobs component's Secret and ConfigMap (the overlay provides the ConfigMap).
S3_SECRET = "attachments-s3"
S3_CONFIG = "attachments-s3-config"
#: What a service whose egress is held may send anywhere: its database, the bus, the
#: OpenTelemetry collector and DNS.
BACKEND_PORTS = {(5432, "TCP"), (4222, "TCP"), (4318, "TCP"), (53, "UDP"), (53, "TCP")}
#: Ports such a service may not send anywhere (the object store's among them, by default).
UNUSED_PORTS = {
    *((port, "TCP") for port in (443, 80, 8333, 8080, 9090)),
    (53, "SCTP"),
}
#: What a policy rule without a pod or namespace selector lets through (outside the cluster).
ANYWHERE = "anywhere"
#: Scrapers run in namespaces labelled so.
METRICS = "metrics namespace"
#: The in-cluster PostgreSQL and NATS of the dev overlay.
BACKENDS = ("postgres", "nats")
NAME = "app.kubernetes.io/name"
OVERLAYS = ("dev", "prod")


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
    assert env("attachments")["PLUMBLINE_ITEMS_ADDR"]["value"] == "items:9090"
    assert env("attachments")["PLUMBLINE_IDENTITY_ADDR"]["value"] == "identity:9090"
    for owner in ("items", "testmgmt", "attachments"):
        assert env("baselines")[f"PLUMBLINE_{owner.upper()}_ADDR"]["value"] == f"{owner}:9090"
    assert env("attachments")["PLUMBLINE_BLOB_URL"]["value"] == f"file://{FILES_PATH}"
    # Both read the upload limit; they must agree on it (1 GiB).
    for name in ("gateway", "attachments"):
        assert env(name)["PLUMBLINE_MAX_UPLOAD_BYTES"]["value"] == str(1 << 30), name
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
        "identity": {"gateway", "items", "testmgmt", "activity", "baselines", "attachments"},
        "items": {"gateway", "testmgmt", "activity", "attachments", "baselines"},
        "testmgmt": {"gateway", "baselines"},
        "activity": {"gateway"},
        "attachments": {"gateway", "baselines"},
        "baselines": {"gateway"},
        "gateway": set(),
    }
    for name in APP_SERVICES:
        if name == "gateway":  # the API, from anywhere
            assert _allows(policies, "ingress", name, ANYWHERE, 8080, "TCP")
        else:  # health and metrics
            assert _sources(policies, name, 8080) == {METRICS}, name


def _assert_egress(
    policies: dict[str, dict[str, Any]],
    source: str,
    upstreams: set[str],
    outside: set[tuple[int, str]],
) -> None:
    """``source`` reaches exactly ``upstreams`` over gRPC, and of the ports tried, exactly
    ``outside`` anywhere else."""
    assert {t for t in APP_SERVICES if can_reach(policies, source, t, 9090)} == upstreams
    assert not can_reach(policies, source, "gateway", 8080)
    for port, protocol in BACKEND_PORTS | UNUSED_PORTS:
        assert can_reach(policies, source, ANYWHERE, port, protocol) == (
            (port, protocol) in outside
        ), (source, port, protocol)


@pytest.mark.parametrize(
    ("source", "upstreams"),
    [("testmgmt", {"identity", "items"}), ("attachments", {"identity", "items"})],
)
def test_held_egress_reaches_exactly_what_is_used(
    rendered: tuple[str, list[dict[str, Any]]], source: str, upstreams: set[str]
) -> None:
    overlay, docs = rendered
    policies = _of_kind(docs, "NetworkPolicy")
    _assert_egress(policies, source, upstreams, BACKEND_PORTS)
    if overlay == "dev":
        assert can_reach(policies, source, "postgres", 5432)
        assert can_reach(policies, source, "nats", 4222)


def _without_env(deployment: dict[str, Any], *names: str) -> Any:
    """A copy of ``deployment`` without the environment variables ``names``."""
    copy = json.loads(json.dumps(deployment))
    for container in copy["spec"]["template"]["spec"]["containers"]:
        container["env"] = [e for e in container["env"] if e["name"] not in names]
    return copy


def _renamed(doc: dict[str, Any], old: str, new: str) -> Any:
    return json.loads(json.dumps(doc).replace(old, new))


def test_baselines_is_shaped_like_activity(rendered: tuple[str, list[dict[str, Any]]]) -> None:
    """An event consumer with its own database and a gRPC API for the gateway, like
    activity: the same Deployment (but for the owners it reads), Service, policy, budget
    and replicas, no volume, no HPA."""
    _overlay, docs = rendered
    for kind in ("Deployment", "Service", "ServiceAccount", "NetworkPolicy", "PodDisruptionBudget"):
        of_kind = _of_kind(docs, kind)
        baselines = of_kind["baselines"]
        if kind == "Deployment":
            baselines = _without_env(
                baselines, "PLUMBLINE_TESTMGMT_ADDR", "PLUMBLINE_ATTACHMENTS_ADDR"
            )
        assert baselines == _renamed(of_kind["activity"], "activity", "baselines"), kind
    assert "baselines" not in _of_kind(docs, "HorizontalPodAutoscaler")
    pod = _of_kind(docs, "Deployment")["baselines"]["spec"]["template"]["spec"]
    assert not any("persistentVolumeClaim" in v for v in pod["volumes"])
    policies = _of_kind(docs, "NetworkPolicy")
    assert can_reach(policies, "gateway", "baselines", 9090)
    assert _sources(policies, "baselines", 9090) == {"gateway"}
    assert _sources(policies, "baselines", 8080) == {METRICS}


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


def _with_s3_blobs(directory: Path, object_store_port: int | None = None) -> Path:
    """A copy of the prod overlay in ``directory`` with the s3-blobs component after its
    others, the settings ConfigMap it needs, and (if given) the README's patch of the
    object store's port."""
    overlay = ROOT / "overlays" / "prod"
    kustomization = yaml.safe_load((overlay / "kustomization.yaml").read_text())

    def moved(path: str) -> str:  # kustomize takes relative paths only
        return os.path.relpath((overlay / path).resolve(), directory)

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
                    "- {op: test, path: /spec/egress/3/ports/0/port, value: 443}\n"
                    f"- {{op: replace, path: /spec/egress/3/ports/0/port, value: {object_store_port}}}\n"
                ),
            }
        ]
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "kustomization.yaml").write_text(yaml.safe_dump(kustomization))
    return directory


@pytest.fixture(scope="module")
def s3(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    """prod with the s3-blobs component."""
    return _render(_with_s3_blobs(tmp_path_factory.mktemp("prod-s3")))


def test_s3_blobs_is_schema_valid(s3: list[dict[str, Any]]) -> None:
    for doc in s3:
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


def test_s3_blobs_lets_attachments_out_to_the_object_store(s3: list[dict[str, Any]]) -> None:
    policies = _of_kind(s3, "NetworkPolicy")
    _assert_egress(policies, "attachments", {"identity", "items"}, BACKEND_PORTS | {(443, "TCP")})
    # The rest is as without the component.
    _assert_egress(policies, "testmgmt", {"identity", "items"}, BACKEND_PORTS)
    assert _sources(policies, "attachments", 9090) == {"gateway", "baselines"}


def test_the_object_store_port_is_patched_as_documented(tmp_path: Path) -> None:
    docs = _render(_with_s3_blobs(tmp_path / "prod-s3", object_store_port=8333))
    policies = _of_kind(docs, "NetworkPolicy")
    _assert_egress(policies, "attachments", {"identity", "items"}, BACKEND_PORTS | {(8333, "TCP")})


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
