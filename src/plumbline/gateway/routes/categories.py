"""Category paths (``/rest/labs`` only)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends
from starlette.requests import Request
from starlette.responses import Response

from plumbline.api.items.v1 import items_pb2
from plumbline.gateway import records, representations, schemas
from plumbline.gateway.bodies import CategoryBody, ItemCategoriesBody, VisibilityBody
from plumbline.gateway.deps import Gw, Paging, Version, View, view_of
from plumbline.gateway.envelope import created, updated

router = APIRouter(prefix="/rest/{version}", tags=["categories"])

Categories = Annotated[View, Depends(view_of("categories"))]


async def _page(view: View, gw: Gw, message: items_pb2.ListCategoriesRequest) -> Response:
    reply = await gw.upstreams.items.categories.ListCategories(message)
    data = [representations.category(c) for c in reply.categories]
    return await view.many(data, reply.page_info)


@router.get(
    "/categories", summary="List category paths (labs)", responses=schemas.page(records.Category)
)
async def list_categories(
    view: Categories,
    gw: Gw,
    page: Paging,
) -> Response:
    return await _page(view, gw, items_pb2.ListCategoriesRequest(page=page.message()))


@router.post(
    "/categories",
    status_code=201,
    summary="Create a category (labs)",
    responses=schemas.created(),
)
async def create_category(
    request: Request, body: CategoryBody, gw: Gw, version: Version
) -> Response:
    view = View(request, gw, version, "categories")
    message = items_pb2.CategoryInput(name=body.name)
    if body.parent is not None:
        message.parent = body.parent
    reply = await gw.upstreams.items.categories.CreateCategory(message)
    return created(reply.id, view.location("categories"))


@router.put(
    "/categories/{categoryPathId}/visibility",
    summary="Show or hide a category (labs)",
    responses=schemas.updated(),
)
async def visibility(
    categoryPathId: int,
    body: VisibilityBody,
    gw: Gw,
) -> Response:
    await gw.upstreams.items.categories.SetCategoryVisibility(
        items_pb2.CategoryInput(id=categoryPathId, visible=body.visible)
    )
    return updated()


@router.get(
    "/items/{itemId}/categories",
    summary="An item's categories (labs)",
    responses=schemas.page(records.Category),
)
async def item_categories(
    itemId: int,
    view: Categories,
    gw: Gw,
    page: Paging,
) -> Response:
    message = items_pb2.ListCategoriesRequest(item=itemId, page=page.message())
    return await _page(view, gw, message)


@router.post(
    "/items/{itemId}/categories",
    status_code=201,
    summary="Apply or remove categories (labs)",
    responses=schemas.created(),
)
async def change_item_categories(
    request: Request, itemId: int, body: ItemCategoriesBody, gw: Gw, version: Version
) -> Response:
    view = View(request, gw, version, "categories")
    await gw.upstreams.items.categories.ChangeItemCategories(
        items_pb2.ItemCategoriesRequest(item=itemId, add=body.add, remove=body.remove)
    )
    return created(itemId, view.location(f"items/{itemId}/categories"))
