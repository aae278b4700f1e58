"""Attachments."""

from __future__ import annotations

from typing import Literal

from typing_extensions import TypedDict

from plumbline.gateway.records.common import Lock, TestRecordBase


class Attachment(TestRecordBase):
    """An attachment: ``fields`` holds ``name`` and ``description``; the file's name,
    content type and size are empty and 0 until a file is uploaded."""

    lock: Lock
    fileName: str
    mimeType: str
    fileSize: int
    type: Literal["attachments"]


class AttachmentLink(TypedDict):
    """An attachment on an item, test plan or test run of a project."""

    #: The item, test plan or test run it hangs on.
    owner: int
    attachment: Attachment
    #: Hex SHA-256 of its file (empty until one is uploaded).
    sha256: str
