"""Who may manage and list users and groups: the checks users.py and groups.py share."""

from __future__ import annotations

from plumbline.common.context import Principal, require_principal
from plumbline.common.errors import PermissionDenied
from plumbline.services.identity.permissions import Permissions


def require_user_admin() -> Principal:
    """The caller, who must be an organization or user administrator."""
    principal = require_principal()
    if not principal.may_manage_users:
        raise PermissionDenied("Only organization or user administrators may do this.")
    return principal


async def listing_scope(
    permissions: Permissions, project: int | None, what: str
) -> set[int] | None:
    """Who may list users or groups: user administrators, or the administrators of
    the ``project`` they pass; returns the users a project's listing is limited to."""
    caller = require_principal()
    if project is None:
        if not caller.may_manage_users:
            raise PermissionDenied(
                f"Only organization or user administrators may list {what}; project "
                "administrators may pass the id of a project they administer as project."
            )
        return None
    if not caller.may_manage_users and not await permissions.administers(caller, project):
        raise PermissionDenied(f"You do not administer project {project}.")
    return await permissions.members_of(project) if what == "users" else None
