"""Who is calling and which request this is, carried across async calls and gRPC."""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass, field
from urllib.parse import quote, unquote

from plumbline.common.errors import PermissionDenied

ORG_ADMIN = "ORGANIZATION_ADMIN"
USER_ADMIN = "USER_ADMIN"


@dataclass(frozen=True)
class Principal:
    """An authenticated user as the services see it."""

    user_id: int
    username: str
    roles: frozenset[str] = field(default_factory=frozenset)

    @property
    def is_admin(self) -> bool:
        """Organization administrators may do everything."""
        return ORG_ADMIN in self.roles

    @property
    def may_manage_users(self) -> bool:
        """Organization or user administrators manage users and groups."""
        return bool(self.roles & {ORG_ADMIN, USER_ADMIN})


SYSTEM = Principal(user_id=0, username="system", roles=frozenset({ORG_ADMIN}))

principal_var: ContextVar[Principal | None] = ContextVar("principal", default=None)
request_id_var: ContextVar[str] = ContextVar("request_id", default="-")

# gRPC metadata keys.
USER_ID_KEY = "x-plumbline-user-id"
USERNAME_KEY = "x-plumbline-username"
ROLES_KEY = "x-plumbline-roles"
REQUEST_ID_KEY = "x-request-id"


def current_principal() -> Principal | None:
    """The caller of the current request, if any."""
    return principal_var.get()


def require_principal() -> Principal:
    """The caller, or PermissionDenied when the call carries none."""
    principal = principal_var.get()
    if principal is None:
        raise PermissionDenied("This call needs an authenticated user.")
    return principal


def require_admin(to_do: str) -> Principal:
    """The caller if an organization administrator; ``to_do`` completes the refusal."""
    principal = require_principal()
    if not principal.is_admin:
        raise PermissionDenied(f"Only organization administrators may {to_do}.")
    return principal


def to_metadata() -> list[tuple[str, str]]:
    """The current context as gRPC metadata.

    Metadata values must be printable ASCII, so the username and the request id (which
    a client may choose) travel percent-encoded.
    """
    metadata = [(REQUEST_ID_KEY, quote(request_id_var.get(), safe=""))]
    principal = principal_var.get()
    if principal is not None:
        metadata += [
            (USER_ID_KEY, str(principal.user_id)),
            (USERNAME_KEY, quote(principal.username, safe="")),
            (ROLES_KEY, ",".join(sorted(principal.roles))),
        ]
    return metadata


def from_metadata(metadata: dict[str, str]) -> tuple[Principal | None, str]:
    """Reads a principal and request id from incoming gRPC metadata."""
    request_id = unquote(metadata.get(REQUEST_ID_KEY, "-"))
    user_id = metadata.get(USER_ID_KEY)
    if user_id is None:
        return None, request_id
    roles = frozenset(r for r in metadata.get(ROLES_KEY, "").split(",") if r)
    username = unquote(metadata.get(USERNAME_KEY, ""))
    return Principal(int(user_id), username, roles), request_id
