"""Generates the gRPC Python code from ``proto/`` into the ``plumbline`` package.

Run as ``python -m plumbline.protogen PROTO_ROOT OUT_ROOT`` (``make proto``). Type stubs
come from mypy-protobuf (``*_pb2.pyi`` and ``*_pb2_grpc.pyi``), so callers use typed
stubs and servicers. Every generated folder gets an ``__init__.py`` so that a regular
(non-editable) install packages it.
"""

from __future__ import annotations

import sys
from pathlib import Path


def _plugin(name: str) -> str:
    """A protoc plugin installed next to this interpreter (the virtualenv's bin/)."""
    path = Path(sys.executable).parent / name
    if not path.exists():
        raise SystemExit(f"{name} not found next to {sys.executable}: install mypy-protobuf")
    return str(path)


def generate(proto_root: Path, out_root: Path) -> list[Path]:
    """Compile every ``.proto`` under ``proto_root``; returns the generated folders."""
    import grpc_tools
    from grpc_tools import protoc

    protos = sorted(str(p) for p in proto_root.rglob("*.proto"))
    include = Path(grpc_tools.__file__).parent / "_proto"
    args = [
        "protoc",
        f"-I{proto_root}",
        f"-I{include}",
        f"--python_out={out_root}",
        f"--grpc_python_out={out_root}",
        f"--plugin=protoc-gen-mypy={_plugin('protoc-gen-mypy')}",
        f"--plugin=protoc-gen-mypy_grpc={_plugin('protoc-gen-mypy_grpc')}",
        f"--mypy_out={out_root}",
        f"--mypy_grpc_out={out_root}",
        *protos,
    ]
    if protoc.main(args) != 0:
        raise SystemExit("protoc failed")
    folders = sorted({(out_root / Path(p).relative_to(proto_root)).parent for p in protos})
    for folder in folders:
        # Every level between the package root and the generated module needs one.
        current = folder
        while current != out_root / "plumbline" and current != out_root:
            (current / "__init__.py").touch()
            current = current.parent
    return folders


def main() -> None:
    proto_root, out_root = (Path(a) for a in sys.argv[1:3])
    for folder in generate(proto_root, out_root):
        print(f"generated {folder}")


if __name__ == "__main__":
    main()
