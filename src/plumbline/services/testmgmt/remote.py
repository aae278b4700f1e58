"""What testmgmt reads from the items service: ids, document keys and the configuration
(``ItemsClient``), and test cases.

Every call carries the caller's principal (the client interceptor sends it), so the
items service checks the caller's access to the test cases it reads.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from grpc import aio

from plumbline.api.core.v1 import core_pb2
from plumbline.api.items.v1 import items_pb2, items_pb2_grpc
from plumbline.common.errors import NotFound, PermissionDenied
from plumbline.common.itemsclient import ItemsClient

#: The item type keys of the records testmgmt owns, and of the items it reads.
PLAN, CYCLE, RUN, CASE = "TSTPL", "TSTCY", "TSTRN", "TC"


@dataclass(frozen=True)
class TestCase:
    """A test case as a run is made from it."""

    id: int
    project: int
    item_type: int
    version: int
    fields: dict[str, Any]
    document_key: str = ""
    global_id: str = ""


class Items(ItemsClient):
    """The items service as testmgmt uses it: its ids and keys, and test cases."""

    def __init__(self, channel: Callable[[], aio.Channel]) -> None:
        super().__init__(channel, "testmgmt")

    async def test_cases(self, ids: list[int]) -> dict[int, TestCase]:
        """The readable, active items among ``ids``, by id (the caller checks their type)."""
        if not ids:
            return {}
        stub = items_pb2_grpc.ItemsStub(self._channel())
        found: dict[int, TestCase] = {}
        unique = sorted(set(ids))
        for start in range(0, len(unique), 500):
            reply = await stub.GetItems(items_pb2.GetItemsRequest(ids=unique[start : start + 500]))
            for item in reply.items:
                found[item.id] = TestCase(
                    item.id,
                    item.project,
                    item.item_type,
                    item.version or 1,
                    json.loads(item.fields_json or b"{}"),
                    item.document_key,
                    item.global_id,
                )
        return found

    async def current_versions(self, ids: list[int]) -> dict[int, int]:
        """The current version numbers of the readable, active items among ``ids``."""
        unique = sorted(set(ids))
        if not unique:
            return {}
        stub = items_pb2_grpc.ItemsStub(self._channel())
        found: dict[int, int] = {}
        for start in range(0, len(unique), 500):
            try:
                reply = await stub.GetItemVersions(core_pb2.IdList(ids=unique[start : start + 500]))
            except (NotFound, PermissionDenied):  # one id alone, deleted or not readable
                continue
            found.update((item.id, item.version or 1) for item in reply.items)
        return found
