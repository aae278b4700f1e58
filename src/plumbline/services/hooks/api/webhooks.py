"""``plumbline.hooks.v1.Webhooks``."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from plumbline.api.core.v1 import core_pb2
from plumbline.api.hooks.v1 import hooks_pb2 as pb
from plumbline.api.hooks.v1 import hooks_pb2_grpc
from plumbline.common.dates import format_datetime
from plumbline.common.inbox import targets
from plumbline.common.rpc import Context, message_of, page_info, page_of
from plumbline.services.hooks.webhooks import Webhooks, WebhookSpec, filters


def _stamp(value: datetime | None) -> str | None:
    return None if value is None else format_datetime(value)


def webhook_message(row: Any) -> pb.Webhook:
    """A ``webhooks`` row as a message (never its secrets)."""
    return message_of(
        row,
        pb.Webhook,
        created_date=format_datetime(row.created),
        modified_date=format_datetime(row.modified),
        failed_attempts=row.attempts,
        failing_since=_stamp(row.failing_since),
        next_attempt_date=_stamp(row.next_attempt),
        previous_secret_expires=_stamp(row.previous_expires),
        disabled_reason=row.disabled_reason or None,
        **filters(row),
    )


def delivery_message(row: Any) -> pb.Delivery:
    """A delivery log row as a message."""
    return message_of(
        row, pb.Delivery, event=row.event_id, date=format_datetime(row.at), error=row.error or None
    )


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
        await self.store.feed.caught_up(targets(request.wait_for))
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
