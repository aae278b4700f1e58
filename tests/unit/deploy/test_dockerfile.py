"""The Dockerfile's build stage installs what the code generation needs.

No container runtime is assumed: the build stage's ``RUN`` commands up to the code
generation run here, in a folder laid out like its ``WORKDIR``, with ``python`` this
interpreter and ``pip`` a stand-in that records what it is asked to install.
"""

from __future__ import annotations

import os
import re
import shlex
import stat
import subprocess
import sys
import tomllib
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

REPO = Path(__file__).resolve().parents[3]
DOCKERFILE = REPO / "Dockerfile"
#: The build stage's step that generates the gRPC code.
CODEGEN = "plumbline/protogen.py"

#: Records each call, and the lines of every requirements file (``-r FILE``) it names.
FAKE_PIP = """#!/bin/sh
log="$PIP_LOG"
echo "ARGS $*" >> "$log"
while [ $# -gt 0 ]; do
  case "$1" in
    -r|--requirement) shift; sed 's/^/REQ /' "$1" >> "$log" ;;
  esac
  shift
done
"""


def _instructions(text: str) -> list[tuple[str, str]]:
    """The Dockerfile's instructions, continuation lines joined and comments dropped."""
    joined: list[str] = []
    current = ""
    for line in text.splitlines():
        if not current and (not line.strip() or line.lstrip().startswith("#")):
            continue
        if line.rstrip().endswith("\\"):
            current += line.rstrip()[:-1] + " "
            continue
        joined.append(current + line)
        current = ""
    return [(i.split(None, 1)[0].upper(), i.split(None, 1)[1]) for i in joined]


def _build_stage_setup() -> list[str]:
    """The build stage's RUN commands before the one that generates the code."""
    commands: list[str] = []
    froms = 0
    for keyword, rest in _instructions(DOCKERFILE.read_text()):
        if keyword == "FROM":
            froms += 1
            if froms > 1:
                break
        elif keyword == "RUN":
            if CODEGEN in rest:
                return commands
            commands.append(rest)
    raise AssertionError(f"the Dockerfile's first stage never runs {CODEGEN}")


def _proto_tools() -> set[str]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    return {
        canonicalize_name(Requirement(r).name) for r in project["optional-dependencies"]["proto"]
    }


def _installed(log: str) -> set[str]:
    """The distributions the pip calls asked for (arguments and requirements files)."""
    names: set[str] = set()
    for line in log.splitlines():
        kind, _, rest = line.partition(" ")
        words = [rest.strip()] if kind == "REQ" else shlex.split(rest)
        if kind == "ARGS" and (not words or words[0] != "install"):
            continue
        for word in words[1:] if kind == "ARGS" else words:
            if word and not word.startswith("-") and re.match(r"^[A-Za-z0-9]", word):
                try:
                    names.add(canonicalize_name(Requirement(word).name))
                except InvalidRequirement:  # a file name or an option's value
                    continue
    return names


def test_the_build_stage_installs_every_proto_tool(tmp_path: Path) -> None:
    """The code generation (protogen) needs every tool of the ``proto`` extra, mypy-protobuf's
    protoc plugins included; the build stage installs them before it runs."""
    work = tmp_path / "src"
    work.mkdir()
    (work / "pyproject.toml").write_bytes((REPO / "pyproject.toml").read_bytes())
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python").symlink_to(sys.executable)
    pip = bin_dir / "pip"
    pip.write_text(FAKE_PIP)
    pip.chmod(pip.stat().st_mode | stat.S_IEXEC)
    log = tmp_path / "pip.log"
    log.touch()
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "PIP_LOG": str(log)}

    for command in _build_stage_setup():
        subprocess.run(["/bin/sh", "-c", command], cwd=work, env=env, check=True)

    missing = _proto_tools() - _installed(log.read_text())
    assert not missing, f"the Dockerfile's build stage does not install {sorted(missing)}"


def test_the_fake_pip_reads_what_it_is_asked_for() -> None:
    """The parsing above, on both ways of naming a requirement."""
    log = 'ARGS install --no-cache-dir "grpcio-tools>=1.64"\nREQ mypy-protobuf>=3.6\n'
    assert _installed(log.replace('"', "")) == {"grpcio-tools", "mypy-protobuf"}
    assert _installed("ARGS wheel --wheel-dir /wheels .\n") == set()
