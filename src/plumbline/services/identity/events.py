"""The events identity writes for users and groups (credentials and roles build theirs
inline or reuse these)."""

from __future__ import annotations

from typing import Any

from plumbline.common.context import Principal
from plumbline.common.events import Event


def user_event(action: str, user_id: int, actor: Principal, username: str, version: int) -> Event:
    """``identity.user.<action>``: every gateway drops the user's cached principal on it."""
    return Event(
        f"identity.user.{action}",
        actor=actor.user_id or None,
        object_ids=[user_id],
        version=version,
        payload={"user": user_id, "username": username},
    )


def group_event(
    action: str,
    group_id: int,
    actor: Principal,
    name: str,
    project: int | None,
    user_id: int | None = None,
) -> Event:
    """``identity.group.<action>``; member changes name the user as well."""
    payload: dict[str, Any] = {"group": group_id, "name": name}
    if user_id is not None:
        payload["user"] = user_id
    return Event(
        f"identity.group.{action}",
        actor=actor.user_id,
        project=project,
        object_ids=[group_id],
        payload=payload,
    )
