"""Maps the repository's top-level folders onto the single ``plumbline`` namespace.

``libs/plumbline`` is the package root (CLI, runner and generated gRPC code),
``libs/common`` is ``plumbline.common``, ``gateway`` is ``plumbline.gateway`` and
``services`` is ``plumbline.services``.
"""

from setuptools import find_packages, setup

ROOTS = {
    "plumbline": "libs/plumbline",
    "plumbline.common": "libs/common",
    "plumbline.gateway": "gateway",
    "plumbline.services": "services",
}


def _packages() -> tuple[list[str], dict[str, str]]:
    packages: list[str] = []
    package_dir: dict[str, str] = {}
    for name, folder in ROOTS.items():
        package_dir[name] = folder
        packages.append(name)
        packages.extend(f"{name}.{sub}" for sub in find_packages(folder))
    return packages, package_dir


_pkgs, _dirs = _packages()
setup(packages=_pkgs, package_dir=_dirs)
