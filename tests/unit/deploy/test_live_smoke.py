"""The live check's smoke test: what it reads from the rendered overlay (offline)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import yaml

from tests.live.smoke import admin_password

DEV = Path(__file__).resolve().parents[3] / "deploy" / "k8s" / "overlays" / "dev"


def test_it_logs_in_with_the_admin_secret_identity_is_given() -> None:
    kubectl = Path(sys.executable).parent / "kubectl"
    rendered = subprocess.run(
        [str(kubectl), "kustomize", str(DEV)],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    docs = [d for d in yaml.safe_load_all(rendered) if d]
    assert admin_password(docs) == "dev-only-admin-password"
