"""Bodies a route reads itself (arrays the declared models do not parse).

PATCH bodies are not read here: the gateway passes them as they came, and the service
that applies them parses them once (``plumbline.common.jsonpatch.operations``). Free-form
members of declared bodies (an item's ``fields``, a filter's query) are encoded for the
services by ``plumbline.common.jsonvalues.free_json``.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request

from plumbline.common import jsonvalues


async def read_json(request: Request) -> Any:
    """A body the route reads itself; ``jsonvalues.json_bytes`` checks its values."""
    return jsonvalues.loads(await request.body())
