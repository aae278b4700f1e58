"""Every RPC of every proto service is implemented by exactly one servicer class."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from types import ModuleType

import pytest
from google.protobuf.descriptor import ServiceDescriptor

from plumbline import services
from plumbline.api.activity.v1 import activity_pb2
from plumbline.api.attachments.v1 import attachments_pb2
from plumbline.api.baselines.v1 import baselines_pb2
from plumbline.api.hooks.v1 import hooks_pb2
from plumbline.api.identity.v1 import identity_pb2
from plumbline.api.items.v1 import items_pb2
from plumbline.api.reports.v1 import reports_pb2
from plumbline.api.testmgmt.v1 import testmgmt_pb2
from plumbline.common.rpc import service_name

PROTO_FILES = (
    activity_pb2,
    attachments_pb2,
    baselines_pb2,
    hooks_pb2,
    identity_pb2,
    items_pb2,
    reports_pb2,
    testmgmt_pb2,
)


def _services() -> list[ServiceDescriptor]:
    return [s for f in PROTO_FILES for s in f.DESCRIPTOR.services_by_name.values()]


def _api_modules() -> list[ModuleType]:
    modules = []
    for service in pkgutil.iter_modules(services.__path__):
        api = importlib.import_module(f"plumbline.services.{service.name}.api")
        for module in pkgutil.iter_modules(api.__path__):
            modules.append(importlib.import_module(f"{api.__name__}.{module.name}"))
    return modules


def _servicers() -> dict[str, list[type]]:
    found: dict[str, list[type]] = {}
    for module in _api_modules():
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ != module.__name__:
                continue
            bases = [b for b in cls.__mro__[1:] if b.__module__.endswith("_pb2_grpc")]
            if bases:
                found.setdefault(service_name(cls.__new__(cls)), []).append(cls)
    return found


SERVICERS = _servicers()


def test_every_servicer_module_is_named_for_its_service() -> None:
    for name, classes in SERVICERS.items():
        for cls in classes:
            assert cls.__name__ == name.rsplit(".", 1)[1] + "Servicer"


@pytest.mark.parametrize("service", _services(), ids=lambda s: s.full_name)
def test_every_rpc_is_implemented_by_one_servicer(service: ServiceDescriptor) -> None:
    classes = SERVICERS.get(service.full_name, [])
    assert len(classes) == 1, f"{service.full_name} is implemented by {classes}"
    [cls] = classes
    missing = [
        m.name
        for m in service.methods
        if not (
            inspect.iscoroutinefunction(cls.__dict__.get(m.name))
            or inspect.isasyncgenfunction(cls.__dict__.get(m.name))
        )
    ]
    assert missing == [], f"{cls.__name__} does not implement {missing}"


def test_no_servicer_implements_a_service_the_protos_do_not_declare() -> None:
    assert set(SERVICERS) <= {s.full_name for s in _services()}
