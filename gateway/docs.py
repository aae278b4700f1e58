"""The interactive documentation page at ``/api-docs/`` (placeholder until the docs UI lands)."""

from __future__ import annotations

from fastapi import FastAPI


def install(app: FastAPI) -> None:
    """Adds the docs routes."""
