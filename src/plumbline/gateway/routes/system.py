"""``/system/settings/corsdomains``: the origins browsers may call the API from; and
(labs) ``/system/consumers``: how far the event consumers are behind.

The contract's summaries of these two operations read reversed (GET "overwrite", POST
"read"); here GET reads the list and POST replaces it, which is what the methods say.
Organization administrators only. Each entry is an origin, ``scheme://host[:port]``;
identity normalises and checks them (see ``services/identity/cors.py``) and the gateways
answer CORS for exactly these (``gateway/cors.py``).
"""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

from fastapi import APIRouter, Depends
from starlette.requests import Request
from starlette.responses import Response

from plumbline.api.core.v1 import core_pb2
from plumbline.api.identity.v1 import identity_pb2
from plumbline.common.errors import InvalidArgument
from plumbline.gateway import records, schemas
from plumbline.gateway.deps import LABS_ONLY, Gw, View, view_of
from plumbline.gateway.envelope import ok, updated
from plumbline.gateway.jsonbody import read_json

router = APIRouter(prefix="/rest/{version}", tags=["system"])

#: For the description; identity enforces it (and says so when a body has more).
MAX_ORIGINS = 100
CorsDomains = Annotated[View, Depends(view_of("corsdomains"))]


def _whitelist(domains: list[str]) -> records.CrossOriginDomainWhiteList:
    return {"domains": domains}


def _domains(body: Any) -> list[str]:
    """The origins of a body: the contract's ``{"domains": [...]}``, or the bare array
    earlier Plumbline took (decision 0004)."""
    if isinstance(body, dict) and set(body) == {"domains"}:
        body = body["domains"]
    if not isinstance(body, list) or not all(isinstance(d, str) for d in body):
        raise InvalidArgument(
            'The body must be {"domains": [...]} with a JSON array of origins, such as '
            '{"domains": ["https://app.example.com"]}, or that array alone.'
        )
    return body


@router.get(
    "/system/settings/corsdomains",
    summary="Read the CORS domains: the origins browsers may call the API from "
    "(organization administrators)",
    description='data is the contract\'s CrossOriginDomainWhiteList, {"domains": [...]}. '
    "The contract's summary of this operation reads as an overwrite; it reads the list, as "
    "its method says (POST replaces it).",
    responses=schemas.one(records.CrossOriginDomainWhiteList, "The allowed origins."),
)
async def get_cors_domains(view: CorsDomains, gw: Gw) -> Response:
    reply = await gw.upstreams.identity.cors.GetCorsDomains(core_pb2.Empty())
    return ok(_whitelist(list(reply.domains)), view.links())


@router.post(
    "/system/settings/corsdomains",
    summary="Replace the CORS domains (organization administrators)",
    description="The body is the contract's CrossOriginDomainWhiteList, the whole list of "
    'origins, scheme://host[:port] each (for example {"domains": '
    '["https://app.example.com"]}), or that array alone; an empty array allows no origin. '
    "The contract's summary of this operation reads as a read; it replaces the list, as "
    "its method says (GET reads it).",
    responses=schemas.updated(
        records.CrossOriginDomainWhiteList, "The allowed origins as stored (normalised)."
    ),
    openapi_extra=schemas.strings_body(MAX_ORIGINS, "Every allowed origin.", "domains"),
)
async def set_cors_domains(request: Request, gw: Gw) -> Response:
    domains = _domains(await read_json(request))
    message = identity_pb2.CorsDomains(domains=domains)
    reply = await gw.upstreams.identity.cors.SetCorsDomains(message)
    return updated(_whitelist(list(reply.domains)))


@router.get(
    "/system/consumers",
    summary="How far the event consumers are behind, per partition (organization "
    "administrators, labs)",
    description="The activity feed (consumer activity), the history (consumer "
    "baselines) and the change feed (consumer hooks) apply every change from events, "
    "split into partitions by project (PLUMBLINE_EVENT_PARTITIONS); each partition is "
    "consumed by one replica (holder). "
    "eventsBehind is how many events published to a partition are not applied yet, "
    "secondsBehind how old the newest one applied was when it was applied (0 once caught "
    "up); reportedAt says when, since a replica reports the partitions it holds every "
    "few seconds (the replica that answers reports its own as they are). A read of the "
    "feed or the history waits for its consumer to catch up, and answers 503 after "
    "PLUMBLINE_CONSISTENCY_WAIT: this says how far behind they are.",
    responses=schemas.page(records.ConsumerPartition, "Every partition of each consumer."),
    dependencies=[LABS_ONLY],
)
async def get_consumers(gw: Gw) -> Response:
    # Each consumer asked of the service that runs it.
    replies = await asyncio.gather(
        gw.upstreams.activity.consumers.GetLag(core_pb2.ConsumerLagRequest(consumer="activity")),
        gw.upstreams.baselines.consumers.GetLag(core_pb2.ConsumerLagRequest(consumer="baselines")),
        gw.upstreams.hooks.consumers.GetLag(core_pb2.ConsumerLagRequest(consumer="hooks")),
    )
    data = [_partition(p) for reply in replies for p in reply.partitions]
    return ok(data, page=(0, len(data), len(data)))


def _partition(lag: core_pb2.PartitionLag) -> records.ConsumerPartition:
    partition: records.ConsumerPartition = {
        "consumer": lag.consumer,
        "partition": lag.partition,
        "eventsBehind": lag.events_behind,
        "secondsBehind": round(lag.seconds_behind, 3),
    }
    if lag.holder:
        partition["holder"] = lag.holder
    if lag.reported_at:
        partition["reportedAt"] = lag.reported_at
    return partition
