"""An attachment's file: ``PUT``/``GET /attachments/{id}/file`` and ``GET /files?url=``.

Bytes are never held whole: an upload is parsed as it arrives and sent on to the
attachments service in chunks over a client-streamed call; a download is a server-streamed
call whose chunks go out as the response body. Both ways, gRPC's and the connection's flow
control keep a few chunks in memory at most, whatever the file's size.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import AsyncIterable, AsyncIterator
from typing import Annotated
from urllib.parse import urlsplit

from fastapi import APIRouter, Header, Query
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from plumbline.api.attachments.v1 import attachments_pb2 as pb
from plumbline.api.core.v1 import core_pb2
from plumbline.common import int64
from plumbline.common.errors import InvalidArgument, TooLarge, Unavailable, size_text
from plumbline.common.rpc import NO_DEADLINE
from plumbline.common.streams import read_ahead
from plumbline.gateway import schemas
from plumbline.gateway.deps import Gateway, Gw, Version
from plumbline.gateway.envelope import attachment_disposition, error, updated
from plumbline.gateway.uploads import FileUpload, Pace, send_stream

log = logging.getLogger(__name__)

router = APIRouter(prefix="/rest/{version}", tags=["attachments"])

_RANGE = re.compile(r"^\s*bytes\s*=\s*([0-9]*)\s*-\s*([0-9]*)\s*$", re.IGNORECASE)
#: The file URLs ``/files`` takes: this service's own, as links and clients build them.
_FILE_URL = re.compile(r"^(?:/rest/[^/]+)?/attachments?/(\d+)(?:/file|/.*)?$")
#: Multipart's own bytes around the file (boundaries, part headers) a body may add.
FORM_SLACK = 64 * 1024


def _upload_body() -> dict[str, object]:
    form = {
        "type": "object",
        "required": ["file"],
        "properties": {"file": {"type": "string", "format": "binary"}},
    }
    content = {"multipart/form-data": {"schema": form}}
    return {"requestBody": {"required": True, "content": content}}


@router.put(
    "/attachments/{attachmentId}/file",
    summary="Upload an attachment's file",
    description=(
        "Multipart form with the file in the part called file; the part's file name and "
        "content type are kept. A new upload replaces the file once it has fully arrived; "
        "until then the old one is served. Larger files than the service's limit "
        "(PLUMBLINE_MAX_UPLOAD_BYTES) answer 413. An upload takes no API slot and has no "
        "time limit while it keeps coming: each piece within PLUMBLINE_BODY_TIMEOUT of "
        "the previous one and at least PLUMBLINE_TRANSFER_MIN_RATE bytes a second over "
        "each PLUMBLINE_TRANSFER_RATE_WINDOW, else 408; a user may send "
        "PLUMBLINE_TRANSFER_PER_USER files and reports at once, one more is a 429."
    ),
    responses={**schemas.updated(), **schemas.errors(408, 413)},
    openapi_extra=_upload_body(),
)
async def upload(request: Request, attachmentId: int, gw: Gw) -> Response:
    limit = gw.settings.max_upload_bytes
    length = request.headers.get("content-length", "").strip()
    if length.isdigit() and int(length) > limit + FORM_SLACK:
        raise TooLarge(f"A file must be at most {size_text(limit)}; this body has {length} bytes.")
    # Refused before any of the body is read, let alone stored.
    await gw.upstreams.attachments.files.CheckUpload(core_pb2.Id(id=attachmentId))
    form = FileUpload(request, Pace.of(gw.settings))
    await form.open()

    async def messages() -> AsyncIterator[pb.UploadChunk]:
        yield pb.UploadChunk(
            header=pb.UploadHeader(
                attachment=attachmentId, file_name=form.file_name, mime_type=form.content_type
            )
        )
        size = 0
        try:
            async for data in read_ahead(form.chunks(1024 * 1024), depth=2):
                size += len(data)
                if size > limit:
                    raise TooLarge(f"A file must be at most {size_text(limit)}.")
                yield pb.UploadChunk(data=data)
        except Exception as exc:
            log.info("upload to attachment %d ended early: %s", attachmentId, exc)
            raise

    await send_file(gw, messages())
    return updated()


async def send_file(gw: Gateway, messages: AsyncIterator[pb.UploadChunk]) -> pb.FileInfo:
    """Streams an upload (its header, then its data) to the attachments service."""
    return await send_stream(
        gw.upstreams.attachments.files.Upload,
        messages,
        idle=gw.settings.body_timeout,
        answer_within=gw.settings.grpc_timeout,
        service="attachments",
    )


def _range(header: str | None) -> dict[str, int]:
    """The one range a ``Range`` header asks for, as the download request's members; an
    empty dict (the whole file) for none, several ranges or one that is malformed."""
    if not header:
        return {}
    match = _RANGE.match(header)
    if match is None:
        return {}
    first, last = match.group(1), match.group(2)
    if not first and not last:
        return {}
    for digits in (first, last):
        if digits and not int64.fits(_position(digits)):
            raise InvalidArgument(
                f"The Range header's byte positions must be at most {int64.MAX}; got "
                f"{_shown(digits)}."
            )
    if not first:
        return {"suffix_length": _position(last)}
    if last and _position(last) < _position(first):
        return {}
    return {"first": _position(first), **({"last": _position(last)} if last else {})}


def _position(digits: str) -> int:
    """A byte position's digits as a number (``int64.spelled``: never more digits
    converted than an int64 has, so thousands of them are just past the range)."""
    position = int64.spelled(digits)
    assert position is not None  # the Range pattern matched digits only
    return position


def _shown(digits: str) -> str:
    """A number for a message: a long one shortened, with its length."""
    return digits if len(digits) <= 40 else f"{digits[:20]}... ({len(digits)} digits)"


async def _arriving(
    call: AsyncIterable[pb.DownloadChunk], first: float, idle: float
) -> AsyncIterator[pb.DownloadChunk]:
    """``messages``, the first within ``first`` seconds and each next within ``idle`` of
    the one before; else 503 (or, once the file is going out, the connection is ended)."""
    messages, wait = aiter(call), first
    while True:
        try:
            async with asyncio.timeout(wait):
                message = await anext(messages, None)
        except TimeoutError:
            raise Unavailable(
                f"The attachments service sent no part of the file for {wait:g} seconds; "
                "try again shortly."
            ) from None
        if message is None:
            return
        yield message
        wait = idle


async def _download(
    gw: Gw, attachment: int, range_header: str | None, if_range: str | None
) -> Response:
    request = pb.DownloadRequest(attachment=attachment)
    for member, value in _range(range_header).items():
        setattr(request, member, value)
    if if_range is not None:
        request.if_range = if_range
    # No deadline for the whole download: it lasts while its pieces keep coming, each
    # within the body timeout (the client's side of it: ``GatewayMiddleware``).
    messages = _arriving(
        gw.upstreams.attachments.files.Download(request, timeout=NO_DEADLINE),
        gw.settings.grpc_timeout,
        gw.settings.body_timeout,
    )
    served = (await anext(messages)).served
    headers = {"ETag": f'"{served.file.sha256}"', "Accept-Ranges": "bytes"}
    if served.unsatisfiable:
        headers["Content-Range"] = f"bytes */{served.file.size}"
        message = (
            f"The range {range_header} lies outside the file, which has {served.file.size} bytes."
        )
        return error(416, message, headers)
    headers["Content-Disposition"] = attachment_disposition(served.file.file_name)
    headers["Content-Length"] = str(served.end - served.start)
    status = 200
    if served.partial:
        status = 206
        headers["Content-Range"] = f"bytes {served.start}-{served.end - 1}/{served.file.size}"

    async def body() -> AsyncIterator[bytes]:
        async for message in read_ahead(messages):
            yield message.data

    return StreamingResponse(
        body(), status_code=status, headers=headers, media_type="application/octet-stream"
    )


_FILE_RESPONSES = {
    200: {
        "description": "The file's bytes.",
        "content": {"application/octet-stream": {"schema": {"type": "string", "format": "binary"}}},
    },
    206: {
        "description": "The bytes of the range asked for.",
        "content": {"application/octet-stream": {"schema": {"type": "string", "format": "binary"}}},
    },
    **schemas.errors(400, 404, 416),
}

RangeHeader = Annotated[
    str | None,
    Header(
        alias="Range",
        description="One byte range: bytes=first-last. A position over 2^63-1 is a 400.",
    ),
]
IfRange = Annotated[
    str | None,
    Header(alias="If-Range", description="Serve the range only while the ETag still matches."),
]


@router.get(
    "/attachments/{attachmentId}/file",
    summary="Download an attachment's file",
    response_class=Response,
    responses=_FILE_RESPONSES,
)
async def download(
    attachmentId: int,
    gw: Gw,
    range_header: RangeHeader = None,
    if_range: IfRange = None,
) -> Response:
    return await _download(gw, attachmentId, range_header, if_range)


#: Ids are positive 64-bit integers; a larger number names no attachment.
_MAX_ID = 2**63 - 1


def _attachment_of(url: str, request: Request, version: str, public_url: str | None) -> int:
    """The attachment a ``url`` names: its file's URL on this service, or its id alone."""
    text = url.strip()
    if text.isascii() and text.isdigit():  # the id, as some clients pass it
        if len(text) > 19 or not 0 < int(text) <= _MAX_ID:
            raise InvalidArgument(
                f"url as an attachment's id must be from 1 to {_MAX_ID}; got {text[:40]!r}."
            )
        return int(text)
    parts = urlsplit(url)
    match = _FILE_URL.match(parts.path)
    elsewhere = parts.netloc and parts.netloc.lower() != request.url.netloc.lower()
    if elsewhere and (
        not public_url or urlsplit(public_url).netloc.lower() != parts.netloc.lower()
    ):
        match = None
    if match is None or len(match.group(1)) > 19 or int(match.group(1)) > _MAX_ID:
        raise InvalidArgument(
            f"url must be the URL of an attachment's file on this service, such as "
            f"{request.base_url}rest/{version}/attachments/<id>/file, or the attachment's id; "
            f"got {url!r}."
        )
    return int(match.group(1))


@router.get(
    "/files",
    summary="Download a file by its URL",
    description="The file of an attachment by the URL this service gives it "
    "(…/rest/v1/attachments/{id}/file, or …/attachment/{id}/…), or by the attachment's id "
    "alone (url=1004), as some clients pass it; the same access checks apply either way.",
    response_class=Response,
    responses=_FILE_RESPONSES,
)
async def download_by_url(
    request: Request,
    version: Version,
    gw: Gw,
    url: Annotated[
        str, Query(description="The file's URL, or its attachment's id.", max_length=4000)
    ],
    range_header: RangeHeader = None,
    if_range: IfRange = None,
) -> Response:
    attachment = _attachment_of(url, request, version, gw.settings.public_url)
    return await _download(gw, attachment, range_header, if_range)
