"""``links`` and ``include``: every reference field, resolved with one batch call per type."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any, Protocol, TypeVar

from starlette.requests import Request

from plumbline.api.attachments.v1 import attachments_pb2
from plumbline.api.core.v1 import core_pb2
from plumbline.api.items.v1 import items_pb2
from plumbline.api.testmgmt.v1 import testmgmt_pb2
from plumbline.common.errors import InvalidArgument, NotFound, PermissionDenied
from plumbline.gateway import representations
from plumbline.gateway.envelope import LinkTemplate
from plumbline.gateway.upstreams import Upstreams

#: Fields of test records that refer to records. The test run item type does not declare
#: them (they are the service's, not configuration's), so they link by name.
TEST_FIELD_LINKS = {
    "data.fields.testCase": "items",
    "data.fields.testCycle": "testcycles",
    "data.fields.testPlan": "testplans",
}

_ITEMS = {
    "data.project": "projects",
    "data.createdBy": "users",
    "data.modifiedBy": "users",
    "data.itemType": "itemtypes",
    "data.childItemType": "itemtypes",
    "data.location.parent.item": "items",
    "data.lock.lockedBy": "users",
}

_TEST_RECORDS = {
    "data.project": "projects",
    "data.createdBy": "users",
    "data.modifiedBy": "users",
    "data.itemType": "itemtypes",
}

#: resource type -> {dotted link path -> referenced resource type}
LINKS: dict[str, dict[str, str]] = {
    "users": {},
    "usergroups": {"data.project": "projects"},
    "permissions": {
        "data.project": "projects",
        "data.user": "users",
        "data.userGroup": "usergroups",
    },
    "projects": {
        "data.parent": "projects",
        "data.createdBy": "users",
        "data.modifiedBy": "users",
        "data.fields.projectManager": "users",
    },
    "activities": {"data.user": "users"},
    "versions": {"data.createdBy": "users"},
    "baselines": {"data.project": "projects", "data.createdBy": "users"},
    "baselineitems": _ITEMS,
    "baselinechanges": {"data.relationshipType": "relationshiptypes"},
    "baselinefolders": {"data.project": "projects", "data.createdBy": "users"},
    "versionedrelationships": {"data.relationshipType": "relationshiptypes"},
    "apicredentials": {"data.user": "users"},
    "userroles": {"data.user": "users"},
    "corsdomains": {},
    "itemtypes": {"data.fields.pickList": "picklists", "data.fields.itemType": "itemtypes"},
    "picklists": {},
    "picklistoptions": {"data.pickList": "picklists"},
    "relationshiptypes": {},
    "relationships": {
        "data.fromItem": "items",
        "data.toItem": "items",
        "data.relationshipType": "relationshiptypes",
    },
    "tags": {"data.project": "projects"},
    "releases": {"data.project": "projects"},
    "comments": {
        "data.createdBy": "users",
        "data.modifiedBy": "users",
        "data.inReplyTo": "comments",
        "data.location.item": "items",
        "data.location.project": "projects",
    },
    "locks": {"data.lockedBy": "users"},
    "syncstatus": {},
    "links": {},
    "filters": {"data.author": "users", "data.specifiedProject": "projects"},
    "filtercounts": {},
    "categories": {},
    "relationshiprulesets": {"data.rules.relationshipType": "relationshiptypes"},
    "workflowtransitions": {"data.newStatus": "picklistoptions"},
    "locations": {"data.parent.item": "items", "data.parent.project": "projects"},
    "items": _ITEMS,
    # Items and test records alike (/abstractitems).
    "abstractitems": {**_ITEMS, **TEST_FIELD_LINKS},
    "testplans": {**_TEST_RECORDS, "data.lock.lockedBy": "users"},
    "testcycles": {**_TEST_RECORDS, "data.fields.testPlan": "testplans"},
    "testruns": {**_TEST_RECORDS, "data.lock.lockedBy": "users", **TEST_FIELD_LINKS},
    "attachments": {**_TEST_RECORDS, "data.lock.lockedBy": "users"},
    "testgroups": {"data.assignedTo": "users"},
    "testcycletestgroups": {"data.assignedTo": "users", "data.testCycle": "testcycles"},
}

#: Resources whose records have an item type's ``fields``: each reference field of any
#: item type links too (``data.fields.<name>``).
WITH_FIELDS = ("items", "abstractitems", "testplans", "testcycles", "testruns", "baselineitems")

#: Field types whose values refer to records, and the type they refer to.
FIELD_LINKS = {
    "LOOKUP": "picklistoptions",
    "MULTI_LOOKUP": "picklistoptions",
    "USER": "users",
    "RELEASE": "releases",
    "DOCUMENT_TYPE_ITEM_LOOKUP": "items",
}

#: Reads records of one type by id, rendered as their own ``GET`` renders them (dates in
#: ``fields`` with a time part when ``dated``): those found that the caller may read, by id.
Resolver = Callable[[Upstreams, list[int], bool], Awaitable[dict[str, Any]]]


class _Record(Protocol):
    @property
    def id(self) -> int: ...


Record = TypeVar("Record", bound=_Record)


def _by_id(
    records: Iterable[Record], render: Callable[[Record], Mapping[str, Any]]
) -> dict[str, Any]:
    return {str(record.id): render(record) for record in records}


async def _users(up: Upstreams, ids: list[int], dated: bool) -> dict[str, Any]:
    reply = await up.identity.users.GetUsers(core_pb2.IdList(ids=ids))
    return _by_id(reply.users, representations.user)


async def _groups(up: Upstreams, ids: list[int], dated: bool) -> dict[str, Any]:
    reply = await up.identity.groups.GetGroups(core_pb2.IdList(ids=ids))
    return _by_id(reply.groups, representations.group)


async def _projects(up: Upstreams, ids: list[int], dated: bool) -> dict[str, Any]:
    reply = await up.items.projects.GetProjects(core_pb2.IdList(ids=ids))
    return _by_id(reply.projects, representations.project)


async def _item_types(up: Upstreams, ids: list[int], dated: bool) -> dict[str, Any]:
    reply = await up.items.configuration.GetItemTypes(core_pb2.IdList(ids=ids))
    return _by_id(reply.item_types, representations.item_type)


async def _pick_lists(up: Upstreams, ids: list[int], dated: bool) -> dict[str, Any]:
    reply = await up.items.configuration.GetPickLists(core_pb2.IdList(ids=ids))
    return _by_id(reply.pick_lists, representations.pick_list)


async def _pick_list_options(up: Upstreams, ids: list[int], dated: bool) -> dict[str, Any]:
    reply = await up.items.configuration.GetPickListOptions(core_pb2.IdList(ids=ids))
    return _by_id(reply.options, representations.pick_list_option)


async def _relationship_types(up: Upstreams, ids: list[int], dated: bool) -> dict[str, Any]:
    reply = await up.items.configuration.GetRelationshipTypes(core_pb2.IdList(ids=ids))
    return _by_id(reply.relationship_types, representations.relationship_type)


async def _items(up: Upstreams, ids: list[int], dated: bool) -> dict[str, Any]:
    reply = await up.items.items.GetItems(items_pb2.GetItemsRequest(ids=ids, dates_with_time=dated))
    return _by_id(reply.items, representations.item)


async def _relationships(up: Upstreams, ids: list[int], dated: bool) -> dict[str, Any]:
    reply = await up.items.relationships.GetRelationships(core_pb2.IdList(ids=ids))
    return _by_id(reply.relationships, representations.relationship)


async def _tags(up: Upstreams, ids: list[int], dated: bool) -> dict[str, Any]:
    reply = await up.items.tags.GetTags(core_pb2.IdList(ids=ids))
    return _by_id(reply.tags, representations.tag)


async def _releases(up: Upstreams, ids: list[int], dated: bool) -> dict[str, Any]:
    reply = await up.items.releases.GetReleases(core_pb2.IdList(ids=ids))
    return _by_id(reply.releases, representations.release)


async def _comments(up: Upstreams, ids: list[int], dated: bool) -> dict[str, Any]:
    reply = await up.items.comments.GetComments(core_pb2.IdList(ids=ids))
    return _by_id(reply.comments, representations.comment)


def _test_records(
    kind: testmgmt_pb2.Kind.ValueType,
    render: Callable[[testmgmt_pb2.TestRecord], Mapping[str, Any]],
) -> Resolver:
    async def read(up: Upstreams, ids: list[int], dated: bool) -> dict[str, Any]:
        reply = await up.testmgmt.records.GetRecords(
            testmgmt_pb2.GetRecordsRequest(
                ids=ids, kind=kind, dates_with_time=dated, skip_missing=True
            )
        )
        return _by_id(reply.records, render)

    return read


async def _attachments(up: Upstreams, ids: list[int], dated: bool) -> dict[str, Any]:
    reply = await up.attachments.attachments.GetAttachments(
        attachments_pb2.GetAttachmentsRequest(ids=ids, dates_with_time=dated, skip_missing=True)
    )
    return _by_id(reply.attachments, representations.attachment)


async def _baselines(up: Upstreams, ids: list[int], dated: bool) -> dict[str, Any]:
    # One by one: there are few, and no call reads several.
    found = await asyncio.gather(*(_baseline(up, i) for i in ids))
    return {str(b["id"]): b for b in found if b is not None}


async def _baseline(up: Upstreams, id: int) -> Mapping[str, Any] | None:
    try:
        reply = await up.baselines.baselines.GetBaseline(core_pb2.Id(id=id))
    except (NotFound, PermissionDenied):
        return None
    return representations.baseline(reply)


#: resource type -> one batch call that reads records of that type by id (the targets of
#: ``include``, and every type ``GET /rest/labs/records`` reads).
RESOLVERS: dict[str, Resolver] = {
    "users": _users,
    "usergroups": _groups,
    "projects": _projects,
    "itemtypes": _item_types,
    "picklists": _pick_lists,
    "picklistoptions": _pick_list_options,
    "relationshiptypes": _relationship_types,
    "items": _items,
    "relationships": _relationships,
    "tags": _tags,
    "releases": _releases,
    "comments": _comments,
    "testplans": _test_records(testmgmt_pb2.PLAN, representations.test_plan),
    "testcycles": _test_records(testmgmt_pb2.CYCLE, representations.test_cycle),
    "testruns": _test_records(testmgmt_pb2.RUN, representations.test_run),
    "attachments": _attachments,
    "baselines": _baselines,
}


def base_url(request: Request, public_url: str | None) -> str:
    """Scheme, host and context path the client used (or the configured public URL)."""
    if public_url:
        return public_url.rstrip("/")
    return f"{request.url.scheme}://{request.url.netloc}"


def links_for(
    resource: str,
    request: Request,
    version: str,
    public_url: str | None,
    extra: dict[str, str] | None = None,
) -> dict[str, LinkTemplate]:
    """The ``links`` map of a resource type (plus links of configured fields)."""
    base = base_url(request, public_url)
    return {
        path: {"type": target, "href": f"{base}/rest/{version}/{target}/{{{path}}}"}
        for path, target in {**LINKS[resource], **(extra or {})}.items()
    }


#: The shape of an ``include`` value: ``data.<member>`` or ``data.fields.<field name>``, any
#: depth (``data.location.parent.item``), each name of letters, digits, ``_`` and ``$``.
LINK_PATH = re.compile(r"data(?:\.[A-Za-z0-9_$]+)+")


def requested(
    include: Sequence[str], resource: str, extra: dict[str, str] | None = None
) -> list[str]:
    """The ``include`` values; only a malformed one is refused.

    A value that names a reference these records do not have is kept and ignored by
    ``resolve`` (clients ask for the same includes whatever a filter or search returns:
    items, test cases and runs alike). Malformed means neither a link of the resource
    (configured fields included, whatever their names) nor of the ``LINK_PATH`` shape.
    """
    values = [v.strip() for v in include if v.strip()]
    allowed = {**LINKS[resource], **(extra or {})}
    for value in values:
        if value not in allowed and not LINK_PATH.fullmatch(value):
            names = ", ".join(allowed) or "none"
            raise InvalidArgument(
                f"include: {value!r} is not a link path; a link path is data.<member> or "
                "data.fields.<field name> (names of letters, digits, _ and $ joined by dots); "
                f"the links of {resource} are: {names}"
            )
    return values


def _values(record: Mapping[str, Any], path: str) -> list[Any]:
    """Every value at a dotted path; lists along the way are walked element by element."""
    current: list[Any] = [record]
    for part in path.split(".")[1:]:
        step: list[Any] = []
        for value in current:
            for element in value if isinstance(value, list) else [value]:
                if isinstance(element, dict) and part in element:
                    step.append(element[part])
        current = step
    flat: list[Any] = []
    for value in current:
        flat.extend(value if isinstance(value, list) else [value])
    return flat


async def resolve(
    upstreams: Upstreams,
    resource: str,
    includes: list[str],
    records: Iterable[Mapping[str, Any]],
    extra: dict[str, str] | None = None,
    known: Mapping[str, Mapping[str, Mapping[str, Any]]] | None = None,
) -> dict[str, Any] | None:
    """The ``linked`` map: referenced records by type and id.

    ``known`` holds records the caller keeps anyway (the item types), by type and id;
    only ids it lacks are fetched.
    """
    if not includes:
        return None
    wanted: dict[str, set[int]] = {}
    records = list(records)
    links = {**LINKS[resource], **(extra or {})}
    for path in includes:
        target = links.get(path)
        if target is None:
            continue  # a reference these records do not have: nothing to include
        for record in records:
            for v in _values(record, path):
                if isinstance(v, int) and not isinstance(v, bool):
                    wanted.setdefault(target, set()).add(v)
    linked: dict[str, Any] = {}
    for target, ids in wanted.items():
        cached = (known or {}).get(target, {})
        linked[target] = {str(i): cached[str(i)] for i in ids if str(i) in cached}
        wanted[target] = {i for i in ids if str(i) not in cached}
    targets = [t for t, ids in wanted.items() if ids]
    found = await asyncio.gather(*(read_records(upstreams, t, sorted(wanted[t])) for t in targets))
    for target, fetched in zip(targets, found, strict=True):
        linked[target].update(fetched)
    return linked


async def read_records(
    upstreams: Upstreams, target: str, ids: list[int], dated: bool = False
) -> dict[str, Any]:
    """Records of type ``target`` by id (``RESOLVERS``). A record that is gone, or that
    the caller may not see (a batch of one refuses where a larger batch leaves it out),
    is left out, not an error."""
    try:
        return await RESOLVERS[target](upstreams, ids, dated)
    except (NotFound, PermissionDenied):
        return {}
