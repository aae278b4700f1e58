"""identity's queries."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

from sqlalchemy import Row, Select, and_, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from plumbline.common.db import first_or_missing
from plumbline.services.identity.models import group_members, groups, users

USER_COLUMNS = [c for c in users.c if c.name not in ("password_hash", "username_key")]


def _user(user_id: int) -> Select[Any]:
    return select(*USER_COLUMNS).where(users.c.id == user_id)


async def user_by_id(session: AsyncSession, user_id: int) -> Row[Any] | None:
    """One user without the password hash."""
    row: Row[Any] | None = (await session.execute(_user(user_id))).first()
    return row


async def user_or_missing(session: AsyncSession, user_id: int) -> Row[Any]:
    """One user without the password hash; ``NotFound`` when there is none."""
    return await first_or_missing(session, _user(user_id), f"No user with id {user_id}.")


async def users_by_ids(session: AsyncSession, ids: Sequence[int]) -> list[Row[Any]]:
    """Users in id order (missing ids are left out)."""
    if not ids:
        return []
    query = select(*USER_COLUMNS).where(users.c.id.in_(list(ids))).order_by(users.c.id)
    return list((await session.execute(query)).all())


async def credentials_of(session: AsyncSession, username: str) -> Any:
    """id, hash, active and roles of a user by (case-insensitive) username."""
    query = select(
        users.c.id, users.c.username, users.c.password_hash, users.c.active, users.c.roles
    ).where(users.c.username_key == username.lower())
    return (await session.execute(query)).first()


def _filters(
    usernames: Sequence[str],
    emails: Sequence[str],
    first_names: Sequence[str],
    last_names: Sequence[str],
    include_inactive: bool,
) -> list[Any]:
    conditions: list[Any] = []
    for column, values in (
        (users.c.username, usernames),
        (users.c.email, emails),
        (users.c.first_name, first_names),
        (users.c.last_name, last_names),
    ):
        if values:
            conditions.append(func.lower(column).in_([v.lower() for v in values]))
    if not include_inactive:
        conditions.append(users.c.active.is_(True))
    return conditions


async def list_users(
    session: AsyncSession,
    *,
    usernames: Sequence[str] = (),
    emails: Sequence[str] = (),
    first_names: Sequence[str] = (),
    last_names: Sequence[str] = (),
    include_inactive: bool = False,
    among: Collection[int] | None = None,
    start_at: int = 0,
    max_results: int = 20,
) -> tuple[list[Row[Any]], int]:
    """A page of users matching every given filter (and in ``among``), and the total."""
    where = and_(True, *_filters(usernames, emails, first_names, last_names, include_inactive))
    if among is not None:
        where = and_(where, users.c.id.in_(list(among)))
    total = await session.scalar(select(func.count()).select_from(users).where(where))
    rows = (
        await session.execute(
            select(*USER_COLUMNS)
            .where(where)
            .order_by(users.c.id)
            .offset(start_at)
            .limit(max_results)
        )
    ).all()
    return list(rows), int(total or 0)


async def list_groups(
    session: AsyncSession, project: int | None, start_at: int, max_results: int
) -> tuple[list[Row[Any]], int]:
    """A page of groups (of one project when given) and the total."""
    where = and_(True) if project is None else groups.c.project == project
    total = await session.scalar(select(func.count()).select_from(groups).where(where))
    rows = (
        await session.execute(
            select(groups).where(where).order_by(groups.c.id).offset(start_at).limit(max_results)
        )
    ).all()
    return list(rows), int(total or 0)


async def groups_by_ids(session: AsyncSession, ids: Sequence[int]) -> list[Row[Any]]:
    """Groups in id order."""
    if not ids:
        return []
    query = select(groups).where(groups.c.id.in_(list(ids))).order_by(groups.c.id)
    return list((await session.execute(query)).all())


async def group_or_missing(session: AsyncSession, group_id: int) -> Row[Any]:
    """One group; ``NotFound`` when there is none."""
    return await first_or_missing(
        session, select(groups).where(groups.c.id == group_id), f"No user group with id {group_id}."
    )


async def group_members_page(
    session: AsyncSession, group_id: int, start_at: int, max_results: int
) -> tuple[list[Row[Any]], int]:
    """A page of a group's members and their total."""
    joined = users.join(group_members, group_members.c.user_id == users.c.id)
    where = group_members.c.group_id == group_id
    total = await session.scalar(select(func.count()).select_from(joined).where(where))
    rows = (
        await session.execute(
            select(*USER_COLUMNS)
            .select_from(joined)
            .where(where)
            .order_by(users.c.id)
            .offset(start_at)
            .limit(max_results)
        )
    ).all()
    return list(rows), int(total or 0)


async def share_a_group(session: AsyncSession, user_a: int, user_b: int) -> bool:
    """Whether two users are members of a common group."""
    a = group_members.alias("a")
    b = group_members.alias("b")
    query = (
        select(a.c.group_id)
        .join(b, a.c.group_id == b.c.group_id)
        .where(a.c.user_id == user_a, b.c.user_id == user_b)
        .limit(1)
    )
    return (await session.scalar(query)) is not None
