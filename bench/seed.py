"""A realistic data set through items' own gRPC API (the code path behind the REST API)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from plumbline.api.core.v1 import core_pb2
from plumbline.api.items.v1 import items_pb2
from plumbline.common.context import ORG_ADMIN, Principal, principal_var
from plumbline.common.rpc import connect
from plumbline.gateway.upstreams import ItemsClient

PARALLEL = 8
#: Items per import (one transaction each).
BATCH = 10_000
#: Bytes per message of an import's stream.
CHUNK = 256 * 1024
#: Items of a project's folders: 4 areas, 5 folders in each.
FOLDERS = 4 * 6
#: A tenth of the requirements get this many versions in all (issue 25): the later ones
#: through the import's version lines, as a migration brings an item's history.
VERSIONS = 3

#: Each requirement's name holds one of these words, in turn: a search for one finds 2%
#: of the requirements, as a user's search for a feature or component would.
WORDS = [
    "login",
    "logout",
    "password",
    "session",
    "token",
    "export",
    "import",
    "report",
    "invoice",
    "payment",
    "refund",
    "order",
    "basket",
    "search",
    "filter",
    "sort",
    "upload",
    "download",
    "archive",
    "backup",
    "restore",
    "audit",
    "alert",
    "email",
    "notify",
    "schedule",
    "calendar",
    "profile",
    "avatar",
    "language",
    "currency",
    "tax",
    "shipping",
    "address",
    "map",
    "route",
    "sensor",
    "battery",
    "firmware",
    "display",
    "keyboard",
    "printer",
    "scanner",
    "camera",
    "license",
    "billing",
    "quota",
    "backlog",
    "release",
    "rollback",
]


@dataclass
class DataSet:
    """What the seed made."""

    projects: list[int] = field(default_factory=list)
    big_project: int = 0
    leaves: list[int] = field(default_factory=list)
    items: int = 0
    relationships: int = 0
    versions: int = 0


class Seeder:
    """Grows the data set in steps (2,000 items, then 20,000...)."""

    def __init__(self, items_address: str) -> None:
        # Every task the loop starts from here on calls as the organization admin.
        principal_var.set(Principal(1, "admin", frozenset({ORG_ADMIN})))
        self.client = ItemsClient(connect("items", items_address))
        self.data = DataSet()
        self.types: dict[str, int] = {}
        self.folders: dict[int, list[int]] = {}
        self.tags: dict[int, list[int]] = {}

    async def start(self) -> None:
        reply = await self.client.configuration.ListItemTypes(
            items_pb2.ListItemTypesRequest(page=core_pb2.Page(start_at=0, max_results=50))
        )
        self.types = {t.type_key: t.id for t in reply.item_types}
        # One big project (for deep pages) and two smaller ones.
        for key in ("BIG", "ALPHA", "BETA"):
            created = await self.client.projects.CreateProject(
                items_pb2.ProjectInput(
                    project_key=key, fields_json=json.dumps({"name": key}).encode()
                )
            )
            self.data.projects.append(created.id)
        self.data.big_project = self.data.projects[0]
        for project in self.data.projects:
            self.folders[project] = await self._folders(project)
            self.tags[project] = [
                (
                    await self.client.tags.CreateTag(
                        items_pb2.TagInput(name=f"tag{t}", project=project)
                    )
                ).id
                for t in range(10)
            ]

    def _input(
        self, project: int, parent: int | None, type_key: str, name: str
    ) -> items_pb2.ItemInput:
        message = items_pb2.ItemInput(
            project=project,
            item_type=self.types[type_key],
            fields_json=json.dumps(
                {"name": name, "description": f"<p>{name} shall work.</p>"}
            ).encode(),
        )
        if parent is not None:
            message.parent_item = parent
        return message

    def _line(self, parent: int | None, type_key: str, name: str) -> bytes:
        """An item line of an import: a named item with a description."""
        fields = {"name": name, "description": f"<p>{name} shall work.</p>"}
        return self._line_of(parent, type_key, fields)

    def _line_of(
        self, parent: int | None, type_key: str, fields: dict[str, Any], key: str | None = None
    ) -> bytes:
        line: dict[str, Any] = {"itemType": self.types[type_key], "fields": fields}
        if key is not None:
            line["key"] = key
        if parent is not None:
            line["parent"] = parent
        return json.dumps(line).encode() + b"\n"

    def _versions(self, n: int, folder: int) -> tuple[bytes, list[bytes]]:
        """Requirement ``n``'s item line and, for a tenth of them, its later versions."""
        name = f"Requirement {n} {WORDS[n % len(WORDS)]}"
        if n % 10 != 5:
            return self._line(folder, "REQ", name), []
        first = {"name": name, "description": f"<p>{name} shall work.</p>"}
        line = self._line_of(folder, "REQ", first, key=str(n))
        later = [
            json.dumps(
                {"item": str(n), "fields": {**first, "description": f"<p>{name}, {v}.</p>"}}
            ).encode()
            + b"\n"
            for v in range(2, VERSIONS + 1)
        ]
        return line, later

    async def import_items(self, project: int, lines: list[bytes]) -> int:
        """Imports the item ``lines`` into ``project``; the first new id (the k-th line's
        item has that + k)."""
        if not lines:
            return 0

        async def chunks() -> AsyncIterator[items_pb2.ImportChunk]:
            yield items_pb2.ImportChunk(project=project)
            pending: list[bytes] = []
            size = 0
            for line in lines:
                pending.append(line)
                size += len(line)
                if size >= CHUNK:
                    yield items_pb2.ImportChunk(data=b"".join(pending))
                    pending, size = [], 0
            if pending:
                yield items_pb2.ImportChunk(data=b"".join(pending))

        reply = await self.client.projects.ImportItems(chunks(), timeout=3600)
        if reply.bad_count:
            raise RuntimeError(f"the seed's import was refused: {list(reply.bad)[:3]}")
        return int(reply.first_item_id)

    async def _item(self, project: int, parent: int | None, type_key: str, name: str) -> int:
        created = await self.client.items.CreateItem(self._input(project, parent, type_key, name))
        self.data.items += 1
        return int(created.id)

    async def _folders(self, project: int) -> list[int]:
        """4 areas of 5 folders each (``FOLDERS`` items); the 20 folders' ids."""
        folders = []
        for r in range(4):
            root = await self._item(project, None, "FLD", f"Area {r}")
            for s in range(5):
                folders.append(await self._item(project, root, "FLD", f"Area {r}.{s}"))
        return folders

    async def grow_to(self, total: int) -> None:
        """Adds requirements (70% in the big project) until ``total`` items exist.

        Items go in through the bulk import (``ImportItems``, what ``POST
        /rest/labs/projects/{id}/import`` calls), one import per project and batch, a
        tenth of them with ``VERSIONS`` versions (version lines); relationships through
        the bulk create; comments and tags one by one, as clients add them.
        """
        start = self.data.items
        semaphore = asyncio.Semaphore(PARALLEL)
        for first in range(start, total, BATCH):
            numbers = range(first, min(first + BATCH, total))
            placed = []
            for n in numbers:
                project = self.data.projects[0] if n % 10 < 7 else self.data.projects[1 + n % 2]
                folders = self.folders[project]
                placed.append((n, project, folders[n % len(folders)]))
            ids: dict[int, int] = {}
            for project in self.data.projects:
                mine = [(n, folder) for n, p, folder in placed if p == project]
                lines, later = [], []
                for n, folder in mine:
                    line, versions = self._versions(n, folder)
                    lines.append(line)
                    later += versions
                first_id = await self.import_items(project, lines + later)
                self.data.versions += len(later)
                ids.update((n, first_id + k) for k, (n, _) in enumerate(mine))
            leaves = [ids[n] for n, _, _ in placed]
            self.data.items += len(leaves)
            pairs = [
                items_pb2.RelationshipInput(from_item=leaves[i - 1], to_item=leaves[i])
                for i, (n, _, _) in enumerate(placed)
                if n % 2 == 0 and i > 0
            ]
            if pairs:
                # Thousands at once: on a busy machine more than the default deadline.
                await self.client.relationships.CreateRelationships(
                    items_pb2.RelationshipInputList(relationships=pairs), timeout=3600
                )
                self.data.relationships += len(pairs)

            async def annotate(n: int, project: int, item: int) -> None:
                async with semaphore:
                    if n % 10 == 0:
                        await self.client.comments.CreateComment(
                            items_pb2.CommentInput(
                                text=f"Comment on {n}", comment_type="GENERAL", item=item
                            )
                        )
                    if n % 50 == 0:
                        tag = self.tags[project][n % len(self.tags[project])]
                        await self.client.tags.TagItem(items_pb2.ItemTag(item=item, tag=tag))

            await asyncio.gather(
                *(
                    annotate(n, project, leaf)
                    for (n, project, _), leaf in zip(placed, leaves, strict=True)
                    if n % 10 == 0
                )
            )
            self.data.leaves.extend(leaves)

    async def project_of(self, key: str, total: int) -> tuple[int, list[int]]:
        """A project of ``total`` items: 4 areas of 5 folders, and requirements under the
        folders in turn through the bulk import. Its id and the requirements' ids."""
        project = (
            await self.client.projects.CreateProject(
                items_pb2.ProjectInput(
                    project_key=key, fields_json=json.dumps({"name": key}).encode()
                )
            )
        ).id
        folders = await self._folders(project)
        count = total - FOLDERS
        requirements: list[int] = []
        for first in range(0, count, BATCH):
            numbers = range(first, min(first + BATCH, count))
            lines = [
                self._line(
                    folders[n % len(folders)], "REQ", f"Requirement {n} {WORDS[n % len(WORDS)]}"
                )
                for n in numbers
            ]
            first_id = await self.import_items(project, lines)
            requirements.extend(range(first_id, first_id + len(lines)))
        self.data.items += len(requirements)
        return int(project), requirements

    async def test_cases(self, project: int, count: int, prefix: str) -> list[int]:
        """``count`` test cases (item type TC) of three steps each, named
        ``{prefix} {n}``, through the bulk import; returns their ids in order."""
        created: list[int] = []
        for first in range(0, count, BATCH):
            lines = [
                self._line_of(
                    None,
                    "TC",
                    {
                        "name": f"{prefix} {n}",
                        "testCaseSteps": [
                            {
                                "action": f"Step {s} of {prefix} {n}",
                                "expectedResult": f"Step {s} works",
                                "notes": f"note {s}",
                            }
                            for s in range(1, 4)
                        ],
                    },
                )
                for n in range(first, min(first + BATCH, count))
            ]
            first_id = await self.import_items(project, lines)
            created.extend(range(first_id, first_id + len(lines)))
        self.data.items += len(created)
        return created

    async def close(self) -> None:
        await self.client.channel.close()
