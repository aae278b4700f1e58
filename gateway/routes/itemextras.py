"""Item links, duplication, and relationship rule sets."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends
from starlette.requests import Request
from starlette.responses import Response

from plumbline.core.v1 import core_pb2
from plumbline.gateway import records, representations, schemas
from plumbline.gateway.bodies import DuplicateBody, LinkBody
from plumbline.gateway.deps import Caller, Gw, Paging, Version, View, view_of
from plumbline.gateway.envelope import created, deleted, updated
from plumbline.items.v1 import items_pb2

router = APIRouter(prefix="/rest/{version}", tags=["items"])

Links = Annotated[View, Depends(view_of("links"))]
RuleSets = Annotated[View, Depends(view_of("relationshiprulesets"))]
Projects = Annotated[View, Depends(view_of("projects"))]


def _link(message: items_pb2.Link) -> records.Link:
    return {
        "id": message.id,
        "item": message.item,
        "url": message.url,
        "description": message.description,
        "type": "links",
    }


def _rule_set(message: items_pb2.RuleSet) -> records.RelationshipRuleSet:
    return {
        "id": message.id,
        "name": message.name,
        "description": message.description,
        "rules": [
            {
                "relationshipType": r.relationship_type,
                "fromItemType": r.from_item_type,
                "toItemType": r.to_item_type,
            }
            for r in message.rules
        ],
        "type": "relationshiprulesets",
    }


@router.get("/items/{id}/links", summary="An item's links", responses=schemas.page(records.Link))
async def list_links(id: int, view: Links, gw: Gw, page: Paging, _c: Caller) -> Response:
    reply = await gw.upstreams.items.links.ListLinks(
        items_pb2.ListLinksRequest(item=id, page=page.message())
    )
    return await view.many([_link(link) for link in reply.links], reply.page_info)


@router.post(
    "/items/{id}/links",
    status_code=201,
    summary="Add a link to an item",
    responses=schemas.created(),
)
async def create_link(
    request: Request, id: int, body: LinkBody, version: Version, gw: Gw, _c: Caller
) -> Response:
    view = View(request, gw, version, "links")
    reply = await gw.upstreams.items.links.CreateLink(
        items_pb2.LinkInput(item=id, url=body.url, description=body.description or "")
    )
    return created(reply.id, view.location(f"items/{id}/links/{reply.id}"))


@router.get(
    "/items/{id}/links/{linkId}", summary="One link of an item", responses=schemas.one(records.Link)
)
async def get_link(id: int, linkId: int, view: Links, gw: Gw, _c: Caller) -> Response:
    reply = await gw.upstreams.items.links.ListLinks(
        items_pb2.ListLinksRequest(
            item=id, link=linkId, page=core_pb2.Page(start_at=0, max_results=1)
        )
    )
    return await view.one(_link(reply.links[0]))


@router.put(
    "/items/{id}/links/{linkId}", summary="Change a link of an item", responses=schemas.updated()
)
async def update_link(
    id: int, linkId: int, body: LinkBody, version: Version, gw: Gw, _c: Caller
) -> Response:
    await gw.upstreams.items.links.UpdateLink(
        items_pb2.LinkInput(item=id, link=linkId, url=body.url, description=body.description or "")
    )
    return updated()


@router.delete(
    "/items/{id}/links/{linkId}",
    status_code=204,
    summary="Remove a link from an item",
    responses=schemas.deleted(),
)
async def delete_link(id: int, linkId: int, version: Version, gw: Gw, _c: Caller) -> Response:
    await gw.upstreams.items.links.DeleteLink(items_pb2.LinkInput(item=id, link=linkId))
    return deleted()


@router.post(
    "/items/{id}/duplicate",
    status_code=201,
    summary="Duplicate an item without children",
    responses=schemas.created(),
)
async def duplicate(
    request: Request, id: int, body: DuplicateBody, version: Version, gw: Gw, _c: Caller
) -> Response:
    view = View(request, gw, version, "items")
    reply = await gw.upstreams.items.items.DuplicateItem(
        items_pb2.DuplicateRequest(
            item=id,
            include_tags=body.includeTags,
            include_attachments=body.includeAttachments,
            include_links=body.includeLinks,
        )
    )
    return created(reply.id, view.location(f"items/{reply.id}"))


@router.get(
    "/relationshiprulesets",
    summary="List relationship rule sets",
    responses=schemas.page(records.RelationshipRuleSet),
)
async def list_rule_sets(view: RuleSets, gw: Gw, page: Paging, _c: Caller) -> Response:
    reply = await gw.upstreams.items.configuration.ListRuleSets(page.message())
    return await view.many([_rule_set(r) for r in reply.rule_sets], reply.page_info)


@router.get(
    "/relationshiprulesets/{id}",
    summary="Get a relationship rule set",
    responses=schemas.one(records.RelationshipRuleSet),
)
async def get_rule_set(id: int, view: RuleSets, gw: Gw, _c: Caller) -> Response:
    reply = await gw.upstreams.items.configuration.GetRuleSets(core_pb2.IdList(ids=[id]))
    return await view.one(_rule_set(reply.rule_sets[0]))


@router.get(
    "/relationshiprulesets/{id}/projects",
    summary="Projects that use a rule set",
    responses=schemas.page(records.Project),
)
async def rule_set_projects(id: int, view: Projects, gw: Gw, page: Paging, _c: Caller) -> Response:
    reply = await gw.upstreams.items.configuration.GetRuleSets(core_pb2.IdList(ids=[id]))
    project_ids = list(reply.rule_sets[0].projects)
    chunk = project_ids[page.start_at : page.start_at + page.max_results]
    found = (
        await gw.upstreams.items.projects.GetProjects(core_pb2.IdList(ids=chunk)) if chunk else None
    )
    data = [representations.project(p) for p in found.projects] if found else []
    return await view.many(
        data,
        core_pb2.PageInfo(
            start_index=page.start_at, result_count=len(data), total_results=len(project_ids)
        ),
    )
