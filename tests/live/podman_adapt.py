"""Turn a rendered overlay into what ``podman kube play`` (podman 4.3) can run.

``podman_adapt.py RENDERED.yaml OUT/`` reads the output of ``kubectl kustomize`` and writes:

* ``OUT/secrets/<name>.json``: each Secret's ``data`` as a JSON object (key -> base64). podman
  4.3 stores a Secret given to ``kube play`` as YAML but reads ``secretKeyRef`` as JSON, so
  the Secrets are created with ``podman secret create`` from these files instead.
* ``OUT/00-shared.yaml``: the PersistentVolumeClaims, a StatefulSet's claim templates among
  them (as ``<template>-<statefulset>-0``, the first replica's claim).
* ``OUT/<workload>.yaml``: one Deployment with the ConfigMaps it reads, one ``kube play`` each.
* ``OUT/workloads.tsv``: ``name, tier, pod, aliases`` in the order to start them. Tier 0 runs
  no application image (PostgreSQL, NATS, the collector), tier 1 is the application, tier 2
  the workload published on the host. ``aliases`` are the Services selecting the pod, given
  to ``--network NET:alias=...`` so that their names resolve (podman ignores Services).
* ``OUT/volumes``: the podman volumes the plays create (claims, ConfigMaps, emptyDirs).
* ``OUT/ignored.tsv``: the documents podman has no use for (kind, name, why).

What changes on the way, and why (podman 4.3 does not do these):

* StatefulSet becomes a Deployment; each claim template becomes a PVC and a pod volume.
* ``replicas`` is 1 (kube play starts one pod per Deployment).
* ``restartPolicy: OnFailure``: podman applies the pod's policy to init containers, so under
  ``Always`` a finished ``migrate`` is started again and again.
* Images are renamed to the stand-ins (``--image NAME=REF``), and never pulled.
* Probes are dropped: podman runs them from systemd timers, and there is no systemd here.
* An emptyDir ``tmp`` becomes ``<workload>-tmp``: podman makes a volume of that name, which
  the pods would otherwise share (it goes with the pod, as an emptyDir does).
* ``ports`` are dropped: podman publishes every containerPort on the host under the same
  number, which would clash with each other and with the host's own services. Only
  ``--publish WORKLOAD:PORT=ADDRESS:HOSTPORT`` is kept, on that host address.

A Service whose ``port`` differs from the container port it targets cannot be expressed
(aliases give names, not port mappings): that is an error, as is any kind this does not know.
"""

from __future__ import annotations

import argparse
import base64
import copy
import json
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

Doc = dict[str, Any]

#: What podman cannot use, and why the document is left out.
IGNORED = {
    "Namespace": "one podman network stands for the namespace",
    "Service": "its name becomes a network alias of the pods it selects",
    "ServiceAccount": "no API server to authenticate to",
    "NetworkPolicy": "not enforced: every pod shares one bridge",
    "HorizontalPodAutoscaler": "no autoscaling: one pod per workload",
    "PodDisruptionBudget": "no evictions to budget",
}
WORKLOADS = ("Deployment", "StatefulSet")
#: Dropped: podman makes them healthchecks that systemd timers run, and there is no systemd
#: here. They would never run (so gate nothing), and log an error at each start and removal.
PROBES = ("startupProbe", "livenessProbe", "readinessProbe")
#: Tiers, in the order they start.
BACKING, APPLICATION, PUBLISHED = 0, 1, 2


class AdaptError(ValueError):
    """The rendered overlay asks for something podman kube play cannot do."""


@dataclass
class Publish:
    """One container port published on the host: ``gateway:http=127.0.0.1:18080``."""

    workload: str
    port: str
    host_ip: str
    host_port: int

    @classmethod
    def parse(cls, spec: str) -> Publish:
        try:
            target, address = spec.split("=", 1)
            workload, port = target.split(":", 1)
            host_ip, host_port = address.rsplit(":", 1)
            return cls(workload, port, host_ip, int(host_port))
        except ValueError:
            raise AdaptError(
                f"--publish {spec!r}: expected WORKLOAD:PORT=ADDRESS:HOSTPORT, "
                "e.g. gateway:http=127.0.0.1:18080"
            ) from None


@dataclass
class Workload:
    name: str
    tier: int
    aliases: list[str]
    docs: list[Doc]

    @property
    def pod(self) -> str:
        """The pod ``kube play`` makes of a Deployment's single replica."""
        return f"{self.name}-pod-0"


@dataclass
class Plan:
    secrets: dict[str, dict[str, str]] = field(default_factory=dict)
    claims: list[Doc] = field(default_factory=list)
    workloads: list[Workload] = field(default_factory=list)
    volumes: list[str] = field(default_factory=list)
    ignored: list[tuple[str, str, str]] = field(default_factory=list)


def _containers(pod: Doc) -> Iterator[Doc]:
    yield from pod.get("initContainers") or []
    yield from pod.get("containers") or []


def _matches(selector: dict[str, str], labels: dict[str, str]) -> bool:
    return bool(selector) and all(labels.get(k) == v for k, v in selector.items())


def _secret_data(doc: Doc) -> dict[str, str]:
    """``data``, with ``stringData`` encoded the way ``data`` is (base64)."""
    # kustomize may fold a long value over lines: one line each, as JSON readers expect.
    data = {key: "".join(str(value).split()) for key, value in (doc.get("data") or {}).items()}
    for key, value in (doc.get("stringData") or {}).items():
        data[key] = base64.b64encode(str(value).encode()).decode()
    return data


def _statefulset_to_deployment(sts: Doc, claims: list[Doc]) -> Doc:
    """A Deployment running the StatefulSet's pod, its claim templates made PVCs."""
    name = sts["metadata"]["name"]
    spec = sts["spec"]
    pod = spec["template"]["spec"]
    volumes = pod.setdefault("volumes", [])
    for template in spec.get("volumeClaimTemplates") or []:
        volume = template["metadata"]["name"]
        claim = f"{volume}-{name}-0"
        claims.append(
            {
                "apiVersion": "v1",
                "kind": "PersistentVolumeClaim",
                "metadata": {"name": claim, "labels": dict(sts["metadata"].get("labels") or {})},
                "spec": copy.deepcopy(template["spec"]),
            }
        )
        volumes.append({"name": volume, "persistentVolumeClaim": {"claimName": claim}})
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": copy.deepcopy(sts["metadata"]),
        "spec": {
            "replicas": 1,
            "selector": copy.deepcopy(spec["selector"]),
            "template": copy.deepcopy(spec["template"]),
        },
    }


def _named_ports(container: Doc) -> dict[str, int]:
    return {p["name"]: int(p["containerPort"]) for p in container.get("ports") or [] if "name" in p}


def _pod_scoped_empty_dirs(name: str, pod: Doc) -> list[str]:
    """Rename each emptyDir ``<workload>-<volume>``: podman names the volume after it."""
    renamed = {}
    for volume in pod.get("volumes") or []:
        if "emptyDir" in volume:
            renamed[volume["name"]] = volume["name"] = f"{name}-{volume['name']}"
    for container in _containers(pod):
        for mount in container.get("volumeMounts") or []:
            mount["name"] = renamed.get(mount["name"], mount["name"])
    return list(renamed.values())


def _publish_ports(name: str, container: Doc, publish: Publish | None) -> bool:
    """Drop the container's ports, but the published one. True when that one is here."""
    ports = container.pop("ports", None) or []
    if publish is None or publish.workload != name:
        return False
    for port in ports:
        if publish.port in (port.get("name"), str(port["containerPort"])):
            container["ports"] = [
                {
                    "containerPort": port["containerPort"],
                    "hostIP": publish.host_ip,
                    "hostPort": publish.host_port,
                    "protocol": port.get("protocol", "TCP"),
                }
            ]
            return True
    return False


def _referenced_config_maps(pod: Doc) -> set[str]:
    names = {v["configMap"]["name"] for v in pod.get("volumes") or [] if "configMap" in v}
    for container in _containers(pod):
        for env in container.get("env") or []:
            ref = (env.get("valueFrom") or {}).get("configMapKeyRef")
            if ref:
                names.add(ref["name"])
        for source in container.get("envFrom") or []:
            if "configMapRef" in source:
                names.add(source["configMapRef"]["name"])
    return names


def _check_service_ports(service: Doc, pods: Iterable[Doc]) -> None:
    """Each Service port must be the number its target listens on: aliases map no ports."""
    for pod in pods:
        named: dict[str, int] = {}
        for container in pod.get("containers") or []:
            named.update(_named_ports(container))
        for port in service["spec"].get("ports") or []:
            target = port.get("targetPort", port["port"])
            number = named.get(target) if isinstance(target, str) else int(target)
            if number != int(port["port"]):
                raise AdaptError(
                    f"Service {service['metadata']['name']}: port {port['port']} targets "
                    f"{target!r} ({number}); under podman a Service name is an alias, so the "
                    "port must be the container's own"
                )


@dataclass
class _Rendered:
    """The rendered documents podman has a use for, by what becomes of them."""

    config_maps: dict[str, Doc] = field(default_factory=dict)
    services: list[Doc] = field(default_factory=list)
    workloads: list[Doc] = field(default_factory=list)


def _sort(docs: list[Doc], plan: Plan) -> _Rendered:
    """Secrets, claims and ignored kinds go to ``plan``; the rest is for the workloads."""
    rendered = _Rendered()
    for doc in docs:
        kind, name = doc["kind"], doc["metadata"]["name"]
        if kind == "Secret":
            plan.secrets[name] = _secret_data(doc)
        elif kind == "ConfigMap":
            rendered.config_maps[name] = doc
        elif kind == "PersistentVolumeClaim":
            plan.claims.append(copy.deepcopy(doc))
        elif kind in WORKLOADS:
            rendered.workloads.append(copy.deepcopy(doc))
        elif kind in IGNORED:
            plan.ignored.append((kind, name, IGNORED[kind]))
            if kind == "Service":
                rendered.services.append(doc)
        else:
            raise AdaptError(
                f"{kind} {name}: podman kube play cannot run it and this adapter does not "
                f"know it (known: {', '.join(sorted({*IGNORED, *WORKLOADS, 'Secret'}))}, "
                "ConfigMap, PersistentVolumeClaim)"
            )
    return rendered


def _workload(
    doc: Doc,
    rendered: _Rendered,
    plan: Plan,
    *,
    app_image: str,
    images: dict[str, str],
    publish: Publish | None,
) -> bool:
    """Adapt one Deployment or StatefulSet into ``plan``; True when it holds the published port."""
    name = doc["metadata"]["name"]
    if doc["kind"] == "StatefulSet":
        doc = _statefulset_to_deployment(doc, plan.claims)
    doc["spec"]["replicas"] = 1
    template = doc["spec"]["template"]
    pod = template["spec"]
    pod["restartPolicy"] = "OnFailure"
    labels = template["metadata"].get("labels") or {}
    selecting = [s for s in rendered.services if _matches(s["spec"].get("selector") or {}, labels)]
    for service in selecting:
        _check_service_ports(service, [pod])
    runs_app = published = False
    for container in _containers(pod):
        runs_app |= container["image"] == app_image
        container["image"] = images.get(container["image"], container["image"])
        container["imagePullPolicy"] = "Never"
        for probe in PROBES:
            container.pop(probe, None)
        published |= _publish_ports(name, container, publish)
    used = sorted(_referenced_config_maps(pod))
    missing = [c for c in used if c not in rendered.config_maps]
    if missing:
        raise AdaptError(f"{doc['kind']} {name} reads ConfigMaps not rendered: {missing}")
    plan.volumes += [v["configMap"]["name"] for v in pod.get("volumes") or [] if "configMap" in v]
    plan.volumes += _pod_scoped_empty_dirs(name, pod)
    plan.workloads.append(
        Workload(
            name=name,
            tier=PUBLISHED if publish and publish.workload == name else int(runs_app),
            aliases=sorted(s["metadata"]["name"] for s in selecting),
            docs=[copy.deepcopy(rendered.config_maps[c]) for c in used] + [doc],
        )
    )
    return published


def adapt(
    docs: list[Doc],
    *,
    app_image: str,
    images: dict[str, str] | None = None,
    publish: Publish | None = None,
) -> Plan:
    """What to create, and the play files, for ``docs`` (one rendered overlay)."""
    plan = Plan()
    rendered = _sort(docs, plan)
    published = False
    for doc in rendered.workloads:
        published |= _workload(
            doc, rendered, plan, app_image=app_image, images=images or {}, publish=publish
        )
    if publish is not None and not published:
        raise AdaptError(
            f"--publish: no workload {publish.workload!r} with a port {publish.port!r}"
        )
    plan.workloads.sort(key=lambda w: w.tier)  # stable: the overlay's order within a tier
    plan.volumes = sorted({c["metadata"]["name"] for c in plan.claims} | set(plan.volumes))
    return plan


def write(plan: Plan, out: Path) -> None:
    """The files ``up.sh`` plays (see the module's description)."""
    (out / "secrets").mkdir(parents=True, exist_ok=True)
    for name, data in plan.secrets.items():
        (out / "secrets" / f"{name}.json").write_text(json.dumps(data, sort_keys=True))
    (out / "00-shared.yaml").write_text(yaml.safe_dump_all(plan.claims, sort_keys=False))
    for workload in plan.workloads:
        (out / f"{workload.name}.yaml").write_text(
            yaml.safe_dump_all(workload.docs, sort_keys=False)
        )
    (out / "workloads.tsv").write_text(
        "".join(f"{w.name}\t{w.tier}\t{w.pod}\t{','.join(w.aliases)}\n" for w in plan.workloads)
    )
    (out / "volumes").write_text("".join(f"{v}\n" for v in plan.volumes))
    (out / "ignored.tsv").write_text("".join("\t".join(i) + "\n" for i in plan.ignored))


def _image(spec: str) -> tuple[str, str]:
    name, sep, ref = spec.partition("=")
    if not sep or not name or not ref:
        raise AdaptError(f"--image {spec!r}: expected NAME=REF, e.g. postgres:16=localhost/pg:16")
    return name, ref


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("rendered", type=Path, help="output of kubectl kustomize")
    parser.add_argument("out", type=Path, help="folder for the play files (created)")
    parser.add_argument("--app-image", required=True, help="the project's image, as rendered")
    parser.add_argument("--image", action="append", default=[], help="NAME=REF: run REF instead")
    parser.add_argument("--publish", help="WORKLOAD:PORT=ADDRESS:HOSTPORT, the one published")
    args = parser.parse_args(argv)
    try:
        docs = [d for d in yaml.safe_load_all(args.rendered.read_text()) if d]
        plan = adapt(
            docs,
            app_image=args.app_image,
            images=dict(_image(i) for i in args.image),
            publish=Publish.parse(args.publish) if args.publish else None,
        )
    except AdaptError as error:
        print(f"podman_adapt: {error}", file=sys.stderr)
        return 2
    write(plan, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
