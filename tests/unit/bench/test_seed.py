"""The seed's import lines: a tenth of the requirements carry their later versions."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import pytest

from bench.seed import VERSIONS, Seeder


@pytest.fixture
async def seeder() -> AsyncIterator[Seeder]:
    made = Seeder("127.0.0.1:1")  # the channel connects on first use; none is made here
    made.types = {"REQ": 7, "FLD": 6}
    yield made
    await made.close()


async def test_a_tenth_of_the_requirements_get_later_versions(seeder: Seeder) -> None:
    lines = {n: seeder._versions(n, 40) for n in range(20)}
    versioned = [n for n, (_, later) in lines.items() if later]
    assert versioned == [5, 15]
    item, later = lines[15]
    first = json.loads(item)
    assert (first["key"], first["parent"], first["itemType"]) == ("15", 40, 7)
    assert [json.loads(v)["item"] for v in later] == ["15"] * (VERSIONS - 1)
    descriptions = [first["fields"]["description"]] + [
        json.loads(v)["fields"]["description"] for v in later
    ]
    assert len(set(descriptions)) == VERSIONS  # each version changes the item
    assert {json.loads(v)["fields"]["name"] for v in later} == {first["fields"]["name"]}
    assert "key" not in json.loads(lines[4][0])
