"""Settings from PLUMBLINE_* variables."""

from __future__ import annotations

from pathlib import Path

import pytest

from plumbline.common.settings import Settings


def test_default_database_is_sqlite_in_the_data_dir(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path)
    assert (
        settings.database_url_for("items") == f"sqlite+aiosqlite:///{tmp_path.resolve()}/items.db"
    )
    assert settings.bus_is_memory


def test_template_and_override(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PLUMBLINE_DATABASE_URL", "postgresql+asyncpg://u@h/pl_{service}")
    monkeypatch.setenv("PLUMBLINE_ACTIVITY_DATABASE_URL", "postgresql+asyncpg://u@other/feed")
    monkeypatch.setenv("PLUMBLINE_HTTP_PORT", "9999")
    settings = Settings()
    assert settings.database_url_for("identity") == "postgresql+asyncpg://u@h/pl_identity"
    assert settings.database_url_for("activity") == "postgresql+asyncpg://u@other/feed"
    assert settings.http_port == 9999
