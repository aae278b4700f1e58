"""Settings from PLUMBLINE_* variables and per-service database URLs."""

from __future__ import annotations

from pathlib import Path

import pytest

from plumbline.common.settings import SERVICES, Settings


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No PLUMBLINE_* variable of the machine leaks into these tests."""
    import os

    for name in list(os.environ):
        if name.startswith("PLUMBLINE_"):
            monkeypatch.delenv(name)


@pytest.mark.parametrize("service", SERVICES)
def test_default_database_is_sqlite_in_the_data_dir(tmp_path: Path, service: str) -> None:
    settings = Settings(data_dir=tmp_path)
    expected = f"sqlite+aiosqlite:///{tmp_path.resolve()}/{service}.db"
    assert settings.database_url_for(service) == expected


def test_a_relative_data_dir_is_made_absolute(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    settings = Settings(data_dir=Path("state"))
    assert settings.database_url_for("items") == (
        f"sqlite+aiosqlite:///{tmp_path.resolve()}/state/items.db"
    )


def test_data_dir_from_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PLUMBLINE_DATA_DIR", str(tmp_path / "d"))
    assert Settings().database_url_for("identity").endswith(f"{tmp_path.resolve()}/d/identity.db")


def test_the_service_template(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PLUMBLINE_DATABASE_URL", "postgresql+asyncpg://u@h/pl_{service}")
    settings = Settings()
    assert [settings.database_url_for(s) for s in SERVICES] == [
        "postgresql+asyncpg://u@h/pl_identity",
        "postgresql+asyncpg://u@h/pl_items",
        "postgresql+asyncpg://u@h/pl_testmgmt",
        "postgresql+asyncpg://u@h/pl_attachments",
        "postgresql+asyncpg://u@h/pl_activity",
        "postgresql+asyncpg://u@h/pl_baselines",
        "postgresql+asyncpg://u@h/pl_hooks",
        "postgresql+asyncpg://u@h/pl_reports",
    ]


def test_a_url_without_the_template_is_shared() -> None:
    settings = Settings(database_url="postgresql+asyncpg://u@h/all")
    assert settings.database_url_for("items") == "postgresql+asyncpg://u@h/all"
    assert settings.database_url_for("identity") == "postgresql+asyncpg://u@h/all"


def test_a_per_service_override_wins_for_that_service_only(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PLUMBLINE_DATABASE_URL", "postgresql+asyncpg://u@h/pl_{service}")
    monkeypatch.setenv("PLUMBLINE_ACTIVITY_DATABASE_URL", "postgresql+asyncpg://u@other/feed")
    settings = Settings()
    assert settings.database_url_for("activity") == "postgresql+asyncpg://u@other/feed"
    assert settings.database_url_for("items") == "postgresql+asyncpg://u@h/pl_items"
    # ... also over the SQLite default.
    monkeypatch.delenv("PLUMBLINE_DATABASE_URL")
    default = Settings(data_dir=tmp_path)
    assert default.database_url_for("activity") == "postgresql+asyncpg://u@other/feed"
    assert default.database_url_for("identity").startswith("sqlite+aiosqlite:///")


def test_environment_variables_are_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PLUMBLINE_HTTP_PORT", "9999")
    monkeypatch.setenv("PLUMBLINE_BUS_URL", "nats://nats:4222")
    monkeypatch.setenv("PLUMBLINE_ITEMS_ADDR", "items:9090")
    settings = Settings()
    assert settings.http_port == 9999
    assert not settings.bus_is_memory
    assert settings.address_of("items") == "items:9090"
    assert settings.address_of("identity") is None


def test_memory_bus_is_the_default() -> None:
    assert Settings().bus_is_memory


def test_the_body_limit_and_the_grpc_limit_that_fits_it(monkeypatch: pytest.MonkeyPatch) -> None:
    settings = Settings()
    assert settings.max_body_bytes == 8 * 1024 * 1024
    assert settings.grpc_max_message_bytes == 64 * 1024 * 1024
    monkeypatch.setenv("PLUMBLINE_MAX_BODY_BYTES", "1000")
    assert Settings().grpc_max_message_bytes == 8000
    monkeypatch.setenv("PLUMBLINE_MAX_BODY_BYTES", "0")
    with pytest.raises(ValueError, match="max_body_bytes"):
        Settings()


def test_the_readme_documents_every_setting() -> None:
    readme = (Path(__file__).parents[3] / "README.md").read_text()
    table = readme[readme.index("## Configuration") : readme.index("## Layout")]
    missing = [
        f"PLUMBLINE_{name.upper()}"
        for name in Settings.model_fields
        if f"`PLUMBLINE_{name.upper()}`" not in table
    ]
    assert missing == [], "settings missing from the README's configuration table"
