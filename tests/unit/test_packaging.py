"""The wheel (what the image installs) carries every file the services need at run time.

The tests run from an editable install, which finds these files in the source tree
whatever the wheel leaves out; an image without the migrations fails in every ``migrate``
init container. So the wheel is built here, from a copy of the tree, and read.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SRC = REPO / "src"
SERVICES = ("identity", "items", "testmgmt", "activity", "attachments", "baselines")
COPY_IGNORED = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")


def _files(folder: Path) -> set[str]:
    """Every file under ``folder``, as the wheel names it (relative to ``src``)."""
    return {
        p.relative_to(SRC).as_posix()
        for p in folder.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }


def _expected() -> set[str]:
    expected: set[str] = {"plumbline/py.typed"}
    with_migrations = {p.parent.name for p in (SRC / "plumbline" / "services").glob("*/migrations")}
    assert with_migrations >= set(SERVICES)
    for service in sorted(with_migrations):
        migrations = SRC / "plumbline" / "services" / service / "migrations"
        assert (migrations / "env.py").is_file()
        assert (migrations / "script.py.mako").is_file()
        versions = _files(migrations / "versions")
        assert versions, f"{service} has no migrations"
        expected |= {
            f"{migrations.relative_to(SRC).as_posix()}/{n}" for n in ("env.py", "script.py.mako")
        }
        expected |= versions
    # The generated gRPC code (not in git: make proto writes it before a build).
    for proto in (REPO / "proto").rglob("*.proto"):
        stem = proto.relative_to(REPO / "proto").with_suffix("").as_posix()
        expected |= {f"{stem}_pb2.py", f"{stem}_pb2_grpc.py"}
    expected |= {p.relative_to(SRC).as_posix() for p in SRC.rglob("default_config.yaml")}
    expected |= _files(SRC / "plumbline" / "gateway" / "docs_templates")
    return expected


def build_wheel(tree: Path, out: Path) -> set[str]:
    """Builds the project at ``tree`` into ``out``; the names in the wheel."""
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(out),
            str(tree),
        ],
        check=True,
        capture_output=True,
    )
    (wheel,) = out.glob("plumbline-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        return set(archive.namelist())


def _copy_tree(to: Path, pyproject: str | None = None) -> Path:
    """The project's pyproject.toml and src/ (generated code included), nothing stale."""
    to.mkdir()
    (to / "pyproject.toml").write_text(pyproject or (REPO / "pyproject.toml").read_text())
    shutil.copytree(SRC, to / "src", ignore=COPY_IGNORED)
    return to


@pytest.fixture(scope="module")
def wheel_names(tmp_path_factory: pytest.TempPathFactory) -> set[str]:
    base = tmp_path_factory.mktemp("wheel")
    return build_wheel(_copy_tree(base / "tree"), base / "dist")


def test_the_wheel_carries_migrations_generated_code_and_data(wheel_names: set[str]) -> None:
    expected = _expected()
    assert any("/migrations/versions/" in n for n in expected)
    missing = sorted(expected - wheel_names)
    assert not missing, f"the wheel leaves out {missing}"


def test_the_check_sees_migrations_left_out(tmp_path: Path) -> None:
    """Without namespace packages (what the folders without ``__init__.py`` rely on), the
    migrations drop out of the wheel, and the check above says so."""
    pyproject = (REPO / "pyproject.toml").read_text()
    marker = '[tool.setuptools.packages.find]\nwhere = ["src"]\n'
    assert marker in pyproject
    tree = _copy_tree(tmp_path / "tree", pyproject.replace(marker, marker + "namespaces = false\n"))
    names = build_wheel(tree, tmp_path / "dist")
    assert "plumbline/services/items/migrations/env.py" in _expected() - names
