"""The Kubernetes manifests: rendered with kustomize, validated against the schemas, offline."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[3] / "deploy" / "k8s"
KUBERNETES_VERSION = "1.33.0"
APP_SERVICES = ("identity", "items", "activity", "gateway")
WITH_DATABASE = ("identity", "items", "activity")
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
    for upstream in ("identity", "items", "activity"):
        assert env("gateway")[f"PLUMBLINE_{upstream.upper()}_ADDR"]["value"] == f"{upstream}:9090"
    for name in APP_SERVICES:
        assert env(name)["OTEL_SERVICE_NAME"]["value"] == f"plumbline-{name}"
        assert env(name)["PLUMBLINE_HOST"]["value"] == "0.0.0.0"


def test_components(rendered: tuple[str, list[dict[str, Any]]]) -> None:
    _overlay, docs = rendered
    policies = _of_kind(docs, "NetworkPolicy")
    assert set(APP_SERVICES) <= set(policies)
    assert policies["default-deny-ingress"]["spec"]["podSelector"] == {}
    identity_sources = {
        rule["podSelector"]["matchLabels"]["app.kubernetes.io/name"]
        for rule in policies["identity"]["spec"]["ingress"][0]["from"]
    }
    assert identity_sources == {"gateway", "activity", "items"}
    hpas = _of_kind(docs, "HorizontalPodAutoscaler")
    assert hpas["gateway"]["spec"]["scaleTargetRef"]["name"] == "gateway"
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
