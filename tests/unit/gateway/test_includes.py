"""include= resolves each referenced type with one batch call."""

from __future__ import annotations

from typing import Any

import pytest

from plumbline.common.errors import InvalidArgument
from plumbline.gateway.includes import requested, resolve
from plumbline.identity.v1 import identity_pb2
from plumbline.items.v1 import items_pb2


class Counting:
    def __init__(self) -> None:
        self.calls: list[tuple[str, list[int]]] = []

    async def GetUsers(self, request: Any) -> identity_pb2.UserList:
        self.calls.append(("users", list(request.ids)))
        return identity_pb2.UserList(
            users=[identity_pb2.User(id=i, username=f"u{i}") for i in request.ids]
        )

    async def GetProjects(self, request: Any) -> items_pb2.ProjectList:
        self.calls.append(("projects", list(request.ids)))
        return items_pb2.ProjectList(
            projects=[items_pb2.Project(id=i, fields_json=b"{}") for i in request.ids]
        )


class Upstreams:
    def __init__(self, fake: Counting) -> None:
        self.identity = fake
        self.items = fake


async def test_one_call_per_type_with_unique_ids() -> None:
    fake = Counting()
    records: list[dict[str, Any]] = [
        {"createdBy": 1, "modifiedBy": 2, "parent": 10, "fields": {"projectManager": 2}},
        {"createdBy": 1, "modifiedBy": 3},
    ]
    linked = await resolve(
        Upstreams(fake),  # type: ignore[arg-type]
        "projects",
        ["data.createdBy", "data.modifiedBy", "data.fields.projectManager", "data.parent"],
        records,
    )
    assert sorted(fake.calls) == [("projects", [10]), ("users", [1, 2, 3])]
    assert linked is not None
    assert set(linked["users"]) == {"1", "2", "3"}
    assert linked["users"]["2"]["username"] == "u2"
    assert set(linked["projects"]) == {"10"}


async def test_no_include_no_linked() -> None:
    assert await resolve(Upstreams(Counting()), "projects", [], [{}]) is None  # type: ignore[arg-type]


def test_unknown_include_is_refused_with_the_allowed_keys() -> None:
    with pytest.raises(InvalidArgument, match=r"data\.createdBy"):
        requested(["data.nope"], "projects")
