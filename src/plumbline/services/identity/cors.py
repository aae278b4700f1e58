"""The origins a browser may call the API from (``/system/settings/corsdomains``).

identity stores the list; the gateways load it at start and learn every change from the
``identity.corsdomains.updated`` event, which carries the whole list, so every replica
answers CORS alike. Entries are origins as browsers send them in ``Origin``:
``scheme://host[:port]``, lower case, without the scheme's default port.
"""

from __future__ import annotations

import ipaddress
import re
from urllib.parse import urlsplit

from sqlalchemy import delete, select

from plumbline.common.context import current_principal
from plumbline.common.db import Database
from plumbline.common.errors import InvalidArgument, PermissionDenied
from plumbline.common.events import Event
from plumbline.common.outbox import Outbox
from plumbline.services.identity.models import cors_domains

MAX_ORIGINS = 100
MAX_LENGTH = 255
_DEFAULT_PORTS = {"http": 80, "https": 443}
_LABEL = r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?"
_HOSTNAME = re.compile(rf"{_LABEL}(?:\.{_LABEL})*")
_EXAMPLE = "write scheme://host[:port], for example https://app.example.com"


def origin(text: str) -> str:
    """``text`` as a normalised origin, or InvalidArgument saying what is wrong."""
    value = text.strip()
    shown = repr(text)
    if not value or len(value) > MAX_LENGTH:
        raise InvalidArgument(
            f"CORS domain {shown} must have 1 to {MAX_LENGTH} characters; {_EXAMPLE}."
        )
    try:
        parts = urlsplit(value)
    except ValueError:  # an invalid [IPv6] literal
        raise InvalidArgument(f"CORS domain {shown} has an invalid host; {_EXAMPLE}.") from None
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS or not parts.netloc:
        raise InvalidArgument(f"CORS domain {shown} is not an http or https origin; {_EXAMPLE}.")
    if parts.path not in ("", "/") or parts.query or parts.fragment or "@" in parts.netloc:
        raise InvalidArgument(
            f"CORS domain {shown} must be an origin only, without user, path, query or "
            f"fragment; {_EXAMPLE}."
        )
    try:
        port = parts.port
    except ValueError:
        raise InvalidArgument(f"CORS domain {shown} has an invalid port; {_EXAMPLE}.") from None
    host = (parts.hostname or "").lower()
    if host.startswith("[") or ":" in host or _is_ip(host):
        if not _is_ip(host):
            raise InvalidArgument(f"CORS domain {shown} has an invalid host; {_EXAMPLE}.")
        shown_host = f"[{host}]" if ":" in host else host
    elif _HOSTNAME.fullmatch(host) and len(host) <= 253:
        shown_host = host
    else:
        raise InvalidArgument(
            f"CORS domain {shown} has an invalid host name (letters, digits, hyphens and dots; "
            f"no wildcards); {_EXAMPLE}."
        )
    if port is not None and port != _DEFAULT_PORTS[scheme]:
        return f"{scheme}://{shown_host}:{port}"
    return f"{scheme}://{shown_host}"


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def _require_admin_caller(to_do: str) -> int:
    """The caller's id; a call without a caller is a gateway loading the list."""
    caller = current_principal()
    if caller is None:
        return 0
    if not caller.is_admin:
        raise PermissionDenied(f"Only organization administrators may {to_do}.")
    return caller.user_id


class CorsOrigins:
    """Reads and replaces the list."""

    def __init__(self, db: Database, outbox: Outbox) -> None:
        self.db = db
        self.outbox = outbox

    async def get(self) -> list[str]:
        """The origins, in the order they were given."""
        _require_admin_caller("read the CORS domains")
        async with self.db.read() as session:
            rows = await session.scalars(
                select(cors_domains.c.origin).order_by(cors_domains.c.position)
            )
            return list(rows)

    async def replace(self, given: list[str]) -> list[str]:
        """Replaces the list (duplicates collapse); announces the new list."""
        actor = _require_admin_caller("change the CORS domains")
        if len(given) > MAX_ORIGINS:
            raise InvalidArgument(f"At most {MAX_ORIGINS} CORS domains, got {len(given)}.")
        origins = list(dict.fromkeys(origin(text) for text in given))
        async with self.outbox.transaction() as session:
            await session.execute(delete(cors_domains))
            if origins:
                await session.execute(
                    cors_domains.insert(),
                    [{"origin": o, "position": n} for n, o in enumerate(origins)],
                )
            await self.outbox.add(
                session,
                Event(
                    "identity.corsdomains.updated",
                    actor=actor or None,
                    payload={"domains": origins},
                ),
            )
        return origins
