"""Places in the tree: ``PUT /items/treelocation`` and moves to another project."""

from __future__ import annotations

from fastapi import APIRouter
from starlette.responses import Response

from plumbline.api.items.v1 import items_pb2
from plumbline.gateway import records, schemas
from plumbline.gateway.bodies import (
    MoveBody,
    TreeLocationBody,
)
from plumbline.gateway.deps import Gw
from plumbline.gateway.envelope import updated

router = APIRouter(prefix="/rest/{version}", tags=["items"])


@router.put(
    "/items/treelocation",
    summary="Place an item under a parent, after a peer",
    responses=schemas.updated(),
)
@router.put("/items/treeLocation", include_in_schema=False)
async def place_item(body: TreeLocationBody, gw: Gw) -> Response:
    """Same project only; ``peer`` is the sibling the item follows (first when omitted)."""
    await gw.upstreams.items.moves.PlaceItem(
        items_pb2.PlaceItemRequest(
            item=body.item,
            parent_item=body.parent.item,
            parent_project=body.parent.project,
            peer=body.peer,
        )
    )
    return updated()


@router.put(
    "/items/{id}/location",
    summary="Move an item with its children to another project",
    responses=schemas.updated(records.MovedItems),
)
async def move_item(id: int, body: MoveBody, gw: Gw) -> Response:
    reply = await gw.upstreams.items.moves.MoveItemToProject(
        items_pb2.MoveRequest(item=id, project=body.parent.project)
    )
    # The contract answers once the work started, with an id for it; here it is also done.
    moved: records.MovedItems = {"workId": reply.work_id, "movedItems": list(reply.moved)}
    return updated(moved)
