"""The files of a ``.reqifz`` import: each object's XHTML ``<object data="...">`` that
names a member of the archive (as Plumbline's export writes ``PL.Attachments``, and as
other tools reference a document's images) becomes an attachment of the object's item.

They are written after the bulk import has written the items, through the attachments
service as the caller: created in the project (named by the file), the file uploaded,
linked to each item that names it. A file an item has already (an attachment of the
same file name and content on it) is left as it is; one of the same name with other
content gets the new content, as ``PUT /attachments/{id}/file`` would. What fails there
leaves the items imported and the files written so far; importing the document again
finishes the rest, since what is there is left as it is.
"""

from __future__ import annotations

import hashlib
import io
import mimetypes
import posixpath
import zipfile
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import orjson

from plumbline.api.attachments.v1 import attachments_pb2 as pb
from plumbline.common.rpc import every_page
from plumbline.gateway import reqif_in
from plumbline.gateway.deps import Gateway
from plumbline.gateway.routes.files import send_file

#: Links read a page at a time.
_PAGE = 1_000
#: Bytes an upload message carries.
_CHUNK = 1024 * 1024


@dataclass
class File:
    """A member of the archive some items name."""

    path: str
    #: Its name in the archive (the path is normalised).
    member: str
    name: str
    mime_type: str
    sha256: str
    #: Items that get it as a new attachment: held items' ids, new items' keys.
    owners: list[int | str] = field(default_factory=list)


@dataclass
class Files:
    """What the import does with the archive's files."""

    #: New attachments, each linked to its owners.
    attached: list[File] = field(default_factory=list)
    #: Attachments already on an item (by id) whose file (same name) gets new content.
    replaced: dict[int, File] = field(default_factory=dict)
    unchanged: int = 0

    def counts(self) -> dict[str, int]:
        return {
            "attached": len(self.attached),
            "links": sum(len(f.owners) for f in self.attached),
            "replaced": len(self.replaced),
            "unchanged": self.unchanged,
        }


#: An item's attachments: (attachment id, file name, SHA-256).
Held = dict[int, list[tuple[int, str, str]]]


async def held(gw: Gateway, project: int) -> Held:
    """The project's attachments, by the item (or test record) they hang on."""
    found: Held = {}
    links = every_page(
        lambda page: gw.upstreams.attachments.links.ListProjectLinks(
            pb.ListProjectLinksRequest(project=project, page=page)
        ),
        lambda reply: reply.links,
        _PAGE,
    )
    async for link in links:
        found.setdefault(link.owner, []).append(
            (link.attachment.id, link.attachment.file_name, link.attachment.sha256)
        )
    return found


def planned(doc: reqif_in.Document, data: bytes, plan: reqif_in.Plan, attachments: Held) -> Files:
    """The files the document's items name that the archive holds, against what the
    project's items have already."""
    members = reqif_in.archive_members(data)
    found = Files()
    if not members:
        return found
    made: dict[str, File] = {}
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        for key, item in plan.item_of.items():
            obj = doc.objects.get(key)
            if obj is None:
                continue
            for path, mime_type in dict(obj.files).items():
                if path not in members:
                    continue
                file = made.get(path)
                if file is None:
                    name = posixpath.basename(path) or "file"
                    file = File(
                        path,
                        members[path],
                        name,
                        mime_type or mimetypes.guess_type(name)[0] or "application/octet-stream",
                        _sha256(archive, members[path]),
                    )
                    made[path] = file
                there = attachments.get(item, []) if isinstance(item, int) else []
                same = next((a for a in there if a[1] == file.name), None)
                if same is None:
                    file.owners.append(item)
                elif same[2] == file.sha256:
                    found.unchanged += 1
                else:
                    found.replaced[same[0]] = file
    found.attached = [f for f in made.values() if f.owners]
    return found


def _sha256(archive: zipfile.ZipFile, member: str) -> str:
    digest = hashlib.sha256()
    with archive.open(member) as opened:
        while data := opened.read(_CHUNK):
            digest.update(data)
    return digest.hexdigest()


async def write(gw: Gateway, project: int, data: bytes, files: Files, ids: dict[str, int]) -> None:
    """Creates, uploads and links the new attachments and replaces the changed files;
    ``ids`` gives the new items' ids by key."""
    if not (files.attached or files.replaced):
        return
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        for file in files.attached:
            created = await gw.upstreams.attachments.attachments.CreateAttachment(
                pb.AttachmentInput(project=project, fields_json=orjson.dumps({"name": file.name}))
            )
            await _upload(gw, archive, created.id, file)
            for owner in file.owners:
                item = owner if isinstance(owner, int) else ids[owner]
                await gw.upstreams.attachments.links.Link(
                    pb.LinkRequest(
                        owner=pb.Owner(id=item, project=project, noun="item"),
                        attachment=created.id,
                    )
                )
        for attachment, file in files.replaced.items():
            await _upload(gw, archive, attachment, file)


async def _upload(gw: Gateway, archive: zipfile.ZipFile, attachment: int, file: File) -> None:
    async def messages() -> AsyncIterator[pb.UploadChunk]:
        yield pb.UploadChunk(
            header=pb.UploadHeader(
                attachment=attachment, file_name=file.name, mime_type=file.mime_type
            )
        )
        with archive.open(file.member) as member:
            while data := member.read(_CHUNK):
                yield pb.UploadChunk(data=data)

    await send_file(gw, messages())
