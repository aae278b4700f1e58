"""Attachments."""

from __future__ import annotations

from typing import Literal

from plumbline.gateway.records.common import Lock, TestRecordBase


class Attachment(TestRecordBase):
    """An attachment: ``fields`` holds ``name`` and ``description``; the file's name,
    content type and size are empty and 0 until a file is uploaded."""

    lock: Lock
    fileName: str
    mimeType: str
    fileSize: int
    type: Literal["attachments"]
