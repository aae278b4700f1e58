"""Builds ``build/typecheck/plumbline``: the package as mypy must see it.

setup.py maps several top-level folders into the one ``plumbline`` namespace; mypy does
not understand the editable-install finder, so ``make lint`` gives it a tree of symlinks
with the installed layout.
"""

from __future__ import annotations

import sys
from pathlib import Path

MAPPED = {"common": "libs/common", "gateway": "gateway", "services": "services"}


def build(root: Path, out: Path) -> Path:
    """Creates (or refreshes) the symlink tree; returns the package folder."""
    package = out / "plumbline"
    package.mkdir(parents=True, exist_ok=True)
    for link in package.iterdir():
        if link.is_symlink():
            link.unlink()
    for entry in (root / "libs" / "plumbline").iterdir():
        if entry.name.startswith(".") or entry.name == "__pycache__":
            continue
        (package / entry.name).symlink_to(entry.resolve())
    for name, folder in MAPPED.items():
        (package / name).symlink_to((root / folder).resolve())
    return package


if __name__ == "__main__":
    print(build(Path(sys.argv[1]), Path(sys.argv[2])))
