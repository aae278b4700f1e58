"""``plumbline.hooks.v1.Webhooks``."""

from __future__ import annotations

from typing import Any

from plumbline.api.core.v1 import core_pb2
from plumbline.api.hooks.v1 import hooks_pb2 as pb
from plumbline.api.hooks.v1 import hooks_pb2_grpc
from plumbline.common.dates import format_datetime
from plumbline.common.rpc import Context, page_info, page_of
from plumbline.services.hooks.delivery import as_utc
from plumbline.services.hooks.webhooks import Webhooks, WebhookSpec, filters


def webhook_message(row: Any) -> pb.Webhook:
    """A ``webhooks`` row as a message (never its secrets)."""
    message = pb.Webhook(
        id=row.id,
        owner=row.owner,
        url=row.url,
        description=row.description,
        active=row.active,
        include_object=row.include_object,
        created_date=format_datetime(as_utc(row.created)),
        modified_date=format_datetime(as_utc(row.modified)),
        delivered_through=row.delivered_through,
        failed_attempts=row.attempts,
    )
    for name, values in filters(row).items():
        getattr(message, name).extend(values)
    for name, value in (
        ("failing_since", row.failing_since),
        ("next_attempt_date", row.next_attempt),
        ("previous_secret_expires", row.previous_expires),
    ):
        if value is not None:
            setattr(message, name, format_datetime(as_utc(value)))
    if row.disabled_reason:
        message.disabled_reason = row.disabled_reason
    return message


def delivery_message(row: Any) -> pb.Delivery:
    """A delivery log row as a message."""
    message = pb.Delivery(
        id=row.id,
        cursor=row.cursor,
        event=row.event_id,
        type=row.type,
        attempt=row.attempt,
        redelivery=row.redelivery,
        date=format_datetime(as_utc(row.at)),
        outcome=row.outcome,
        duration_ms=row.duration_ms,
    )
    if row.response_code is not None:
        message.response_code = row.response_code
    if row.error:
        message.error = row.error
    return message


def _spec(message: pb.WebhookInput) -> WebhookSpec:
    return WebhookSpec(
        url=message.url,
        description=message.description,
        active=message.active,
        include_object=message.include_object,
        object_types=list(message.object_types),
        event_types=list(message.event_types),
        projects=list(message.projects),
        item_types=list(message.item_types),
    )


class WebhooksServicer(hooks_pb2_grpc.WebhooksServicer):
    """Thin mapping onto the subscriptions' store."""

    def __init__(self, store: Webhooks) -> None:
        self.store = store

    async def CreateWebhook(self, request: pb.WebhookInput, context: Context) -> pb.WebhookSecret:
        await self.store.feed.caught_up({w.source: w.position for w in request.wait_for})
        row, secret = await self.store.create(_spec(request))
        return pb.WebhookSecret(webhook=webhook_message(row), secret=secret)

    async def ListWebhooks(
        self, request: pb.ListWebhooksRequest, context: Context
    ) -> pb.WebhookPage:
        start, size = page_of(request.page)
        rows, total = await self.store.page(start, size)
        return pb.WebhookPage(
            webhooks=[webhook_message(r) for r in rows],
            page_info=page_info(start, len(rows), total),
        )

    async def GetWebhook(self, request: core_pb2.Id, context: Context) -> pb.Webhook:
        return webhook_message(await self.store.get(request.id))

    async def UpdateWebhook(self, request: pb.UpdateWebhookRequest, context: Context) -> pb.Webhook:
        row = await self.store.update(request.id, _spec(request.webhook), list(request.fields))
        return webhook_message(row)

    async def DeleteWebhook(self, request: core_pb2.Id, context: Context) -> core_pb2.Empty:
        await self.store.delete(request.id)
        return core_pb2.Empty()

    async def RotateSecret(self, request: core_pb2.Id, context: Context) -> pb.WebhookSecret:
        row, secret = await self.store.rotate(request.id)
        return pb.WebhookSecret(webhook=webhook_message(row), secret=secret)

    async def ListDeliveries(
        self, request: pb.ListDeliveriesRequest, context: Context
    ) -> pb.DeliveryPage:
        start, size = page_of(request.page)
        rows, total = await self.store.deliveries(request.webhook, start, size)
        return pb.DeliveryPage(
            deliveries=[delivery_message(r) for r in rows],
            page_info=page_info(start, len(rows), total),
        )

    async def Redeliver(self, request: pb.RedeliverRequest, context: Context) -> core_pb2.Empty:
        await self.store.redeliver(request.webhook, request.event)
        return core_pb2.Empty()
