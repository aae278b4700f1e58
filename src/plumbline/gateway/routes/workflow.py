"""``/items/{id}/workflowtransitions``: an item's status along its workflow."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends
from starlette.requests import Request
from starlette.responses import Response

from plumbline.api.core.v1 import core_pb2
from plumbline.api.items.v1 import items_pb2
from plumbline.common.rpc import page_info
from plumbline.gateway import records, representations, schemas
from plumbline.gateway.bodies import (
    TransitionBody,
)
from plumbline.gateway.deps import Gw, Paging, Version, View, view_of
from plumbline.gateway.envelope import created

router = APIRouter(prefix="/rest/{version}", tags=["workflow"])

Transitions = Annotated[View, Depends(view_of("workflowtransitions"))]


@router.get(
    "/items/{id}/workflowtransitionoptions",
    summary="Workflow steps allowed now",
    responses=schemas.page(records.WorkflowTransition),
)
async def transition_options(id: int, view: Transitions, gw: Gw, page: Paging) -> Response:
    reply = await gw.upstreams.items.workflow.ListTransitionOptions(core_pb2.Id(id=id))
    data = [representations.workflow_transition(t) for t in reply.transitions]
    chunk = data[page.start_at : page.start_at + page.max_results]
    return await view.many(
        chunk,
        page_info(page.start_at, len(chunk), len(data)),
    )


@router.post(
    "/items/{id}/workflowtransitions",
    status_code=201,
    summary="Execute a workflow step",
    responses=schemas.created(),
)
async def transition(
    request: Request, id: int, body: TransitionBody, version: Version, gw: Gw
) -> Response:
    view = View(request, gw, version, "items")
    await gw.upstreams.items.workflow.Transition(
        items_pb2.TransitionRequest(
            item=id, transition_id=body.transitionId, comment=body.comment or ""
        )
    )
    return created(id, view.location(f"items/{id}"))
