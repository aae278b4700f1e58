"""The changed record in a delivery, as ``GET`` answers it to the webhook's owner at
delivery time: read through the REST API itself (the gateway), as the owner, so the
record is exactly what the owner would read then, access included; the records of a
batch of changes in one request.

Hooks acts as the owner with a short-lived token identity issues for them
(``IssueTokenFor``, a call only services inside the deployment can make, as every gRPC
call). A record the owner may no longer read, or that is gone, comes without its
``object``; a failure to read it (the gateway down, a 5xx) fails the delivery, which is
tried again as any failed delivery.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
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


#: A record a change names: its REST resource and id.
Ref = tuple[str, int]


def reference(event_type: str, kind: str, object_id: int | None) -> Ref | None:
    """The resource and id of the record a change names, or None (a deletion, or a
    change of something without a record of its own to GET)."""
    if kind == "DELETE" or object_id is None:
        return None
    for prefix, resource in RESOURCES.items():
        if event_type.startswith(prefix):
            return resource, object_id
    return None


class Records:
    """Reads changed records through the REST API as their webhooks' owners, many at a
    time (``GET /rest/labs/records``, one request for a batch of changes)."""

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

    async def many(self, owner: int, refs: Collection[Ref]) -> dict[Ref, Any]:
        """The records as ``GET`` answers them to ``owner`` now, by reference; one the
        owner may not read, or that is gone, is left out. RecordUnavailable when they
        could not be read."""
        base = self._base_url()
        if not refs or base is None:
            return {}
        url = f"{base.rstrip('/')}/rest/labs/records"
        params = [(resource, str(id)) for resource, id in sorted(set(refs))]
        try:
            response = await self.tokens.get(self.http, owner, url, params)
        except httpx.HTTPError as exc:
            raise RecordUnavailable(f"reading records: {type(exc).__name__}") from None
        if response.status_code in NOT_READABLE:
            return {}
        if response.status_code != 200:
            raise RecordUnavailable(f"reading records: the API answered {response.status_code}")
        found = response.json().get("data") or {}
        return {
            (resource, id): found[resource][str(id)]
            for resource, id in refs
            if str(id) in found.get(resource, {})
        }
