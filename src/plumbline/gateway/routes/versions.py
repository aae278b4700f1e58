"""The versions of every abstract item (``…/versions``, ``…/versions/{n}``,
``…/versions/{n}/versioneditem``) and relationships as they were
(``/abstractitems/{id}/versionedrelationships``), from the baselines service.

The record is read from its owner first: that answers 404 for no such record and 401
without access, and gives the version the owner has now, which the history is asked to
have caught up with before it answers (read-your-writes).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends, Path
from fastapi.routing import APIRouter
from starlette.requests import Request
from starlette.responses import Response

from plumbline.api.baselines.v1 import baselines_pb2 as pb
from plumbline.api.core.v1 import core_pb2
from plumbline.api.items.v1 import items_pb2
from plumbline.api.testmgmt.v1 import testmgmt_pb2
from plumbline.common.errors import NotFound
from plumbline.gateway import query, records, representations, schemas
from plumbline.gateway.deps import Gateway, Gw, Paging, View, view_of
from plumbline.gateway.routes.attachments import get_attachments
from plumbline.gateway.routes.testrecords import get_records

router = APIRouter(prefix="/rest/{version}", tags=["versions"])

#: path segment -> (its id's path parameter as the contract names it, what it holds, the
#: shape of one of them at a version)
BASES: dict[str, tuple[str, str, type[Any]]] = {
    "items": ("id", "item", records.VersionedItem),
    "abstractitems": ("id", "abstract item", records.AbstractVersionedItem),
    "testplans": ("id", "test plan", records.VersionedTestPlan),
    "testcycles": ("testCycleId", "test cycle", records.VersionedTestCycle),
    "testruns": ("id", "test run", records.VersionedTestRun),
    "attachments": ("attachmentId", "attachment", records.VersionedAttachment),
}
_KINDS = {
    "testplans": testmgmt_pb2.PLAN,
    "testcycles": testmgmt_pb2.CYCLE,
    "testruns": testmgmt_pb2.RUN,
}

Versions = Annotated[View, Depends(view_of("versions"))]
VersionNumber = Annotated[int, Path(ge=1, le=2**31 - 1, description="A version number, from 1.")]


async def current_version(gw: Gateway, request: Request, base: str, id: int) -> int:
    """The version of record ``id`` its owner reports (404 or 401 as the owner answers)."""
    if base == "abstractitems":
        owner = (await gw.upstreams.items.ids.GetIdOwner(core_pb2.Id(id=id))).owner
        base = {"items": "items", "testmgmt": "testplans", "attachments": "attachments"}.get(
            owner, ""
        )
        if base == "testplans":
            [record] = await get_records(gw, request, [id], testmgmt_pb2.KIND_UNSPECIFIED)
            return record.version
    if base == "items":
        reply = await gw.upstreams.items.items.GetItemVersions(core_pb2.IdList(ids=[id]))
        return reply.items[0].version
    if base in _KINDS:
        [record] = await get_records(gw, request, [id], _KINDS[base])
        return record.version
    if base == "attachments":
        [attachment] = await get_attachments(gw, request, [id])
        return int(attachment.version)
    raise NotFound(f"No abstract item with id {id}.")


async def items_position(gw: Gateway) -> core_pb2.Watermark:
    """Where the items service's events are now: relationships are read once the history
    has caught up with them."""
    return await gw.upstreams.items.watermarks.GetWatermark(core_pb2.Watermark(source="items"))


async def _subject(gw: Gateway, request: Request, base: str, id: int) -> pb.Subject:
    return pb.Subject(item=id, known_version=await current_version(gw, request, base, id))


#: ``asOf`` on reads of one record (beyond the contract): the record as it was then.
AsOf = Annotated[
    str | None,
    Depends(
        query.moment(
            "asOf",
            description="The record as it was at this moment (its newest version then), "
            "e.g. 2024-01-31T13:45:00.000+0000; it answers with version and currentVersion.",
        )
    ),
]


async def as_of_record(gw: Gateway, request: Request, base: str, id: int, moment: str) -> Any:
    """The record ``id`` as it was at ``moment``, as ``…/versioneditem`` shows it."""
    reply = await gw.upstreams.baselines.versions.GetAsOf(
        pb.GetAsOfRequest(subject=await _subject(gw, request, base, id), as_of=moment)
    )
    return representations.versioned_record(reply)


def _version_routes(base: str, name: str, noun: str, shape: type[Any]) -> None:
    # Defaults, not Annotated aliases: annotations are resolved in the module's globals.
    # A record as it was keeps its dates: the date header does not apply.
    records_view = Depends(view_of(base, dated=False))
    record_id = Path(alias=name, description=f"The {noun}'s id.")

    @router.get(
        f"/{base}/{{{name}}}/versions",
        summary=f"List a {noun}'s versions, oldest first",
        responses=schemas.page(records.ItemVersion),
    )
    async def list_versions(
        request: Request, view: Versions, gw: Gw, page: Paging, id: int = record_id
    ) -> Response:
        reply = await gw.upstreams.baselines.versions.ListVersions(
            pb.ListVersionsRequest(
                subject=await _subject(gw, request, base, id), page=page.message()
            )
        )
        data = [representations.item_version(v) for v in reply.versions]
        return await view.many(data, reply.page_info)

    @router.get(
        f"/{base}/{{{name}}}/versions/{{versionNum}}",
        summary=f"Get a version of a {noun}",
        responses=schemas.one(records.ItemVersion),
    )
    async def get_version(
        request: Request,
        versionNum: VersionNumber,
        view: Versions,
        gw: Gw,
        id: int = record_id,
    ) -> Response:
        reply = await gw.upstreams.baselines.versions.GetVersion(
            pb.GetVersionRequest(
                subject=await _subject(gw, request, base, id), version_number=versionNum
            )
        )
        return await view.one(representations.item_version(reply))

    @router.get(
        f"/{base}/{{{name}}}/versions/{{versionNum}}/versioneditem",
        summary=f"Get a {noun} as it was at a version",
        responses=schemas.one(shape),
    )
    async def get_versioned_item(
        request: Request,
        versionNum: VersionNumber,
        gw: Gw,
        view: View = records_view,
        id: int = record_id,
    ) -> Response:
        reply = await gw.upstreams.baselines.versions.GetVersion(
            pb.GetVersionRequest(
                subject=await _subject(gw, request, base, id), version_number=versionNum
            )
        )
        return await view.one(representations.versioned_record(reply))


for _base, (_name, _noun, _shape) in BASES.items():
    _version_routes(_base, _name, _noun, _shape)


VersionedRelationships = Annotated[View, Depends(view_of("versionedrelationships"))]


Timestamp = Annotated[
    str,
    Depends(
        query.moment(
            "timestamp",
            description="The moment to look at, e.g. 2024-01-31T13:45:00.000+0000 "
            "(milliseconds optional).",
            required=True,
        )
    ),
]


@router.get(
    "/abstractitems/{id}/versionedrelationships",
    summary="The relationships from or to an abstract item that existed at a time, each "
    "end with its version then",
    responses=schemas.page(records.VersionedRelationship),
)
async def versioned_relationships(
    request: Request,
    id: int,
    timestamp: Timestamp,
    view: VersionedRelationships,
    gw: Gw,
    page: Paging,
) -> Response:
    reply = await gw.upstreams.baselines.relationships.ListAt(
        pb.ListRelationshipsAtRequest(
            subject=await _subject(gw, request, "abstractitems", id),
            timestamp=timestamp,
            page=page.message(),
            wait_for=[await items_position(gw)],
        )
    )
    data = [representations.versioned_relationship(r) for r in reply.relationships]
    return await view.many(data, reply.page_info)


Categories = Annotated[View, Depends(view_of("categories"))]
VersionNumberQuery = Annotated[
    int | None,
    Depends(
        query.integer(
            "versionNumber",
            description="The version whose categories to list (default: the current one).",
            minimum=1,
            maximum=2**31 - 1,
        )
    ),
]


@router.get(
    "/items/{id}/versioncategories",
    summary="The categories applied to an item at one of its versions",
    responses=schemas.page(records.Category),
)
async def version_categories(
    request: Request,
    id: int,
    view: Categories,
    gw: Gw,
    page: Paging,
    number: VersionNumberQuery,
) -> Response:
    subject = await _subject(gw, request, "items", id)
    version = await gw.upstreams.baselines.versions.GetVersion(
        pb.GetVersionRequest(subject=subject, version_number=number or subject.known_version)
    )
    reply = await gw.upstreams.items.categories.ListCategories(
        items_pb2.ListCategoriesRequest(ids=version.categories, by_ids=True, page=page.message())
    )
    return await view.many([representations.category(c) for c in reply.categories], reply.page_info)
