"""The adapter of ``make k8s-live``, over the real rendered dev overlay (offline).

What ``tests/live/podman_adapt.py`` must get right for the overlay to run under
``podman kube play``: StatefulSets as Deployments with their claims, Secrets out of the play
files, every Service name an alias of the pods it selects, one port published.
"""

from __future__ import annotations

import base64
import copy
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.live import podman_adapt
from tests.live.podman_adapt import AdaptError, Plan, Publish, adapt

DEV = Path(__file__).resolve().parents[3] / "deploy" / "k8s" / "overlays" / "dev"
APP_IMAGE = "plumbline:dev"
STAND_INS = {
    "postgres:16": "localhost/plumbline-live/postgres:16",
    "nats:2.10": "localhost/plumbline-live/nats:2.10",
    "otel/opentelemetry-collector:0.120.0": "localhost/plumbline-live/otel-collector:0.120.0",
}
PUBLISH = "gateway:http=127.0.0.1:18080"
BACKING = {"postgres", "nats", "otel-collector"}
#: A host named in a connection string: scheme://[user:pass@]HOST:PORT, dns:///HOST:PORT, HOST:PORT.
HOST = re.compile(r"(?:^|//|@)([a-z][a-z0-9-]*):\d+")


def _render() -> list[dict[str, Any]]:
    kubectl = Path(sys.executable).parent / "kubectl"
    result = subprocess.run(
        [str(kubectl), "kustomize", str(DEV)],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return [doc for doc in yaml.safe_load_all(result.stdout) if doc]


@pytest.fixture(scope="module")
def rendered() -> list[dict[str, Any]]:
    return _render()


@pytest.fixture
def plan(rendered: list[dict[str, Any]]) -> Plan:
    return adapt(
        copy.deepcopy(rendered),
        app_image=APP_IMAGE,
        images=STAND_INS,
        publish=Publish.parse(PUBLISH),
    )


def _of_kind(docs: list[dict[str, Any]], kind: str) -> dict[str, dict[str, Any]]:
    return {d["metadata"]["name"]: d for d in docs if d["kind"] == kind}


def _pod(plan: Plan, name: str) -> dict[str, Any]:
    (workload,) = [w for w in plan.workloads if w.name == name]
    (deployment,) = [d for d in workload.docs if d["kind"] == "Deployment"]
    spec: dict[str, Any] = deployment["spec"]["template"]["spec"]
    return spec


def _containers(pod: dict[str, Any]) -> list[dict[str, Any]]:
    return [*(pod.get("initContainers") or []), *pod["containers"]]


def test_every_workload_is_one_deployment_of_one_pod(
    rendered: list[dict[str, Any]], plan: Plan
) -> None:
    expected = set(_of_kind(rendered, "Deployment")) | set(_of_kind(rendered, "StatefulSet"))
    assert {w.name for w in plan.workloads} == expected
    for workload in plan.workloads:
        kinds = [d["kind"] for d in workload.docs]
        assert kinds.count("Deployment") == 1
        assert set(kinds) <= {"Deployment", "ConfigMap"}, workload.name
        (deployment,) = [d for d in workload.docs if d["kind"] == "Deployment"]
        assert deployment["spec"]["replicas"] == 1
        assert workload.pod == f"{workload.name}-pod-0"


def test_statefulsets_become_deployments_with_their_claims(
    rendered: list[dict[str, Any]], plan: Plan
) -> None:
    statefulsets = _of_kind(rendered, "StatefulSet")
    assert set(statefulsets) == {"postgres", "nats"}
    claims = _of_kind(plan.claims, "PersistentVolumeClaim")
    for name, sts in statefulsets.items():
        pod = _pod(plan, name)
        for template in sts["spec"]["volumeClaimTemplates"]:
            claim = f"{template['metadata']['name']}-{name}-0"
            assert claims[claim]["spec"] == template["spec"]
            volumes = {v["name"]: v for v in pod["volumes"]}
            assert volumes[template["metadata"]["name"]] == {
                "name": template["metadata"]["name"],
                "persistentVolumeClaim": {"claimName": claim},
            }
            assert claim in plan.volumes
        mounted = {m["name"] for c in pod["containers"] for m in c.get("volumeMounts") or []}
        assert mounted <= {v["name"] for v in pod["volumes"]}
    # The overlay's own claims stay as they are.
    for own, spec in _of_kind(rendered, "PersistentVolumeClaim").items():
        assert claims[own] == spec


def test_secrets_leave_the_play_files_as_json(
    rendered: list[dict[str, Any]], plan: Plan, tmp_path: Path
) -> None:
    secrets = _of_kind(rendered, "Secret")
    assert set(plan.secrets) == set(secrets)
    podman_adapt.write(plan, tmp_path)
    for name, secret in secrets.items():
        written = json.loads((tmp_path / "secrets" / f"{name}.json").read_text())
        assert set(written) == set(secret["data"])
        for key, value in written.items():
            assert re.fullmatch(r"[A-Za-z0-9+/]*={0,2}", value), (name, key)
            assert base64.b64decode(value) == base64.b64decode(secret["data"][key])
    for workload in plan.workloads:
        text = (tmp_path / f"{workload.name}.yaml").read_text()
        assert "kind: Secret" not in text
        for container in _containers(_pod(plan, workload.name)):
            for env in container.get("env") or []:
                ref = (env.get("valueFrom") or {}).get("secretKeyRef")
                if ref:
                    assert ref["key"] in plan.secrets[ref["name"]], (workload.name, env["name"])


def test_stringdata_is_encoded_like_data() -> None:
    docs = [
        {"kind": "Secret", "metadata": {"name": "s"}, "stringData": {"password": "p w"}},
    ]
    plan = adapt(docs, app_image=APP_IMAGE)
    assert plan.secrets == {"s": {"password": base64.b64encode(b"p w").decode()}}


def test_every_service_is_an_alias_of_exactly_the_pods_it_selects(
    rendered: list[dict[str, Any]], plan: Plan
) -> None:
    services = _of_kind(rendered, "Service")
    aliases = {w.name: set(w.aliases) for w in plan.workloads}
    for name, service in services.items():
        selector = service["spec"]["selector"]
        selected = {
            w["metadata"]["name"]
            for w in rendered
            if w["kind"] in ("Deployment", "StatefulSet")
            and selector.items() <= w["spec"]["template"]["metadata"]["labels"].items()
        }
        assert selected, name
        assert {w for w, a in aliases.items() if name in a} == selected, name
    assert set().union(*aliases.values()) == set(services)
    assert aliases["testmgmt"] == {"testmgmt", "testmgmt-headless"}


def test_every_host_the_pods_dial_is_an_alias(rendered: list[dict[str, Any]], plan: Plan) -> None:
    """Database, bus, collector and gRPC addresses all name a Service the network resolves."""
    config = {name: cm.get("data") or {} for name, cm in _of_kind(rendered, "ConfigMap").items()}
    aliases = set().union(*(w.aliases for w in plan.workloads))
    dialled: set[str] = set()
    for workload in plan.workloads:
        for container in _containers(_pod(plan, workload.name)):
            for env in container.get("env") or []:
                ref = env.get("valueFrom") or {}
                if "value" in env:
                    value = str(env["value"])
                elif "secretKeyRef" in ref:
                    secret = plan.secrets[ref["secretKeyRef"]["name"]]
                    value = base64.b64decode(secret[ref["secretKeyRef"]["key"]]).decode()
                elif "configMapKeyRef" in ref:
                    value = config[ref["configMapKeyRef"]["name"]][ref["configMapKeyRef"]["key"]]
                else:
                    continue
                dialled |= {h for h in HOST.findall(value) if h != "localhost"}
    assert {"postgres", "nats", "otel-collector", "identity", "testmgmt-headless"} <= dialled
    assert dialled <= aliases


def test_only_the_gateway_port_is_published_on_loopback(plan: Plan) -> None:
    published = [
        (w.name, c["name"], port)
        for w in plan.workloads
        for c in _containers(_pod(plan, w.name))
        for port in c.get("ports") or []
    ]
    assert published == [
        (
            "gateway",
            "gateway",
            {"containerPort": 8080, "hostIP": "127.0.0.1", "hostPort": 18080, "protocol": "TCP"},
        )
    ]


def test_pods_run_once_from_local_images_without_probes(plan: Plan) -> None:
    for workload in plan.workloads:
        pod = _pod(plan, workload.name)
        assert pod["restartPolicy"] == "OnFailure", workload.name
        for container in _containers(pod):
            assert container["imagePullPolicy"] == "Never"
            assert container["image"] in {APP_IMAGE, *STAND_INS.values()}
            assert not {"startupProbe", "livenessProbe", "readinessProbe"} & set(container)
    images = {c["image"] for c in _containers(_pod(plan, "postgres"))}
    assert images == {STAND_INS["postgres:16"]}


def test_backing_services_start_first_and_the_gateway_last(plan: Plan) -> None:
    tiers = {w.name: w.tier for w in plan.workloads}
    assert {n for n, t in tiers.items() if t == podman_adapt.BACKING} == BACKING
    assert [w.name for w in plan.workloads][-1] == "gateway"
    assert tiers["gateway"] == podman_adapt.PUBLISHED
    assert [w.tier for w in plan.workloads] == sorted(w.tier for w in plan.workloads)


def test_each_pod_gets_its_own_empty_dirs(plan: Plan) -> None:
    """podman names an emptyDir's volume after it: two pods' ``tmp`` would be one volume."""
    seen: list[str] = []
    for workload in plan.workloads:
        pod = _pod(plan, workload.name)
        empty = [v["name"] for v in pod.get("volumes") or [] if "emptyDir" in v]
        assert all(name.startswith(f"{workload.name}-") for name in empty)
        seen += empty
        volumes = {v["name"] for v in pod.get("volumes") or []}
        for container in _containers(pod):
            assert {m["name"] for m in container.get("volumeMounts") or []} <= volumes
    assert "gateway-tmp" in seen
    assert len(seen) == len(set(seen))
    assert set(seen) <= set(plan.volumes)


def test_a_workload_carries_the_config_maps_it_reads_only(plan: Plan) -> None:
    maps = {
        w.name: {d["metadata"]["name"] for d in w.docs if d["kind"] == "ConfigMap"}
        for w in plan.workloads
    }
    assert {n.rsplit("-", 1)[0] for n in maps["otel-collector"]} == {"otel-collector"}
    assert {n.rsplit("-", 1)[0] for n in maps["identity"]} == {"plumbline-config"}
    assert maps["postgres"] == set()


def test_what_podman_cannot_use_is_listed_not_dropped_silently(
    rendered: list[dict[str, Any]], plan: Plan
) -> None:
    ignored = {(kind, name) for kind, name, _why in plan.ignored}
    for kind in podman_adapt.IGNORED:
        assert {(kind, n) for n in _of_kind(rendered, kind)} <= ignored
    assert ("NetworkPolicy", "default-deny-ingress") in ignored


def test_a_kind_it_does_not_know_is_refused(rendered: list[dict[str, Any]]) -> None:
    ingress = {"kind": "Ingress", "metadata": {"name": "web"}, "spec": {}}
    with pytest.raises(AdaptError, match=r"Ingress web: podman kube play cannot run it"):
        adapt([*copy.deepcopy(rendered), ingress], app_image=APP_IMAGE)


def test_a_service_port_other_than_the_containers_is_refused(
    rendered: list[dict[str, Any]],
) -> None:
    docs = copy.deepcopy(rendered)
    gateway = _of_kind(docs, "Service")["gateway"]
    gateway["spec"]["ports"][0]["port"] = 80
    with pytest.raises(AdaptError, match=r"Service gateway: port 80 targets 'http' \(8080\)"):
        adapt(docs, app_image=APP_IMAGE)


def test_a_publish_that_names_no_port_is_refused(rendered: list[dict[str, Any]]) -> None:
    with pytest.raises(AdaptError, match="no workload 'gateway' with a port 'metrics'"):
        adapt(
            copy.deepcopy(rendered),
            app_image=APP_IMAGE,
            publish=Publish.parse("gateway:metrics=127.0.0.1:18080"),
        )
    with pytest.raises(AdaptError, match="expected WORKLOAD:PORT=ADDRESS:HOSTPORT"):
        Publish.parse("gateway=18080")


def test_the_command_writes_the_play_folder(rendered: list[dict[str, Any]], tmp_path: Path) -> None:
    source = tmp_path / "dev.yaml"
    source.write_text(yaml.safe_dump_all(rendered))
    out = tmp_path / "play"
    images = [f"--image={k}={v}" for k, v in STAND_INS.items()]
    assert (
        podman_adapt.main(
            [str(source), str(out), "--app-image", APP_IMAGE, *images, "--publish", PUBLISH]
        )
        == 0
    )
    rows = [line.split("\t") for line in (out / "workloads.tsv").read_text().splitlines()]
    assert rows[-1] == ["gateway", "2", "gateway-pod-0", "gateway"]
    assert ["testmgmt", "1", "testmgmt-pod-0", "testmgmt,testmgmt-headless"] in rows
    for name, *_ in rows:
        docs = list(yaml.safe_load_all((out / f"{name}.yaml").read_text()))
        assert docs[-1]["kind"] == "Deployment"
    shared = list(yaml.safe_load_all((out / "00-shared.yaml").read_text()))
    assert {d["metadata"]["name"] for d in shared} == {
        "attachments-files",
        "data-postgres-0",
        "data-nats-0",
    }
    volumes = (out / "volumes").read_text().split()
    assert {"data-postgres-0", "attachments-files", "gateway-tmp"} <= set(volumes)


def test_the_command_says_what_is_wrong(
    rendered: list[dict[str, Any]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "dev.yaml"
    source.write_text(yaml.safe_dump_all(rendered))
    status = podman_adapt.main(
        [str(source), str(tmp_path / "play"), "--app-image", APP_IMAGE, "--image", "postgres:16"]
    )
    assert status == 2
    assert "--image 'postgres:16': expected NAME=REF" in capsys.readouterr().err
