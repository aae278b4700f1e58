"""``/attachments``: attachment records, their locks and comments, and the attachments of
items, test plans and test runs (``/{items,testplans,testruns}/{id}/attachments``).

The file itself is ``routes/files.py``'s. What an attachment hangs on belongs to another
service: the gateway reads it there first (404, or 401 without access) and vouches for
its id and project to the attachments service.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated

from fastapi import APIRouter, Depends
from starlette.requests import Request
from starlette.responses import Response

from plumbline.api.attachments.v1 import attachments_pb2 as pb
from plumbline.api.core.v1 import core_pb2
from plumbline.api.items.v1 import items_pb2
from plumbline.common.jsonvalues import free_json
from plumbline.gateway import records, representations, schemas
from plumbline.gateway.bodies import AttachmentBody, ItemAttachmentBody, LockBody
from plumbline.gateway.deps import (
    LABS_ONLY,
    Gateway,
    Gw,
    Paging,
    Version,
    View,
    dates_with_time,
    view_of,
)
from plumbline.gateway.envelope import created, deleted, updated
from plumbline.gateway.routes.testrecords import FAMILY_BASES, Kind, foreign_item

router = APIRouter(prefix="/rest/{version}", tags=["attachments"])

Attachments = Annotated[View, Depends(view_of("attachments"))]
Locks = Annotated[View, Depends(view_of("locks"))]


async def get_attachments(
    gw: Gateway, request: Request | None, ids: list[int], skip_missing: bool = False
) -> list[pb.Attachment]:
    """Attachments by id, dates as the caller asked; NotFound names a missing one."""
    reply = await gw.upstreams.attachments.attachments.GetAttachments(
        pb.GetAttachmentsRequest(
            ids=ids,
            dates_with_time=request is not None and dates_with_time(request),
            skip_missing=skip_missing,
        )
    )
    return list(reply.attachments)


async def vouched_attachment(gw: Gateway, id: int) -> items_pb2.ForeignItem:
    """The attachment ``id`` as the items service takes it (for its comments)."""
    [attachment] = await get_attachments(gw, None, [id])
    return items_pb2.ForeignItem(id=attachment.id, project=attachment.project, noun="attachment")


@router.post(
    "/projects/{projectId}/attachments",
    status_code=201,
    summary="Create an attachment in a project (then upload its file)",
    responses=schemas.created(),
)
async def create_attachment(
    request: Request, projectId: int, body: AttachmentBody, version: Version, gw: Gw
) -> Response:
    view = View(request, gw, version, "attachments")
    reply = await gw.upstreams.attachments.attachments.CreateAttachment(
        pb.AttachmentInput(project=projectId, fields_json=free_json(body.fields, "fields"))
    )
    return created(reply.id, view.location(f"attachments/{reply.id}"))


@router.get(
    "/projects/{projectId}/attachmentlinks",
    summary="Every attachment on a project's items, test plans and runs (labs)",
    description="One entry per place an attachment hangs on, owner by owner (each "
    "owner's in the order they were attached): the owner's id, the attachment as "
    "GET /attachments/{attachmentId} answers it, and its file's SHA-256. Attachments "
    "the caller may not read are left out; READ on the project is needed. A ReqIF "
    "export with files reads them so, instead of a request per item.",
    responses={**schemas.page(records.AttachmentLink), **schemas.errors(401, 404)},
    dependencies=[LABS_ONLY],
)
async def list_project_links(
    request: Request, projectId: int, version: Version, gw: Gw, page: Paging
) -> Response:
    # The project must exist and be readable: its read answers 404 or 401 as for any.
    await gw.upstreams.items.projects.GetProjects(core_pb2.IdList(ids=[projectId]))
    reply = await gw.upstreams.attachments.links.ListProjectLinks(
        pb.ListProjectLinksRequest(
            project=projectId, page=page.message(), dates_with_time=dates_with_time(request)
        )
    )
    found: list[records.AttachmentLink] = [
        {
            "owner": link.owner,
            "attachment": representations.attachment(link.attachment),
            "sha256": link.attachment.sha256,
        }
        for link in reply.links
    ]
    return await View(request, gw, version, "attachments").many(found, reply.page_info)


@router.get(
    "/attachments/{attachmentId}",
    summary="Get an attachment",
    responses=schemas.one(records.Attachment),
)
async def get_attachment(
    request: Request, attachmentId: int, view: Attachments, gw: Gw
) -> Response:
    [attachment] = await get_attachments(gw, request, [attachmentId])
    return await view.one(representations.attachment(attachment))


@router.delete(
    "/attachments/{attachmentId}",
    status_code=204,
    summary="Delete an attachment, its file and its places (labs)",
    responses=schemas.deleted(),
    dependencies=[LABS_ONLY],
)
async def delete_attachment(
    attachmentId: int,
    gw: Gw,
) -> Response:
    await gw.upstreams.attachments.attachments.DeleteAttachment(core_pb2.Id(id=attachmentId))
    return deleted()


@router.get(
    "/attachments/{attachmentId}/lock",
    summary="Get an attachment's lock",
    responses=schemas.one(records.Lock),
)
async def get_lock(request: Request, attachmentId: int, view: Locks, gw: Gw) -> Response:
    [attachment] = await get_attachments(gw, request, [attachmentId])
    return await view.one(representations.attachment_lock(attachment))


@router.put(
    "/attachments/{attachmentId}/lock",
    summary="Lock or unlock an attachment",
    responses=schemas.updated(),
)
async def put_lock(attachmentId: int, body: LockBody, gw: Gw) -> Response:
    await gw.upstreams.attachments.attachments.SetLock(
        pb.SetLockRequest(id=attachmentId, locked=body.locked)
    )
    return updated()


Owner = Callable[[Gateway, int], Awaitable[pb.Owner]]


async def _item(gw: Gateway, id: int) -> pb.Owner:
    reply = await gw.upstreams.items.items.GetItems(items_pb2.GetItemsRequest(ids=[id]))
    return pb.Owner(id=id, project=reply.items[0].project, noun="item")


def _record(kind: Kind) -> Owner:
    async def read(gw: Gateway, id: int) -> pb.Owner:
        found = await foreign_item(gw, id, kind)
        return pb.Owner(id=found.id, project=found.project, noun=found.noun)

    return read


def _owner_routes(base: str, noun: str, owner: Owner) -> None:
    @router.get(
        f"/{base}/{{id}}/attachments",
        summary=f"The attachments of a {noun}",
        responses=schemas.page(records.Attachment),
    )
    async def list_attached(
        request: Request, id: int, view: Attachments, gw: Gw, page: Paging
    ) -> Response:
        reply = await gw.upstreams.attachments.links.ListLinked(
            pb.ListLinkedRequest(
                owner=await owner(gw, id),
                page=page.message(),
                dates_with_time=dates_with_time(request),
            )
        )
        return await view.many(
            [representations.attachment(a) for a in reply.attachments], reply.page_info
        )

    @router.post(
        f"/{base}/{{id}}/attachments",
        status_code=201,
        summary=f"Attach an existing attachment to a {noun}",
        responses=schemas.created(),
    )
    async def attach(
        request: Request, id: int, body: ItemAttachmentBody, version: Version, gw: Gw
    ) -> Response:
        await gw.upstreams.attachments.links.Link(
            pb.LinkRequest(owner=await owner(gw, id), attachment=body.attachment)
        )
        view = View(request, gw, version, "attachments")
        return created(body.attachment, view.location(f"attachments/{body.attachment}"))

    @router.delete(
        f"/{base}/{{id}}/attachments/{{attachmentId}}",
        status_code=204,
        summary=f"Detach an attachment from a {noun} (the attachment stays)",
        responses=schemas.deleted(),
    )
    async def detach(id: int, attachmentId: int, gw: Gw) -> Response:
        await gw.upstreams.attachments.links.Unlink(
            pb.LinkRequest(owner=await owner(gw, id), attachment=attachmentId)
        )
        return deleted()


_owner_routes("items", "item", _item)
for _base, _kind in FAMILY_BASES:
    _owner_routes(_base, "test plan" if _base == "testplans" else "test run", _record(_kind))
