"""The changed record in a delivery, as ``GET`` answers it to the webhook's owner at
delivery time: read through the REST API itself (the gateway), as the owner, so the
record is exactly what the owner would read then, access included.

Hooks acts as the owner with a short-lived token identity issues for them
(``IssueTokenFor``, a call only services inside the deployment can make, as every gRPC
call). A record the owner may no longer read, or that is gone, comes without its
``object``; a failure to read it (the gateway down, a 5xx) fails the delivery, which is
tried again as any failed delivery.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import grpc
import httpx

from plumbline.common.tokens import UserTokens

#: The REST resource of each record an event names, by the event type's prefix.
RESOURCES = {
    "items.item.": "items",
    "items.relationship.": "relationships",
    "items.comment.": "comments",
    "items.project.": "projects",
    "items.tag.": "tags",
    "testmgmt.testplan.": "testplans",
    "testmgmt.testcycle.": "testcycles",
    "testmgmt.testrun.": "testruns",
    "attachments.attachment.": "attachments",
    "baselines.baseline.": "baselines",
}
#: Answers that mean the owner may not read the record now, or it is gone.
NOT_READABLE = frozenset({401, 403, 404, 410})


class RecordUnavailable(Exception):
    """The record could not be read now (the message says why)."""


def resource_of(event_type: str, kind: str, object_id: int | None) -> str | None:
    """``resource/id`` of the record a change names, or None (a deletion, or a change
    of something without a record of its own to GET)."""
    if kind == "DELETE" or object_id is None:
        return None
    for prefix, resource in RESOURCES.items():
        if event_type.startswith(prefix):
            return f"{resource}/{object_id}"
    return None


class Records:
    """Reads changed records through the REST API as their webhooks' owners."""

    def __init__(
        self,
        base_url: Callable[[], str | None],
        identity: Callable[[], grpc.aio.Channel],
        timeout: float,
    ) -> None:
        self._base_url = base_url
        self.tokens = UserTokens(identity)
        self.http = httpx.AsyncClient(trust_env=False, timeout=timeout, follow_redirects=False)

    async def close(self) -> None:
        await self.http.aclose()

    async def of(self, owner: int, event_type: str, kind: str, object_id: int | None) -> Any:
        """The record as ``GET`` answers it to ``owner`` now (its ``data``); None when
        there is none to show. RecordUnavailable when it could not be read."""
        resource = resource_of(event_type, kind, object_id)
        base = self._base_url()
        if resource is None or base is None:
            return None
        url = f"{base.rstrip('/')}/rest/v1/{resource}"
        try:
            response = await self.tokens.get(self.http, owner, url)
        except httpx.HTTPError as exc:
            raise RecordUnavailable(f"reading {resource}: {type(exc).__name__}") from None
        if response.status_code == 200:
            return response.json().get("data")
        if response.status_code in NOT_READABLE:
            return None
        raise RecordUnavailable(f"reading {resource}: the API answered {response.status_code}")
