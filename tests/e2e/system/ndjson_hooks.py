"""Schemathesis hooks for ``test_openapi`` (``SCHEMATHESIS_HOOKS``): JSON Lines bodies.

The import's body is described as the array of its lines (``application/x-ndjson``); this
writes a generated array as one JSON object a line, as clients send it.
"""

from __future__ import annotations

import json
from typing import Any

import schemathesis


@schemathesis.serializer("application/x-ndjson")
def json_lines(ctx: Any, value: Any) -> bytes:
    lines = value if isinstance(value, list) else [value]
    return b"".join(json.dumps(line).encode() + b"\n" for line in lines)
