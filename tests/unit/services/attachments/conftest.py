"""A real S3 server for the blob store's tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.seaweed import SeaweedFS


@pytest.fixture(scope="session")
def seaweedfs() -> Iterator[SeaweedFS]:
    """One SeaweedFS S3 server for the whole session (the weed of the dev dependencies)."""
    with SeaweedFS() as server:
        yield server
