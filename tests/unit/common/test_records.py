"""``records.Messages``: rows rendered for one request, and a page of them."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, cast

from plumbline.api.attachments.v1 import attachments_pb2
from plumbline.api.testmgmt.v1 import testmgmt_pb2
from plumbline.common.records import Messages


class _Once:
    """Counts the reads a request makes."""

    def __init__(self, value: Any) -> None:
        self.value = value
        self.reads = 0

    async def catalog(self) -> Any:
        self.reads += 1
        return self.value

    async def current(self) -> Any:
        self.reads += 1
        return self.value


def _render(row: Any, catalog: Any, dates_with_time: bool, access: Any) -> testmgmt_pb2.TestRecord:
    return testmgmt_pb2.TestRecord(id=row.id, document_key=f"{catalog}-{access}-{dates_with_time}")


async def test_a_page_reads_the_configuration_and_access_once_and_keeps_the_order() -> None:
    items, access = _Once("catalog"), _Once("access")
    render = Messages(cast(Any, items), cast(Any, access), _render, testmgmt_pb2.RecordPage)
    rows = [cast(Any, SimpleNamespace(id=i)) for i in (3, 1, 2)]
    page = await render.page(rows, 20, 57, True)
    assert [r.id for r in page.records] == [3, 1, 2]
    assert page.records[0].document_key == "catalog-access-True"
    assert (page.page_info.start_index, page.page_info.result_count) == (20, 3)
    assert page.page_info.total_results == 57
    assert items.reads == 1
    assert access.reads == 1


async def test_the_page_message_is_filled_through_its_one_list() -> None:
    def render(row: Any, catalog: Any, dates: bool, access: Any) -> attachments_pb2.Attachment:
        return attachments_pb2.Attachment(id=row.id)

    messages = Messages(
        cast(Any, _Once(None)), cast(Any, _Once(None)), render, attachments_pb2.AttachmentPage
    )
    page = await messages.page([cast(Any, SimpleNamespace(id=9))], 0, 1, False)
    assert [a.id for a in page.attachments] == [9]
    assert await messages.many([], False) == []
