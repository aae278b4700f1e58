"""``/system/settings/corsdomains``: the origins browsers may call the API from.

The contract's summaries of these two operations read reversed (GET "overwrite", POST
"read"); here GET reads the list and POST replaces it, which is what the methods say.
Organization administrators only. Each entry is an origin, ``scheme://host[:port]``;
identity normalises and checks them (see ``services/identity/cors.py``) and the gateways
answer CORS for exactly these (``gateway/cors.py``).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends
from starlette.requests import Request
from starlette.responses import Response

from plumbline.api.core.v1 import core_pb2
from plumbline.api.identity.v1 import identity_pb2
from plumbline.common.errors import InvalidArgument
from plumbline.gateway import schemas
from plumbline.gateway.deps import Gw, View, view_of
from plumbline.gateway.envelope import ok, updated
from plumbline.gateway.jsonbody import read_json

router = APIRouter(prefix="/rest/{version}", tags=["system"])

#: For the description; identity enforces it (and says so when a body has more).
MAX_ORIGINS = 100
CorsDomains = Annotated[View, Depends(view_of("corsdomains"))]


@router.get(
    "/system/settings/corsdomains",
    summary="Read the CORS domains: the origins browsers may call the API from "
    "(organization administrators)",
    description="The contract's summary of this operation reads as an overwrite; it reads "
    "the list, as its method says (POST replaces it).",
    responses=schemas.strings("CorsDomainsDataWrapper", "The allowed origins."),
)
async def get_cors_domains(view: CorsDomains, gw: Gw) -> Response:
    reply = await gw.upstreams.identity.cors.GetCorsDomains(core_pb2.Empty())
    return ok(list(reply.domains), view.links())


@router.post(
    "/system/settings/corsdomains",
    summary="Replace the CORS domains (organization administrators)",
    description="The body is the whole list of origins, scheme://host[:port] each "
    '(for example ["https://app.example.com"]); an empty array allows no origin. The '
    "contract's summary of this operation reads as a read; it replaces the list, as its "
    "method says (GET reads it).",
    responses=schemas.strings(
        "CorsDomainsUpdated", "The allowed origins as stored (normalised).", after_write=True
    ),
    openapi_extra=schemas.strings_body(MAX_ORIGINS, "Every allowed origin."),
)
async def set_cors_domains(request: Request, gw: Gw) -> Response:
    body = await read_json(request)
    if not isinstance(body, list) or not all(isinstance(d, str) for d in body):
        raise InvalidArgument(
            'The body must be a JSON array of origins, such as ["https://app.example.com"].'
        )
    reply = await gw.upstreams.identity.cors.SetCorsDomains(identity_pb2.CorsDomains(domains=body))
    return updated(list(reply.domains))
