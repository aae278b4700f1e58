"""Where items sit: sort order among siblings, dotted sequence, and project-wide order.

``global_sort_order`` is the item's place in a pre-order walk of the project's tree. It is
gapped (``GAP`` apart) so that a new item, which always goes to the bottom of its parent,
gets the next free number after its parent's subtree without touching anyone else; about
a million items can be appended at one place before the project is renumbered.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

from sqlalchemy import BigInteger, and_, bindparam, func, literal, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from plumbline.services.items.models import items, projects

#: Room between neighbours in the global order after a renumbering. Appends at one place
#: step by one, so a place takes about a million of them before the whole project must be
#: renumbered (with 1,024, seeding 200,000 items renumbered the big project ~200 times).
#: The column is 64-bit; at this gap a project could hold 8 billion items.
GAP = 1 << 20


async def lock_project(session: AsyncSession, project: int, added: int = 0) -> str | None:
    """Serialises tree changes within a project for the rest of the transaction; returns
    the project's key (None when there is no such project). ``added``: active items the
    transaction adds to the project (its count moves in the same statement).

    An UPDATE of the project row (it counts the change, ``tree_changes``): on PostgreSQL
    it takes the row lock; on SQLite it opens the write transaction, so everything read
    after it is current. Sort orders,
    global orders and document-key counters are read and then written, so concurrent
    writers in one project must not interleave. The key comes back with the lock, so a
    create needs no read of its own for it.
    """
    key = await session.scalar(
        _locking(projects.c.id == project, added).returning(projects.c.project_key)
    )
    return None if key is None else str(key)


async def lock_new_place(
    session: AsyncSession, *, project: int | None = None, item: int | None = None
) -> tuple[int, str] | None:
    """``lock_project`` for a new item (counted) placed in ``project`` (not a folder) or
    under the active item ``item``: (the project, its key), or None when there is no such
    project or item. One statement finds and locks it."""
    if item is not None:
        where = projects.c.id == _project_of(item, active=True)
    else:
        where = and_(projects.c.id == project, projects.c.is_folder.is_(False))
    row = (
        await session.execute(_locking(where, 1).returning(projects.c.id, projects.c.project_key))
    ).first()
    return None if row is None else (int(row[0]), str(row[1]))


def _locking(where: Any, added: int) -> Any:
    """The UPDATE of the project rows ``where`` picks that locks them (``lock_project``):
    it counts the change, and ``added`` new active items."""
    return (
        update(projects)
        .where(where)
        .values(
            active_items=projects.c.active_items + added,
            tree_changes=projects.c.tree_changes + 1,
        )
    )


def _project_of(item: int, active: bool = False) -> Any:
    """The project of item ``item`` (an active one's only, with ``active``), as a scalar
    subquery."""
    query = select(items.c.project).where(items.c.id == item)
    return (query.where(items.c.active.is_(True)) if active else query).scalar_subquery()


async def count_items(session: AsyncSession, project: int, added: int) -> None:
    """Moves the project's count of active items by ``added`` (negative: fewer)."""
    if added:
        await session.execute(
            update(projects)
            .where(projects.c.id == project)
            .values(active_items=projects.c.active_items + added)
        )


def fewer(projects_: Iterable[int]) -> dict[int, int]:
    """``count_relationships``' change for one relationship gone from each of
    ``projects_`` per time the project appears there."""
    return {project: -n for project, n in Counter(projects_).items()}


async def count_relationships(session: AsyncSession, added: Mapping[int, int]) -> None:
    """Moves each project's kept count of visible relationships by ``added[project]``
    (negative: fewer)."""
    for project, delta in sorted(added.items()):
        if delta:
            await session.execute(
                update(projects)
                .where(projects.c.id == project)
                .values(visible_relationships=projects.c.visible_relationships + delta)
            )


async def lock_project_of(session: AsyncSession, item_id: int) -> None:
    """``lock_project`` for the project of item ``item_id`` (nothing when there is no such
    item), in one statement."""
    await session.execute(_locking(projects.c.id == _project_of(item_id), 0))


def child_sequence(parent_sequence: str | None, sort_order: int) -> str:
    """The dotted sequence of the child at ``sort_order`` (0-based)."""
    own = str(sort_order + 1)
    return f"{parent_sequence}.{own}" if parent_sequence else own


def sequence_key(sequence: str) -> tuple[int, ...]:
    """Sorts sequences in tree order ("1.10" after "1.9")."""
    return tuple(int(part) for part in sequence.split(".") if part)


async def next_sort_order(session: AsyncSession, project: int, parent: int | None) -> int:
    """The bottom position under ``parent`` (the project root when None)."""
    query = select(func.count()).select_from(items).where(items.c.active.is_(True))
    if parent is None:
        query = query.where(items.c.project == project, items.c.parent.is_(None))
    else:
        query = query.where(items.c.parent == parent)
    return int(await session.scalar(query) or 0)


async def _subtree_end(session: AsyncSession, project: int, parent: Any) -> int:
    """The largest global order inside ``parent``'s subtree (or the whole project)."""
    query = select(func.max(items.c.global_sort_order)).where(
        items.c.project == project, items.c.active.is_(True)
    )
    if parent is None:
        return int(await session.scalar(query) or 0)
    # Descendants' sequences sort between "<seq>." and "<seq>/" ("/" follows "."), a range
    # the (project, sequence) index answers without a scan.
    prefix = parent.sequence + "."
    below = await session.scalar(
        query.where(items.c.sequence >= prefix, items.c.sequence < parent.sequence + "/")
    )
    return max(int(parent.global_sort_order), int(below or 0))


_ACTIVE = items.c.active.is_(True)
_ORDER = items.c.global_sort_order


def _siblings(at_root: bool, parent: Any = None) -> Any:
    """Active children of ``parent`` (``:parent`` unless given), or of ``:project``'s
    root."""
    if at_root:
        return and_(items.c.project == bindparam("project"), items.c.parent.is_(None), _ACTIVE)
    return and_(items.c.parent == (bindparam("parent") if parent is None else parent), _ACTIVE)


def _last_child(siblings: Any) -> Any:
    """The largest sort order among ``siblings``."""
    return select(items.c.sort_order).where(siblings).order_by(items.c.sort_order.desc()).limit(1)


def _next_sibling(siblings: Any) -> Any:
    """The global order of the first of ``siblings`` after sort order ``:after``."""
    return (
        select(_ORDER)
        .where(siblings, items.c.sort_order > bindparam("after"))
        .order_by(items.c.sort_order)
        .limit(1)
    )


def _last_before(high: Any) -> Any:
    """The largest global order in ``:project`` below ``high``."""
    return (
        select(_ORDER)
        .where(items.c.project == bindparam("project"), _ACTIVE, high > _ORDER)
        .order_by(_ORDER.desc())
        .limit(1)
    )


# The reads behind ``gap_after``, built once with bound parameters (building and keying a
# statement costs about as much as running one). Each is a seek in an index
# (ix_items_children, ix_items_root, ix_items_tree): none reads a subtree.
_LAST_CHILD = {at_root: _last_child(_siblings(at_root)) for at_root in (False, True)}
_NEXT_SIBLING = {at_root: _next_sibling(_siblings(at_root)) for at_root in (False, True)}
_UP = select(items.c.parent, items.c.sort_order).where(items.c.id == bindparam("item"))
_LAST_BEFORE = _last_before(bindparam("high"))
_LAST_IN_PROJECT = (
    select(_ORDER)
    .where(items.c.project == bindparam("project"), _ACTIVE)
    .order_by(_ORDER.desc())
    .limit(1)
)


def _first_level(parent_at_root: bool) -> Any:
    """``gap_after``'s reads for a parent, one statement: its last child's sort order, the
    global order of its next sibling (None when it has none), and the largest global order
    before that sibling (or in the whole project when none). Three seeks, one round trip;
    the subtree's end is right whenever the sibling was found or the parent is at the root.
    """
    last = _last_child(_siblings(False, bindparam("child_of"))).scalar_subquery()
    high = _next_sibling(_siblings(parent_at_root, bindparam("sibling_of"))).scalar_subquery()
    low = _last_before(func.coalesce(high, literal(_BEYOND, BigInteger))).scalar_subquery()
    return select(last, high, low)


#: Beyond every global order: "before the next sibling" when there is none.
_BEYOND = 2**63 - 1
_FIRST_LEVEL = {at_root: _first_level(at_root) for at_root in (False, True)}
_AT_ROOT = select(_LAST_CHILD[True].scalar_subquery(), _LAST_IN_PROJECT.scalar_subquery())


async def gap_after(
    session: AsyncSession, project: int, parent: Any
) -> tuple[int, int, int | None]:
    """Where new last children of ``parent`` go (an active row read under the project's
    lock, or None for the project root): (the next sort order among its children, the
    largest global order in its subtree, the first global order after that or None).

    The global order is a pre-order walk, so a subtree holds the global orders from its
    root's up to (not including) the first item after it: the next sibling of the root,
    or of the nearest ancestor that has one. That item is found by a seek per level, and
    the subtree's end is the largest global order before it, one more seek; a count or
    a maximum over the subtree grew with it (65% of a POST /items under a folder of
    7,000 items at 200,000). The project root's reads, and a parent's first level with
    the end after it, are one statement each (``_AT_ROOT``, ``_FIRST_LEVEL``): a round
    trip costs more than the seeks.
    """
    values: dict[str, Any] = {"project": project}
    if parent is None:
        last, low = (await session.execute(_AT_ROOT, values)).one()
        return (0 if last is None else int(last) + 1), int(low or 0), None
    at_root = parent.parent is None
    last, high, low = (
        await session.execute(
            _FIRST_LEVEL[at_root],
            {
                **values,
                "child_of": parent.id,
                "sibling_of": parent.parent,
                "after": parent.sort_order,
            },
        )
    ).one()
    if high is None and not at_root:
        # No next sibling: the nearest ancestor's that has one ends the subtree.
        node_parent = parent.parent
        while True:
            node_parent, node_order = (await session.execute(_UP, {"item": node_parent})).one()
            at_root = node_parent is None
            step = {**values, "parent": node_parent, "after": node_order}
            high = await session.scalar(_NEXT_SIBLING[at_root], step)
            if high is not None or at_root:
                break
        if high is None:
            low = await session.scalar(_LAST_IN_PROJECT, values)
        else:
            low = await session.scalar(_LAST_BEFORE, {**values, "high": high})
    low = max(int(low or 0), int(parent.global_sort_order))
    return (0 if last is None else int(last) + 1), low, None if high is None else int(high)


async def place_new(session: AsyncSession, project: int, parent: Any) -> tuple[int, int]:
    """(sort order, global order) of a new last child of ``parent`` (as ``gap_after``).

    Only when the gap after the subtree is used up does it fall back to
    ``global_order_for_new``, which renumbers.
    """
    sort_order, low, high = await gap_after(session, project, parent)
    if high is None:
        return sort_order, low + GAP
    if high - low > 1:
        return sort_order, int(low + max(1, (high - low) // GAP))
    return sort_order, await global_order_for_new(session, project, parent)


async def global_order_for_new(session: AsyncSession, project: int, parent: Any) -> int:
    """A global order for a new last child of ``parent``; renumbers when out of room."""
    for _ in range(2):
        low = await _subtree_end(session, project, parent)
        high = await session.scalar(
            select(func.min(items.c.global_sort_order)).where(
                items.c.project == project,
                items.c.active.is_(True),
                items.c.global_sort_order > low,
            )
        )
        if high is None:
            return low + GAP
        if high - low > 1:
            # New items are appended: step just past the subtree, so repeated appends at
            # one place use the gap one number at a time instead of halving it.
            return int(low + max(1, (high - low) // GAP))
        await renumber(session, project)
    raise RuntimeError("could not find room in the global order after renumbering")


async def renumber(session: AsyncSession, project: int) -> None:
    """Gives every active item of the project a fresh, evenly gapped global order."""
    rows = (
        await session.execute(
            select(items.c.id, items.c.sequence, items.c.global_sort_order).where(
                items.c.project == project, items.c.active.is_(True)
            )
        )
    ).all()
    ordered = sorted(rows, key=lambda r: sequence_key(r.sequence))
    changes = [
        {"row_id": row.id, "wanted": position * GAP}
        for position, row in enumerate(ordered, start=1)
        if row.global_sort_order != position * GAP
    ]
    if changes:
        # One executemany: a statement per row through the driver's thread cost ~0.3 ms
        # each, so renumbering a 14,000-item project stalled its writers for seconds.
        await session.execute(
            update(items)
            .where(items.c.id == bindparam("row_id"))
            .values(global_sort_order=bindparam("wanted")),
            changes,
        )


async def _children(session: AsyncSession, project: int, parent: int | None) -> list[Any]:
    """The active children of ``parent`` (the project root when None), in order."""
    condition = (
        and_(items.c.project == project, items.c.parent.is_(None))
        if parent is None
        else items.c.parent == parent
    )
    return list(
        (
            await session.execute(
                select(items.c.id, items.c.sort_order, items.c.sequence)
                .where(condition, items.c.active.is_(True))
                .order_by(items.c.sort_order, items.c.id)
            )
        ).all()
    )


async def close_gap(
    session: AsyncSession, project: int, parent: int | None, parent_sequence: str | None
) -> None:
    """After a child left ``parent``: renumbers the siblings and their subtrees' sequences."""
    children = await _children(session, project, parent)
    for position, child in enumerate(children):
        wanted = child_sequence(parent_sequence, position)
        if child.sort_order == position and child.sequence == wanted:
            continue
        await session.execute(
            update(items).where(items.c.id == child.id).values(sort_order=position, sequence=wanted)
        )
        await move_subtree_sequences(session, project, child.sequence, wanted)


async def move_subtree_sequences(session: AsyncSession, project: int, old: str, new: str) -> None:
    """Rewrites the sequence prefix of every active descendant of the item at ``old``."""
    await session.execute(
        update(items)
        .where(
            items.c.project == project,
            items.c.active.is_(True),
            items.c.sequence.startswith(old + "."),
        )
        .values(sequence=new + func.substr(items.c.sequence, len(old) + 1))
    )


async def place_after(
    session: AsyncSession,
    project: int,
    parent: int | None,
    parent_sequence: str | None,
    item_id: int,
    peer: int | None,
) -> None:
    """Puts child ``item_id`` of ``parent`` right after sibling ``peer`` (first when None).

    Siblings whose position changes get new sort orders and sequences, with their
    subtrees; the item's subtree is parked under a sequence nobody has while the others
    shift, so no two items ever share a sequence. The caller renumbers the global order.
    """
    children = await _children(session, project, parent)
    order = [child.id for child in children if child.id != item_id]
    position = 0 if peer is None else order.index(peer) + 1
    order.insert(position, item_id)
    await _reordered(session, project, parent_sequence, children, order)


async def reorder(
    session: AsyncSession,
    project: int,
    parent: int | None,
    parent_sequence: str | None,
    first: list[int],
) -> list[int] | None:
    """Puts the children ``first`` of ``parent`` first, in that order, and its other
    children after them in theirs. Answers the ids of ``first`` that are not children of
    ``parent`` (nothing moves then), or None. The caller renumbers the global order."""
    children = await _children(session, project, parent)
    ids = {child.id for child in children}
    strangers = [item for item in first if item not in ids]
    if strangers:
        return strangers
    wanted = set(first)
    order = list(first) + [child.id for child in children if child.id not in wanted]
    await _reordered(session, project, parent_sequence, children, order)
    return None


async def _reordered(
    session: AsyncSession,
    project: int,
    parent_sequence: str | None,
    children: list[Any],
    order: list[int],
) -> None:
    """Gives ``children`` (as read, in their order) the ``order`` of their ids: those
    whose position changes get new sort orders and sequences, with their subtrees."""
    moved = [c for c, wanted in zip(children, order, strict=True) if c.id != wanted]
    moved_ids = {c.id for c in moved}
    for child in moved:
        parked = f"0.{child.id}"
        await session.execute(update(items).where(items.c.id == child.id).values(sequence=parked))
        await move_subtree_sequences(session, project, child.sequence, parked)
    for position, child_id in enumerate(order):
        if child_id not in moved_ids:
            continue
        wanted = child_sequence(parent_sequence, position)
        await session.execute(
            update(items).where(items.c.id == child_id).values(sort_order=position, sequence=wanted)
        )
        await move_subtree_sequences(session, project, f"0.{child_id}", wanted)
