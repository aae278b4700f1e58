"""Workflow rules for writes: a status field moves only along its item type's steps.

``POST /items/{id}/workflowtransitions`` takes one step; a PUT or PATCH that changes the
status field is held to the same steps. A new item starts where the workflow begins: the
default option of the status field's pick list (what the item gets when it sends none).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from sqlalchemy import Row

from plumbline.common.access import Action
from plumbline.common.catalog import Catalog, ItemType, Transition
from plumbline.common.errors import InvalidArgument

if TYPE_CHECKING:  # items.py applies these rules on every write
    from plumbline.services.items.items import Items


def steps(catalog: Catalog, item_type: ItemType) -> dict[str, list[Transition]]:
    """The workflow steps of an item type, by the field they move (empty: no workflow)."""
    found: dict[str, list[Transition]] = {}
    for step in catalog.transitions:
        if step.item_type == item_type.id:
            found.setdefault(step.field, []).append(step)
    return found


def check_new(catalog: Catalog, item_type: ItemType, fields: dict[str, Any]) -> None:
    """A new item's status is the one its workflow starts with."""
    for name in steps(catalog, item_type):
        _check_start(catalog, item_type, name, fields.get(name), f"a new {item_type.display}")


def check_change(
    catalog: Catalog,
    item_type: ItemType,
    stored: dict[str, Any],
    requested: dict[str, Any],
    fields: dict[str, Any],
) -> dict[str, Any]:
    """``fields`` (checked values of a PUT) with each workflow status held to its steps.

    A status the request leaves out stays as it is, so a PUT of other fields does not
    clear it; the same status is no change; another one must be a step the workflow
    allows from the stored status.
    """
    result = dict(fields)
    for name, transitions in steps(catalog, item_type).items():
        current = stored.get(name)
        if name not in requested:
            if current is not None:
                result[name] = current
            continue
        wanted = fields.get(name)
        if wanted == current:
            continue
        if current is None:
            _check_start(catalog, item_type, name, wanted, "an item without a status")
            continue
        if any(t.from_option == current and t.to_option == wanted for t in transitions):
            continue
        allowed = [t for t in transitions if t.from_option == current]
        offered = (
            ", ".join(f"{t.action!r} to {_option(catalog, t.to_option)}" for t in allowed) or "none"
        )
        raise InvalidArgument(
            f"fields.{name} cannot change from {_option(catalog, current)} to "
            f"{_option(catalog, wanted)}: the workflow of {item_type.display} allows from "
            f"{_option(catalog, current)}: {offered}."
        )
    return result


def _check_start(
    catalog: Catalog, item_type: ItemType, name: str, value: Any, subject: str
) -> None:
    field = item_type.field(name)
    if value is None or field is None or field.pick_list is None:
        return
    initial = next(
        (o.id for o in catalog.options_of(field.pick_list) if o.default and o.active), None
    )
    if initial is not None and value != initial:
        raise InvalidArgument(
            f"fields.{name}: {subject} starts its workflow in {_option(catalog, initial)}, "
            f"not {_option(catalog, value)}; later statuses are reached through the "
            f"workflow's steps (POST /items/{{id}}/workflowtransitions)."
        )


def _option(catalog: Catalog, option: Any) -> str:
    if option is None:
        return "no status"
    found = catalog.options.get(option) if isinstance(option, int) else None
    return f"{found.name} ({option})" if found is not None else repr(option)


class Workflow:
    """``/items/{id}/workflowtransitionoptions`` and ``/workflowtransitions``."""

    def __init__(self, items_: Items) -> None:
        self.items = items_
        self.config = items_.config

    async def options(self, item_id: int) -> list[Transition]:
        """The workflow steps allowed from the item's current status (READ on the item)."""
        [item] = await self.items.get_many([item_id])
        return await self._options(item)

    async def _options(self, item: Row[Any]) -> list[Transition]:
        catalog = await self.config.catalog()
        fields = json.loads(item.fields_json)
        return [
            t
            for t in catalog.transitions
            if t.item_type == item.item_type and fields.get(t.field) == t.from_option
        ]

    async def transition(self, item_id: int, transition_id: str, comment: str) -> None:
        """Moves the item's status along one allowed step (WRITE on the item)."""
        access = await self.items.access.current()
        [item] = await self.items.get_many([item_id])
        access.require(Action.WRITE, item.project, f"item {item_id}")
        allowed = {str(t.id): t for t in await self._options(item)}
        step = allowed.get(transition_id)
        if step is None:
            offered = ", ".join(f"{t.id} ({t.action})" for t in allowed.values()) or "none"
            raise InvalidArgument(
                f"transitionId {transition_id!r} is not allowed from the item's status; "
                f"allowed: {offered}."
            )
        operations = [{"op": "add", "path": f"/fields/{step.field}", "value": step.to_option}]
        await self.items.patch(item_id, operations, set_global_id_manually=False, comment=comment)
