"""Every .proto has its generated modules, with a servicer and a stub per service."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

PROTO = Path(__file__).resolve().parents[2] / "proto"


def test_every_generated_module_imports() -> None:
    protos = sorted(PROTO.rglob("*.proto"))
    assert protos
    for proto in protos:
        module = ".".join(proto.relative_to(PROTO).with_suffix("").parts)
        messages = importlib.import_module(f"{module}_pb2")
        services = importlib.import_module(f"{module}_pb2_grpc")
        assert messages.DESCRIPTOR.package == module.rsplit(".", 1)[0]
        for name in re.findall(r"^service (\w+)", proto.read_text(), flags=re.M):
            assert hasattr(services, f"{name}Servicer"), name
            assert hasattr(services, f"{name}Stub"), name
