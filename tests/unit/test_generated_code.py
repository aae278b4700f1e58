"""Every .proto has its generated modules, with a servicer and a stub per service."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROTO = ROOT / "proto"
SRC = ROOT / "src"
PROTOS = sorted(PROTO.rglob("*.proto"))


def _module(proto: Path) -> str:
    return ".".join(proto.relative_to(PROTO).with_suffix("").parts)


def _services(proto: Path) -> list[str]:
    return re.findall(r"^service\s+(\w+)", proto.read_text(), flags=re.M)


def test_there_are_protos_with_services() -> None:
    assert len(PROTOS) >= 4
    assert sum(len(_services(p)) for p in PROTOS) >= 3


def test_no_generated_module_lacks_its_proto() -> None:
    generated = {
        ".".join(path.relative_to(SRC).with_suffix("").parts)[: -len("_pb2")]
        for path in (SRC / "plumbline").rglob("*_pb2.py")
    }
    assert generated == {_module(p) for p in PROTOS}


@pytest.mark.parametrize("proto", PROTOS, ids=_module)
def test_generated_modules_import(proto: Path) -> None:
    module = _module(proto)
    messages = importlib.import_module(f"{module}_pb2")
    services = importlib.import_module(f"{module}_pb2_grpc")
    package = re.search(r"^package\s+([\w.]+);", proto.read_text(), flags=re.M)
    assert package is not None
    assert messages.DESCRIPTOR.package == package.group(1)
    declared = _services(proto)
    assert sorted(messages.DESCRIPTOR.services_by_name) == sorted(declared)
    for name in declared:
        assert isinstance(getattr(services, f"{name}Servicer", None), type), name
        assert isinstance(getattr(services, f"{name}Stub", None), type), name
        assert callable(getattr(services, f"add_{name}Servicer_to_server", None)), name
        rpcs = messages.DESCRIPTOR.services_by_name[name].methods_by_name
        for rpc in rpcs:
            assert hasattr(getattr(services, f"{name}Servicer"), rpc), (name, rpc)
