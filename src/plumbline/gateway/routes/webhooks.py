"""(labs) ``/webhooks``: subscriptions that deliver the change feed's changes to a URL,
signed as the Standard Webhooks specification says, with retries, a delivery log and
redelivery on request (the hooks service, ``docs/contexts/hooks.md``)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import Response

from plumbline.api.core.v1 import core_pb2
from plumbline.api.hooks.v1 import hooks_pb2
from plumbline.common.dates import format_datetime, utcnow
from plumbline.gateway import records, schemas
from plumbline.gateway.bodies import RedeliveryBody, WebhookBody, WebhookChanges
from plumbline.gateway.deps import Gw, Paging, Version
from plumbline.gateway.envelope import created, deleted, json_response, ok, updated
from plumbline.gateway.includes import base_url
from plumbline.gateway.representations import delivery, webhook
from plumbline.gateway.schemas import JSON

router = APIRouter(prefix="/rest/{version}", tags=["webhooks"])

#: Body members and the message fields they set.
_MEMBERS = {
    "url": "url",
    "description": "description",
    "active": "active",
    "includeObject": "include_object",
    "objectTypes": "object_types",
    "eventTypes": "event_types",
    "projects": "projects",
    "itemTypes": "item_types",
}


def _input(values: dict[str, Any]) -> hooks_pb2.WebhookInput:
    message = hooks_pb2.WebhookInput()
    for member, value in values.items():
        name = _MEMBERS[member]
        if isinstance(value, list):
            getattr(message, name).extend(value)
        elif value is not None:
            setattr(message, name, value)
    return message


def _with_secret(reply: hooks_pb2.WebhookSecret) -> records.WebhookSecret:
    return {"webhook": webhook(reply.webhook), "secret": reply.secret}


@router.post(
    "/webhooks",
    status_code=201,
    summary="Subscribe a URL to changes (labs)",
    description="Changes of the change feed that the filters let through and the caller "
    "may read at delivery time are POSTed to url, one at a time in the feed's order, "
    "signed (Standard Webhooks: webhook-id, webhook-timestamp, webhook-signature). The "
    "answer holds the signing secret: it is shown this once. Name the projects; a "
    "subscription to every change of a project (no objectTypes or itemTypes) needs its "
    "administrator, one to every project an organization administrator. The url must "
    "resolve to public addresses.",
    responses={**schemas.created(records.WebhookSecret), **schemas.errors(400, 401)},
)
async def create_webhook(request: Request, body: WebhookBody, gw: Gw, version: Version) -> Response:
    message = _input(body.model_dump())
    # From now on: the feed first takes in every write made so far, then the webhook
    # starts after its head.
    message.wait_for.extend(await gw.upstreams.watermarks())
    reply = await gw.upstreams.hooks.webhooks.CreateWebhook(message)
    base = base_url(request, gw.settings.public_url)
    location = f"{base}/rest/{version}/webhooks/{reply.webhook.id}"
    return created(reply.webhook.id, location, _with_secret(reply))


@router.get(
    "/webhooks",
    summary="List webhooks (labs)",
    description="The caller's webhooks; every one to an organization administrator.",
    responses=schemas.page(records.Webhook),
)
async def list_webhooks(gw: Gw, page: Paging) -> Response:
    reply = await gw.upstreams.hooks.webhooks.ListWebhooks(
        hooks_pb2.ListWebhooksRequest(page=page.message())
    )
    info = reply.page_info
    return ok(
        [webhook(w) for w in reply.webhooks],
        page=(info.start_index, info.result_count, info.total_results),
    )


@router.get(
    "/webhooks/{id}",
    summary="Get a webhook (labs)",
    responses={**schemas.one(records.Webhook), **schemas.errors(404)},
)
async def get_webhook(id: int, gw: Gw) -> Response:
    return ok(webhook(await gw.upstreams.hooks.webhooks.GetWebhook(core_pb2.Id(id=id))))


@router.patch(
    "/webhooks/{id}",
    summary="Change a webhook (labs)",
    description="The members given change (a list is replaced whole); the others stay. "
    "active false pauses deliveries; true resumes them, after a disabling too, from the "
    "change that failed.",
    responses={**schemas.updated(records.Webhook), **schemas.errors(400, 404)},
)
async def update_webhook(id: int, body: WebhookChanges, gw: Gw) -> Response:
    given = body.model_dump(exclude_unset=True)
    reply = await gw.upstreams.hooks.webhooks.UpdateWebhook(
        hooks_pb2.UpdateWebhookRequest(id=id, webhook=_input(given), fields=sorted(given))
    )
    return updated(webhook(reply))


@router.delete(
    "/webhooks/{id}",
    status_code=204,
    summary="Delete a webhook (labs)",
    responses={**schemas.deleted(), **schemas.errors(404)},
)
async def delete_webhook(id: int, gw: Gw) -> Response:
    await gw.upstreams.hooks.webhooks.DeleteWebhook(core_pb2.Id(id=id))
    return deleted()


@router.post(
    "/webhooks/{id}/secret",
    summary="Rotate a webhook's secret (labs)",
    description="A new signing secret, shown this once. For the grace period "
    "(PLUMBLINE_WEBHOOKS_SECRET_GRACE_HOURS, 24 by default) deliveries carry a signature "
    "with each secret, so receivers can switch.",
    responses={**schemas.updated(records.WebhookSecret), **schemas.errors(404)},
)
async def rotate_secret(id: int, gw: Gw) -> Response:
    reply = await gw.upstreams.hooks.webhooks.RotateSecret(core_pb2.Id(id=id))
    return updated(_with_secret(reply))


@router.get(
    "/webhooks/{id}/deliveries",
    summary="A webhook's delivery log (labs)",
    description="Every delivery attempt, newest first: the change, the outcome, the "
    "receiver's status code, how long it took, and what went wrong.",
    responses={**schemas.page(records.Delivery), **schemas.errors(404)},
)
async def list_deliveries(id: int, gw: Gw, page: Paging) -> Response:
    reply = await gw.upstreams.hooks.webhooks.ListDeliveries(
        hooks_pb2.ListDeliveriesRequest(webhook=id, page=page.message())
    )
    info = reply.page_info
    return ok(
        [delivery(d) for d in reply.deliveries],
        page=(info.start_index, info.result_count, info.total_results),
    )


@router.post(
    "/webhooks/{id}/redeliveries",
    status_code=202,
    summary="Send a change to a webhook again (labs)",
    description="The change of the given event id (a delivery's webhook-id) is sent once "
    "more, before the next new change; the delivery log shows how it went.",
    responses={
        202: {
            "description": "Queued.",
            "content": {JSON: {"schema": schemas.ref("UpdatedResponse")}},
        },
        **schemas.errors(400, 404),
    },
)
async def redeliver(id: int, body: RedeliveryBody, gw: Gw) -> Response:
    await gw.upstreams.hooks.webhooks.Redeliver(
        hooks_pb2.RedeliverRequest(webhook=id, event=body.event)
    )
    return json_response(
        {"meta": {"status": "Accepted", "timestamp": format_datetime(utcnow())}}, status=202
    )
