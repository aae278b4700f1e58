"""``/baselines``: named sets of item versions, their items as they were and where, their
relationships then, and (labs) taking one and comparing two."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated

from fastapi import APIRouter, Depends
from starlette.requests import Request
from starlette.responses import Response

from plumbline.api.baselines.v1 import baselines_pb2 as pb
from plumbline.api.core.v1 import core_pb2
from plumbline.common.errors import InvalidArgument, NotFound
from plumbline.gateway import query, records, representations, schemas
from plumbline.gateway.bodies import (
    BaselineBody,
    BaselineFolderBody,
    BaselineMoveBody,
    BaselineUpdateBody,
)
from plumbline.gateway.deps import (
    LABS_ONLY,
    Gw,
    Paging,
    Version,
    View,
    view_of,
)
from plumbline.gateway.envelope import created, updated
from plumbline.gateway.routes.versions import items_position

router = APIRouter(prefix="/rest/{version}", tags=["baselines"])

Baselines = Annotated[View, Depends(view_of("baselines"))]
BaselineItems = Annotated[View, Depends(view_of("baselineitems"))]
Relationships = Annotated[View, Depends(view_of("versionedrelationships"))]
Changes = Annotated[View, Depends(view_of("baselinechanges"))]
Folders = Annotated[View, Depends(view_of("baselinefolders"))]


@router.get(
    "/baselines",
    summary="List a project's baselines, oldest first",
    responses=schemas.page(records.Baseline),
)
async def list_baselines(
    view: Baselines, gw: Gw, page: Paging, project: query.RequiredProject
) -> Response:
    reply = await gw.upstreams.baselines.baselines.ListBaselines(
        pb.ListBaselinesRequest(project=project, page=page.message())
    )
    data = [representations.baseline(b) for b in reply.baselines]
    return await view.many(data, reply.page_info)


@router.post(
    "/baselines",
    status_code=201,
    summary="Take a baseline: the items of a project (or of an item's subtree, a filter, "
    "a release or a set of items) at their versions now, and where they are (labs)",
    responses=schemas.created(),
    dependencies=[LABS_ONLY],
)
async def create_baseline(
    request: Request,
    body: BaselineBody,
    gw: Gw,
    version: Version,
) -> Response:
    origin = body.origin
    project = body.project or (origin.project if origin else None)
    if project is None:
        raise InvalidArgument("project (or origin.project) is required: the baseline's project.")
    if origin and origin.project is not None and origin.project != project:
        raise InvalidArgument("origin.project must be the baseline's project when both are given.")
    message = pb.BaselineInput(project=project, name=body.name, description=body.description)
    if origin:
        message.origin.items.extend(origin.items)
        for name in ("item", "filter", "release"):
            value = getattr(origin, name)
            if value is not None:
                setattr(message.origin, name, value)
    reply = await gw.upstreams.baselines.baselines.CreateBaseline(message)
    view = View(request, gw, version, "baselines")
    return created(reply.id, view.location(f"baselines/{reply.id}"))


@router.get(
    "/baselines/folders",
    summary="List a project's baseline folders (labs)",
    responses=schemas.page(records.BaselineFolder),
    dependencies=[LABS_ONLY],
)
async def list_folders(
    view: Folders,
    gw: Gw,
    page: Paging,
    project: query.RequiredProject,
) -> Response:
    reply = await gw.upstreams.baselines.baselines.ListFolders(
        pb.ListFoldersRequest(project=project, page=page.message())
    )
    return await view.many(
        [representations.baseline_folder(f) for f in reply.folders], reply.page_info
    )


@router.post(
    "/baselines/folders",
    status_code=201,
    summary="Create a baseline folder (labs)",
    responses=schemas.created(),
    dependencies=[LABS_ONLY],
)
async def create_folder(
    request: Request,
    body: BaselineFolderBody,
    gw: Gw,
    version: Version,
) -> Response:
    message = pb.FolderInput(project=body.project, name=body.name)
    if body.parent is not None:
        message.parent = body.parent
    reply = await gw.upstreams.baselines.baselines.CreateFolder(message)
    view = View(request, gw, version, "baselinefolders")
    return created(reply.id, view.location(f"baselines/folders?project={body.project}"))


@router.put(
    "/baselinetree/{projectId}/move",
    summary="Move a baseline into a folder of its project (or to the top)",
    responses=schemas.updated(),
)
async def move_baseline(projectId: int, body: BaselineMoveBody, gw: Gw) -> Response:
    message = pb.MoveBaselineRequest(project=projectId, baseline=body.baseline)
    if body.folder is not None:
        message.folder = body.folder
    await gw.upstreams.baselines.baselines.MoveBaseline(message)
    return updated()


@router.get(
    "/baselines/{baselineId}", summary="Get a baseline", responses=schemas.one(records.Baseline)
)
async def get_baseline(baselineId: int, view: Baselines, gw: Gw) -> Response:
    reply = await gw.upstreams.baselines.baselines.GetBaseline(core_pb2.Id(id=baselineId))
    return await view.one(representations.baseline(reply))


@router.put(
    "/baselines/{baselineId}",
    summary="Rename a baseline or change its description",
    description="Sets the baseline's name and description (WRITE on its project). The "
    "items and versions a baseline holds never change; the other members of a Baseline "
    "may be sent back as read and are ignored.",
    responses=schemas.updated(),
)
async def update_baseline(baselineId: int, body: BaselineUpdateBody, gw: Gw) -> Response:
    await gw.upstreams.baselines.baselines.UpdateBaseline(
        pb.BaselineUpdate(id=baselineId, name=body.name, description=body.description)
    )
    return updated()


@router.get(
    "/baselines/{baselineId}/reviewlink",
    summary="A baseline's review link: there is none, Plumbline has no reviews",
    description="The contract's review id of a baseline. Plumbline has no reviews "
    "(decision 0013), so a baseline has no review: the answer is always a 404 whose "
    "message says so, once the baseline is known to exist and the caller may read it (an "
    "unknown baseline answers its usual 404). The 200 is the contract's answer, which "
    "Plumbline never gives.",
    responses=schemas.inline(
        "ReviewLinkDataWrapper",
        "The review's id (never answered: Plumbline has no reviews).",
        {"type": "integer", "description": "The id of the baseline's review."},
    ),
)
async def get_baseline_review_link(baselineId: int, gw: Gw) -> Response:
    # Read first: 404 for no such baseline, 401 without access to its project.
    await gw.upstreams.baselines.baselines.GetBaseline(core_pb2.Id(id=baselineId))
    raise NotFound(
        f"Baseline {baselineId} has no review: Plumbline has no reviews, so no baseline "
        "has a review link."
    )


@router.get(
    "/baselines/{baselineId}/versioneditems",
    summary="A baseline's items, in tree order, at the versions it holds, with where each "
    "was when it was taken",
    responses=schemas.page(records.BaselineItem),
)
async def list_baseline_items(
    baselineId: int, view: BaselineItems, gw: Gw, page: Paging
) -> Response:
    reply = await gw.upstreams.baselines.baselines.ListBaselineItems(
        pb.ListBaselineItemsRequest(baseline=baselineId, page=page.message())
    )
    data = [representations.baseline_item(i) for i in reply.items]
    return await view.many(data, reply.page_info)


@router.get(
    "/baselines/{baselineId}/versioneditems/{itemId}",
    summary="One item of a baseline",
    responses=schemas.one(records.BaselineItem),
)
async def get_baseline_item(baselineId: int, itemId: int, view: BaselineItems, gw: Gw) -> Response:
    reply = await gw.upstreams.baselines.baselines.GetBaselineItem(
        pb.BaselineItemRequest(baseline=baselineId, item=itemId)
    )
    return await view.one(representations.baseline_item(reply))


@router.get(
    "/baselines/{baselineId}/versioneditems/{itemId}/versionedrelationships",
    summary="The relationships of a baseline's item when the baseline was taken",
    responses=schemas.page(records.VersionedRelationship),
)
async def list_baseline_relationships(
    baselineId: int, itemId: int, view: Relationships, gw: Gw, page: Paging
) -> Response:
    reply = await gw.upstreams.baselines.baselines.ListBaselineRelationships(
        pb.BaselineItemRequest(
            baseline=baselineId,
            item=itemId,
            page=page.message(),
            wait_for=[await items_position(gw)],
        )
    )
    data = [representations.versioned_relationship(r) for r in reply.relationships]
    return await view.many(data, reply.page_info)


def _target(values: Sequence[str]) -> int | None:
    """``to``: another baseline's id, or ``current`` (the default)."""
    if len(values) > 1:
        raise InvalidArgument("to takes one value: a baseline id or current.")
    if not values or values[0].strip().lower() == "current":
        return None
    try:
        target = int(values[0])
    except ValueError:
        raise InvalidArgument(f"to must be a baseline id or current, got {values[0]!r}.") from None
    if target < 1:
        raise InvalidArgument(f"to must be a baseline id or current, got {target}.")
    return target


Target = Annotated[
    int | None,
    Depends(
        query.parameter(
            "to",
            {"type": "string", "default": "current", "pattern": "^([0-9]+|current)$"},
            _target,
            description="The baseline to compare with (of the same project), or current: "
            "the baseline's origin as it is now.",
        )
    ),
]


@router.get(
    "/baselines/{baselineId}/compare",
    summary="What changed since a baseline, in one call: items added, removed and changed "
    "(with the names of what changed), then relationships added and removed (labs)",
    responses=schemas.page(records.BaselineChange),
    dependencies=[LABS_ONLY],
)
async def compare_baselines(
    baselineId: int,
    view: Changes,
    gw: Gw,
    page: Paging,
    to: Target,
) -> Response:
    message = pb.CompareRequest(
        baseline=baselineId, page=page.message(), wait_for=[await items_position(gw)]
    )
    if to is not None:
        message.to = to
    reply = await gw.upstreams.baselines.baselines.Compare(message)
    data = [representations.baseline_change(c) for c in reply.changes]
    return await view.many(data, reply.page_info)
